/**
 * Starts the mock server from its CLI with examples/mock-server.json, as a user would
 * (`npx limited-client-server --config examples/mock-server.json`), then talks to it:
 * a burst against a GCRA limit, and a payment whose connection drops after it was charged,
 * retried with its Idempotency-Key. Ctrl-C (SIGINT) stops the server.
 *
 *   npm run demo:server
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { parseRateLimitHeaders } from 'limited-client';

const root = new URL('..', import.meta.url).pathname;
const built = `${root}dist/server/cli.js`;
const cli = existsSync(built) ? [built] : ['--import', 'tsx', `${root}src/server/bin.ts`];
const server = spawn(
  process.execPath,
  [...cli, '--config', `${root}examples/mock-server.json`, '--port', '0'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
server.stdout.setEncoding('utf8');
server.stdout.on('data', (text: string) => process.stdout.write(`  [server] ${text}`));
const url = await new Promise<string>((resolve) => {
  server.stdout.on('data', (text: string) => {
    const found = /listening on (\S+)/.exec(text);
    if (found) resolve(found[1] as string);
  });
});

console.log('A burst of 6 against "items" (2/s, burst 3) and "per-ip" (20, 10/s):');
for (let i = 1; i <= 6; i++) {
  const response = await fetch(`${url}/items/${i}`);
  const info = parseRateLimitHeaders(response.headers);
  console.log(
    `  GET /items/${i} -> ${response.status}  policy=${info?.policy} remaining=${info?.remaining}` +
      (response.status === 429 ? ` retry after ${info?.retryAfterMs} ms` : ''),
  );
}

console.log('A payment whose connection drops after the charge, retried with the same key:');
const pay = () =>
  fetch(`${url}/payments`, {
    method: 'POST',
    headers: { 'idempotency-key': 'order-42', 'content-type': 'application/json' },
    body: JSON.stringify({ amount: 1999 }),
  });
await pay().catch((error: Error) =>
  console.log(`  first attempt: ${error.message} (${error.cause})`),
);
const retry = await pay();
const body = (await retry.json()) as { execution: number };
console.log(
  `  retry -> ${retry.status}, replayed=${retry.headers.get('idempotent-replayed')}, charge #${body.execution}`,
);

server.kill('SIGINT');
await new Promise((resolve) => server.on('exit', resolve));

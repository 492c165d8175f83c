/**
 * The client as users load it: the built package, by name, in a separate Node process, with
 * `import` and with `require` (runs after `npm run build`, part of `npm test`).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const node = (args: string[]) =>
  execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }).trim();

// A stub fetch that answers 429 once, then 200: the call goes through the pipeline and a retry.
const script = (load: string) => `
  ${load}
  let n = 0;
  const stub = async () => new Response('x', n++ === 0
    ? { status: 429, headers: { 'retry-after-ms': '5' } }
    : { status: 200, headers: { 'ratelimit-policy': '"p";q=10;w=1', ratelimit: '"p";r=9;t=1' } });
  const client = new LimitedClient('https://api.example.com', { fetch: stub });
  const fetch = wrapFetch(stub);
  (async () => {
    const a = await client.post('/x', { a: 1 });
    const b = await fetch('https://api.example.com/y');
    const s = client.stats().hosts['https://api.example.com'];
    console.log(a.status, b.status, s.retries, s.mode, DEFAULTS.retry.retries);
    await client.close();
    await fetch.close();
  })();`;

describe('the built client', () => {
  it('works from ESM', () => {
    const out = node([
      '--input-type=module',
      '-e',
      script(`import { LimitedClient, wrapFetch, DEFAULTS } from 'limited-client';`),
    ]);
    expect(out).toBe('200 200 1 declared 3');
  });

  it('works from CommonJS', () => {
    const out = node([
      '-e',
      script(`const { LimitedClient, wrapFetch, DEFAULTS } = require('limited-client');`),
    ]);
    expect(out).toBe('200 200 1 declared 3');
  });
});

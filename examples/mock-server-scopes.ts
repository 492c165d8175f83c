/**
 * One host, many budgets: the mock server in each dialect that names a budget, from the four
 * example configurations (each also runs from the CLI:
 * `npx limited-client-server --config examples/mock-server-github.json`):
 *
 * - GitHub: `core` and `search` resources (`x-ratelimit-resource`);
 * - Discord: a bucket per channel under one bucket hash, and a global limit;
 * - OpenAI: requests and tokens per model, the model read from the JSON body;
 * - IETF: a policy per route, a partition key (`pk`) per API key.
 *
 *   npx tsx examples/mock-server-scopes.ts
 */
import { readFile } from 'node:fs/promises';
import { parseRateLimitHeaders } from 'limited-client';
import { createMockServer, type MockServerConfig } from 'limited-client/server';

const examples = new URL('.', import.meta.url);

/** Starts the mock server from one of the example files, on a free port. */
async function start(file: string) {
  const config = JSON.parse(await readFile(new URL(file, examples), 'utf8')) as MockServerConfig;
  return createMockServer({ ...config, port: 0 });
}

/** Sends a request and prints its status and the rate-limit fields it carried. */
async function show(url: string, init: RequestInit = {}, label = '') {
  const response = await fetch(url, init);
  const body = await response.text();
  const fields = [...response.headers]
    .filter(([name]) => /ratelimit|retry-after/i.test(name))
    .map(([name, value]) => `${name}: ${value}`);
  const info = parseRateLimitHeaders(response.headers);
  console.log(`  ${label || new URL(url).pathname} -> ${response.status}`);
  for (const line of fields) console.log(`      ${line}`);
  console.log(`      (read as ${info?.source}, policy ${info?.policy ?? '-'})`);
  if (response.status === 429 && body !== '') console.log(`      body: ${body}`);
}

const token = { authorization: 'Bearer example' };

console.log('GitHub: two resources, each its own budget');
const github = await start('mock-server-github.json');
await show(`${github.url}/search/code?q=limit`, { headers: token });
await show(`${github.url}/repos/octo/hello`, { headers: token });
await github.close();

console.log('Discord: one bucket hash, a budget per channel; a global limit');
const discord = await start('mock-server-discord.json');
const post = { method: 'POST', headers: token };
for (let i = 0; i < 5; i++) await fetch(`${discord.url}/channels/1/messages`, post);
await show(`${discord.url}/channels/1/messages`, post, 'channel 1, sixth message');
await show(`${discord.url}/channels/2/messages`, post, 'channel 2, first message');
await discord.close();

console.log('OpenAI: requests and tokens per model, from the JSON body');
const openai = await start('mock-server-openai.json');
const ask = (model: string, max_tokens: number) => ({
  method: 'POST',
  headers: { ...token, 'content-type': 'application/json' },
  body: JSON.stringify({ model, max_tokens, messages: [] }),
});
await show(`${openai.url}/v1/chat/completions`, ask('gpt-a', 30_000), 'gpt-a, 30000 tokens');
await show(`${openai.url}/v1/chat/completions`, ask('gpt-a', 20_000), 'gpt-a, 20000 more');
await show(`${openai.url}/v1/chat/completions`, ask('gpt-b', 20_000), 'gpt-b, 20000 tokens');
await openai.close();

console.log('IETF: a policy per route, a partition key per API key');
const ietf = await start('mock-server-ietf.json');
await show(`${ietf.url}/search`, { headers: token }, '/search, one key');
await show(
  `${ietf.url}/search`,
  { headers: { authorization: 'Bearer other' } },
  '/search, another',
);
await show(`${ietf.url}/repos/octo/hello`, { headers: token });
await ietf.close();

/**
 * Issue 24, item 9, over real HTTP: with `cors: true` (`exposeHeaders: true`), every field a route
 * sends is exposed to a page, whatever its header family: OpenAI's six
 * `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` were left out of a hand-written list.
 * The list now comes from the header writer itself; this checks it against what is sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMockServer,
  type HeaderFamily,
  type MockServer,
  type MockServerConfig,
} from '../../src/server/index.js';

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(cors: MockServerConfig['cors'], extra: Partial<MockServerConfig>) {
  server = await createMockServer({ cors, routes: [], ...extra } as MockServerConfig);
  return server;
}

function exposed(response: Response): string[] {
  return (response.headers.get('access-control-expose-headers') ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

describe('cors: true exposes every field a route sends, whatever its header family', () => {
  // Issue 24, item 9: OpenAI's six x-ratelimit-*-{requests,tokens} fields were left out.
  it('an openai route: its six fields, per unit', async () => {
    const { url } = await start(true, {
      routes: [
        {
          method: 'POST',
          path: '/v1/chat/completions',
          headers: 'openai',
          limits: [
            { algorithm: 'token-bucket', capacity: 10, refillPerSecond: 10, name: 'requests' },
            {
              algorithm: 'fixed-window',
              limit: 600,
              windowMs: 10_000,
              unit: 'tokens',
              name: 'tokens',
            },
          ],
        },
      ],
    });
    const response = await fetch(`${url}/v1/chat/completions`, { method: 'POST' });
    expect(response.headers.get('x-ratelimit-remaining-tokens')).toBe('599');
    expect(exposed(response)).toEqual(
      expect.arrayContaining([
        'x-ratelimit-limit-requests',
        'x-ratelimit-limit-tokens',
        'x-ratelimit-remaining-requests',
        'x-ratelimit-remaining-tokens',
        'x-ratelimit-reset-requests',
        'x-ratelimit-reset-tokens',
      ]),
    );
  });

  const families: HeaderFamily[] = ['ietf', 'draft-7', 'draft-6', 'x-ratelimit', 'openai'];
  it.each(families)('%s: every field of an answer and of a 429 is exposed', async (family) => {
    const { url } = await start(true, {
      routes: [
        {
          path: '/x',
          headers: family,
          limits: [
            { algorithm: 'fixed-window', limit: 1, windowMs: 60_000, name: 'calls' },
            { algorithm: 'gcra', rate: 100, burst: 10, unit: 'tokens', name: 'tokens' },
            { algorithm: 'concurrency', limit: 4, name: 'slots' },
          ],
          response: { headers: { 'X-Own': 'yes' } },
        },
      ],
    });
    const sent = new Set<string>();
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`${url}/x`, { headers: { 'idempotency-key': `k${i}` } });
      await response.arrayBuffer();
      if (i === 1) expect(response.status).toBe(429);
      const names = exposed(response).map((name) => name.toLowerCase());
      response.headers.forEach((_value, name) => {
        sent.add(name);
        if (SAFELISTED.has(name) || name.startsWith('access-control-')) return;
        expect(names, `${family}: ${name}`).toContain(name);
      });
    }
    expect(sent.size).toBeGreaterThan(SAFELISTED.size);
  });
});

/** Fields a browser shows a page without being told, and the framing ones it never needs. */
const SAFELISTED = new Set([
  'cache-control',
  'content-language',
  'content-length',
  'content-type',
  'expires',
  'last-modified',
  'pragma',
  'connection',
  'keep-alive',
  'vary',
]);

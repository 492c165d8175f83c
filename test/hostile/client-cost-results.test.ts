/**
 * Issue 24, item 10, over real HTTP against the mock server's OpenAI-style route (requests and
 * tokens): a cost is checked strictly. An `async` cost function (its Promise), a `Date` or any
 * object that is not plain is an `InvalidOptionError` naming the option, never `{ requests: 1 }`
 * (which charged no tokens); a getter is read once and the cost is what was read and checked (a
 * getter that answers -5 the second time cannot get a negative cost through); the message states
 * the real bound (1e9), not "Infinity". Nothing is sent for a refused call.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidOptionError, isInvalidOptionError, wrapFetch } from '../../src/index.js';
import { closeAll, start } from '../client/integration/server.js';

afterAll(closeAll);

async function openAiServer() {
  const server = await start({
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
            cost: { json: 'max_tokens', default: 1 },
          },
        ],
      },
    ],
  });
  return { server, url: `${server.url}/v1/chat/completions` };
}

const chat = {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: '{"max_tokens":50}',
};

describe('cost results are checked strictly', () => {
  it.each([
    ['an async cost function', async () => ({ requests: 1, tokens: 50 }), 'not a Promise'],
    ['a Date', () => new Date(), 'as a plain object'],
    [
      'a class instance',
      () =>
        new (class Cost {
          requests = 1;
          tokens = 50;
        })(),
      'as a plain object',
    ],
    ['a Map', () => new Map([['tokens', 50]]), 'as a plain object'],
  ])('%s is an InvalidOptionError, nothing sent', async (_name, cost, says) => {
    const { server, url } = await openAiServer();
    const fetch = wrapFetch(undefined, { cost: cost as never });
    const error = await fetch(url, chat).catch((e: unknown) => e);
    expect(isInvalidOptionError(error)).toBe(true);
    expect((error as InvalidOptionError).option).toBe('cost');
    expect((error as Error).message).toContain(says);
    expect(server.stats().admitted).toBe(0);
    await fetch.close();
  });

  it('a Date as the option itself, or as a call own cost, is refused', async () => {
    const { server, url } = await openAiServer();
    expect(() => wrapFetch(undefined, { cost: new Date() as never })).toThrow(
      'invalid option cost: must be a number from 0 to 1000000000, or { requests, tokens, ... } as a plain object',
    );
    const fetch = wrapFetch();
    const error = await fetch(url, { ...chat, cost: new Date() as never }).catch((e) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).option).toBe('init.cost');
    expect(server.stats().admitted).toBe(0);
    await fetch.close();
  });

  it('a getter is read once, and the cost is what was read: -5 the second time never counts', async () => {
    const { server, url } = await openAiServer();
    let reads = 0;
    const cost = {
      requests: 1,
      get tokens() {
        reads++;
        return reads === 1 ? 50 : -5;
      },
    };
    const fetch = wrapFetch();
    const sent = fetch(url, { ...chat, cost });
    // In flight: the tokens policy is not known yet; the call goes, charged as read.
    const response = await sent;
    expect(response.status).toBe(200);
    expect(reads).toBe(1);
    // A second call on the learned policy: charged 50 again (read once more), never -5.
    reads = 0;
    expect((await fetch(url, { ...chat, cost })).status).toBe(200);
    expect(reads).toBe(1);
    const tokens = fetch.stats().hosts[server.url]?.policies.find((p) => p.name === 'tokens');
    expect(tokens?.remaining).toBe(500);
    await fetch.close();
  });

  it('the same through a cost function that returns an object with a getter', async () => {
    const { url } = await openAiServer();
    let reads = 0;
    const fetch = wrapFetch(undefined, {
      cost: () => ({
        get tokens() {
          reads++;
          return reads === 1 ? 50 : -5;
        },
      }),
    });
    expect((await fetch(url, chat)).status).toBe(200);
    expect(reads).toBe(1);
    await fetch.close();
  });

  it('states the real bound, 1e9, not Infinity', async () => {
    const { server, url } = await openAiServer();
    const fetch = wrapFetch(undefined, { cost: () => 1e308 });
    const error = await fetch(url, chat).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      `POST ${url}: invalid option cost: must return a number from 0 to 1000000000, got 1e+308`,
    );
    const bucketed = wrapFetch(undefined, { rate: 5, cost: () => 6 });
    const past = await bucketed(url, chat).catch((e: unknown) => e);
    expect((past as Error).message).toContain(
      "must return a number from 0 to 5 (the host's burst), got 6",
    );
    expect(server.stats().admitted).toBe(0);
    await Promise.all([fetch.close(), bucketed.close()]);
  });
});

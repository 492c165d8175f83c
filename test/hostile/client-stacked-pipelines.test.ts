/**
 * Issue 24, item 11, over real HTTP: a pipeline on top of another (`wrapFetch(wrapFetch(fetch))`,
 * a `LimitedClient` over `globalThis.fetch = wrapFetch()`, a `wrapFetch` over a client's `fetch`)
 * passes its calls through to the inner one instead of running its own, so a 503 is attempted
 * 1 + retries times, not (1 + retries)², and comes back as the 503, not as the inner breaker's
 * `CircuitOpenError`. A cycle (the global fetch wrapping a wrapper of itself) runs one pipeline.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { LimitedClient, wrapFetch } from '../../src/index.js';
import type { MockServer } from '../../src/server/index.js';
import { closeAll, start } from '../client/integration/server.js';

afterAll(closeAll);

const nativeFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = nativeFetch;
});

/** A route that answers 503 (no Retry-After) before its side effect, every time. */
async function down(): Promise<MockServer> {
  return start({ routes: [{ path: '*', faults: { unavailable: {} } }] });
}

/** Attempts the server saw. */
const attempts = (server: MockServer) => server.stats().routes['* *']?.unavailable ?? 0;

describe('stacked pipelines run one pipeline', () => {
  it('wrapFetch(wrapFetch(fetch)): a 503 is attempted 1 + retries times, and comes back as the 503', async () => {
    const server = await down();
    const inner = wrapFetch(nativeFetch, { retry: { retries: 3, maxDelayMs: 20 } });
    const outer = wrapFetch(inner, { retry: { retries: 3, maxDelayMs: 20 } });
    // Stacked, the outer retried the inner's 503 and the inner breaker (5 failures in a row)
    // opened: the call rejected with CircuitOpenError after 5 attempts and more.
    expect((await outer(`${server.url}/x`)).status).toBe(503);
    expect(attempts(server)).toBe(4);
    // The inner pipeline ran the call; the outer one has nothing of its own.
    expect(inner.stats().totals).toMatchObject({ requests: 1, attempts: 4 });
    expect(outer.stats().totals.requests).toBe(0);
    await Promise.all([inner.close(), outer.close()]);
  });

  it('a LimitedClient over globalThis.fetch = wrapFetch(): the same, with its base URL, headers and JSON body', async () => {
    const server = await start({
      routes: [
        { method: 'POST', path: '/echo' },
        { path: '*', faults: { unavailable: {} } },
      ],
    });
    const global = wrapFetch(undefined, { retry: { retries: 3, maxDelayMs: 20 } });
    globalThis.fetch = global;
    const client = new LimitedClient(`${server.url}/`, { headers: { 'x-team': 'a' } });
    expect((await client.get('/x')).status).toBe(503);
    expect(server.stats().routes['* *']?.unavailable).toBe(4);
    const echoed = await client.post('/echo', { amount: 1 }, { headers: { 'x-call': 'b' } });
    expect(echoed.status).toBe(200);
    expect(await echoed.json()).toMatchObject({ body: { amount: 1 } });
    // A call's own options go through to the pipeline that runs it.
    expect((await client.get('/y', { retry: false })).status).toBe(503);
    expect(server.stats().routes['* *']?.unavailable).toBe(5);
    expect(global.stats().totals.requests).toBe(3);
    await Promise.all([client.close(), global.close()]);
  });

  it("the client's headers reach the server through the inner pipeline", async () => {
    const received: string[] = [];
    const server = await start({ routes: [{ path: '*' }] });
    const spy = ((input: RequestInfo | URL, init?: RequestInit) => {
      received.push(new Headers(init?.headers).get('x-team') ?? 'none');
      return nativeFetch(input, init);
    }) as typeof fetch;
    const inner = wrapFetch(spy);
    const client = new LimitedClient(server.url, { fetch: inner, headers: { 'x-team': 'a' } });
    expect((await client.get('/x')).status).toBe(200);
    expect(received).toEqual(['a']);
    await Promise.all([client.close(), inner.close()]);
  });

  it('wrapFetch over a LimitedClient fetch: one pipeline', async () => {
    const server = await down();
    const client = new LimitedClient(server.url, { retry: { retries: 2, maxDelayMs: 20 } });
    const outer = wrapFetch(client.fetch);
    expect((await outer(`${server.url}/x`)).status).toBe(503);
    expect(attempts(server)).toBe(3);
    await Promise.all([client.close(), outer.close()]);
  });

  it('a cycle (the global fetch wraps a wrapper of the global fetch) ends: one pipeline runs', async () => {
    const server = await down();
    const a = wrapFetch(undefined, { retry: { retries: 3, maxDelayMs: 20 } });
    const b = wrapFetch(a, { retry: { retries: 3, maxDelayMs: 20 } });
    globalThis.fetch = b;
    expect((await a(`${server.url}/x`)).status).toBe(503);
    expect(attempts(server)).toBe(4);
    await Promise.all([a.close(), b.close()]);
  });

  it('a closed outer pipeline refuses, whatever is under it', async () => {
    const server = await down();
    const inner = wrapFetch(nativeFetch);
    const outer = wrapFetch(inner);
    await outer.close();
    await expect(outer(`${server.url}/x`)).rejects.toMatchObject({ code: 'ERR_CLIENT_CLOSED' });
    expect(attempts(server)).toBe(0);
    await inner.close();
  });
});

/**
 * Found by the hostile property (`client-headers.property.test.ts`): a host's pipeline evicted
 * (past `maxHosts`) while one of its calls was between an attempt and its retry. For those few
 * turns the call held no slot, waited in no line and slept on no timer, so the pipeline did not
 * count as busy; the call then rejected with `ClientClosedError` ("client closed") although nobody
 * closed the client. A call under way keeps its pipeline, whatever it is doing.
 */
import { describe, expect, it } from 'vitest';
import { wrapFetch } from '../../src/index.js';

describe('a pipeline with a call between two attempts', () => {
  it('is not evicted: the call retries and resolves, and the other host is served too', async () => {
    let sentToA = 0;
    const fetch = wrapFetch(
      async (input) => {
        const url = String(input instanceof Request ? input.url : input);
        if (url.startsWith('http://a.example') && sentToA++ === 0) {
          return new Response('busy', { status: 503 });
        }
        return new Response('ok');
      },
      { maxHosts: 1, coldStart: false, retry: { baseDelayMs: 1, maxDelayMs: 1 } },
    );
    // Another host's call made the moment host a's retry is planned: the registry is over
    // maxHosts, and host a is at the front of its recency order.
    let other: Promise<number> | undefined;
    fetch.on('retry', () => {
      other ??= fetch('http://b.example/').then((r) => r.status);
    });
    const a = await fetch('http://a.example/x').then(
      (r) => r.status,
      (e: unknown) => `${(e as Error).name}: ${(e as Error).message}`,
    );
    expect(a).toBe(200);
    expect(sentToA).toBe(2);
    expect(await other).toBe(200);
    await fetch.close();
  });
});

describe('a new host while every other host is busy', () => {
  it('gets its own pipeline and is served, past maxHosts, instead of being evicted at once', async () => {
    let release: () => void = () => {};
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    const fetch = wrapFetch(
      async (input) => {
        const url = String(input instanceof Request ? input.url : input);
        if (url.startsWith('http://a.example')) await slow;
        return new Response('ok');
      },
      { maxHosts: 1, coldStart: false },
    );
    // A long poll keeps host a busy; then a call to host b.
    const poll = fetch('http://a.example/poll').then((r) => r.status);
    await new Promise((resolve) => setImmediate(resolve));
    const b = await fetch('http://b.example/x').then(
      (r) => r.status,
      (e: unknown) => `${(e as Error).name}: ${(e as Error).message}`,
    );
    expect(b).toBe(200);
    release();
    expect(await poll).toBe(200);
    await fetch.close();
  });
});

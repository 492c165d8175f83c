/**
 * A caller's signal shared by many calls (a shutdown signal) must not collect a listener per call,
 * and must still reach a response body being read after the call returned.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { AbortScope } from '../../src/client/call/signals.js';
import { LimitedClient } from '../../src/index.js';
import { FakeClock } from './helpers.js';

/** A fetch whose body stays open until the attempt's signal aborts it. */
const openBodyFetch = (async (_input: RequestInfo | URL, init?: RequestInit) => {
  const signal = init?.signal ?? undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('partial'));
      signal?.addEventListener('abort', () => controller.error(signal.reason), { once: true });
    },
  });
  return new Response(body, { status: 200 });
}) as typeof fetch;

describe('following a shared signal', () => {
  it('costs it one listener over thousands of calls with timeouts, and still aborts a body being read', async () => {
    const clock = new FakeClock();
    const client = new LimitedClient('https://api.example.com', {
      fetch: openBodyFetch,
      clock,
      coldStart: false,
      timeoutMs: 30_000,
      attemptTimeoutMs: 10_000,
    });
    const shutdown = new AbortController();
    for (let i = 0; i < 2000; i++) {
      const response = await client.get('/x', { signal: shutdown.signal });
      await response.body?.cancel();
    }
    expect(getEventListeners(shutdown.signal, 'abort').length).toBeLessThanOrEqual(1);
    expect(clock.pending).toBe(0);

    const open = await client.get('/y', { signal: shutdown.signal });
    const reading = open.text();
    shutdown.abort(new Error('shutting down'));
    await expect(reading).rejects.toThrow('shutting down');
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
  });

  it('a scope disposed without keeping its parent unlinks at once', () => {
    const parent = new AbortController();
    const scopes = Array.from({ length: 50 }, () => new AbortScope(parent.signal));
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    for (const scope of scopes) scope.dispose();
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    const kept = new AbortScope(parent.signal);
    kept.dispose(true);
    parent.abort('stop');
    expect(kept.signal.aborted).toBe(true);
    expect(kept.signal.reason).toBe('stop');
    expect(scopes[0]?.signal.aborted).toBe(false);
  });
});

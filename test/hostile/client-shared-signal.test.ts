/**
 * Issue 11, item 10: one long-lived signal (a shutdown signal) passed to every call costs it one
 * listener, however many calls wait in a host's queue.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { wrapFetch } from '../../src/index.js';

describe('a signal shared by every call', () => {
  it('gets one listener from the queue, not one per waiting call, and still aborts them all', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const fetch = wrapFetch(
      async () => {
        await gate;
        return new Response('ok');
      },
      { concurrency: 1, coldStart: false },
    );
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    const shutdown = new AbortController();
    const calls = Array.from({ length: 999 }, (_, i) =>
      fetch(`http://h.example/${i}`, { signal: shutdown.signal }).then(
        (r) => r.status,
        (e: unknown) => (e as Error).name,
      ),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(fetch.stats().hosts['http://h.example']?.queueLength).toBe(998);
    expect(getEventListeners(shutdown.signal, 'abort').length).toBeLessThanOrEqual(2);
    shutdown.abort();
    release();
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((o) => o === 'AbortError').length).toBeGreaterThanOrEqual(998);
    expect(getEventListeners(shutdown.signal, 'abort').length).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    await fetch.close();
  });
});

describe('a fetch that ignores its signal', () => {
  it('still lets the call settle at its deadline, and gives its slot back', async () => {
    let calls = 0;
    // Never settles, whatever the signal says.
    const fetch = wrapFetch(
      () => {
        calls++;
        return new Promise<Response>(() => {});
      },
      { coldStart: false, retry: false },
    );
    const total = await fetch('http://h.example/a', { timeoutMs: 50 }).catch((e: unknown) => e);
    expect((total as { code?: string }).code).toBe('ERR_TIMEOUT');
    expect((total as { scope?: string }).scope).toBe('total');
    const attempt = await fetch('http://h.example/b', { attemptTimeoutMs: 50 }).catch(
      (e: unknown) => e,
    );
    expect((attempt as { scope?: string }).scope).toBe('attempt');
    const aborted = new AbortController();
    const pending = fetch('http://h.example/c', { signal: aborted.signal }).catch(
      (e: unknown) => (e as Error).name,
    );
    aborted.abort();
    expect(await pending).toBe('AbortError');
    expect(calls).toBe(3);
    expect(fetch.stats().hosts['http://h.example']?.inFlight).toBe(0);
    await fetch.close();
  });
});

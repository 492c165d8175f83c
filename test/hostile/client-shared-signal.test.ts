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

/**
 * Found by the hostile property (`client-headers.property.test.ts`, on main with the adaptive
 * pace): a call whose overall `timeoutMs` passes while its retry waits (in the host's line, or
 * in its backoff) gives up and resolves to the response it got before, as documented; but that
 * response's body was still tied to the overall timeout, which had just fired, so reading it threw
 * `AbortError` ("The operation was aborted.") although the caller aborted nothing. Before the
 * fix, the 429 and 503 with `Retry-After: 0` and the 503 without it failed here (on main, with the
 * pace, the 503 without it). A response the call resolves to answers to the caller's own signal
 * alone.
 */
import { describe, expect, it } from 'vitest';
import { LimitedClient } from '../../src/index.js';
import { type ScriptedServer, scriptedServer } from './helpers.js';

/** A host that answers `status` to everything but `/slow`, which takes a second. */
async function busyHost(status: number, retryAfter: string | undefined): Promise<ScriptedServer> {
  return scriptedServer(async (request) => {
    if (request.url === '/slow') {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      return { status: 200, body: 'slow' };
    }
    return {
      status,
      headers: retryAfter === undefined ? [] : [['Retry-After', retryAfter]],
      body: 'busy',
    };
  });
}

describe('a call that reaches its timeoutMs while its retry waits for the only slot', () => {
  it.each([
    [429, '0'],
    [429, '1'],
    [429, undefined],
    [503, '0'],
    [503, '1'],
    [503, undefined],
  ])('resolves to the %i it had (Retry-After %s), with a readable body', async (status, after) => {
    const server = await busyHost(status, after);
    const api = new LimitedClient(server.url, {
      concurrency: 1,
      coldStart: false,
      circuitBreaker: false,
      retryBudget: false,
    });
    const gaveUp: string[] = [];
    api.on('give-up', (event) => gaveUp.push(event.reason));
    // /a takes the only slot and /slow waits for it; /a is answered, /slow gets the slot for a
    // second, and /a's retry would wait for it past /a's deadline.
    const a = api.get('/a', { timeoutMs: 300 });
    const slow = api.get('/slow');
    const response = await a;
    expect(response.status).toBe(status);
    expect(gaveUp).toEqual(['deadline']);
    expect(await response.text()).toBe('busy');
    expect((await slow).status).toBe(200);
    await api.close();
    await server.close();
  });

  it("still lets the caller's signal abort the body it resolved to", async () => {
    const server = await scriptedServer(() => ({ status: 200, body: 'x'.repeat(1 << 20) }));
    const api = new LimitedClient(server.url, { coldStart: false });
    const caller = new AbortController();
    const response = await api.get('/big', { timeoutMs: 5000, signal: caller.signal });
    caller.abort();
    await expect(response.text()).rejects.toThrow();
    await api.close();
    await server.close();
  });
});

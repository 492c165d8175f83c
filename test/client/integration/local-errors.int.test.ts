/**
 * Issue 11, item 6, over real HTTP: an error that happens in this process (the caller's upload
 * stream fails) says nothing about the host. It is not retried as a network failure, and it does
 * not count against the host's circuit breaker.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { isTransientNetworkError } from '../../../src/client/call/network-errors.js';
import { LimitedClient } from '../../../src/index.js';
import { closeAll, start } from './server.js';

afterAll(closeAll);

function failingUpload(): ReadableStream<Uint8Array> {
  return new ReadableStream({
    pull(controller) {
      controller.error(new Error('disk read failed'));
    },
  });
}

describe('a local upload-stream error', () => {
  it('is not a transient network failure', async () => {
    const server = await start({ routes: [{ path: '*', limits: [] }] });
    const error = await fetch(`${server.url}/upload`, {
      method: 'POST',
      body: failingUpload(),
      duplex: 'half',
    } as RequestInit).catch((e: unknown) => e);
    expect((error as Error).message).toBe('fetch failed');
    expect(isTransientNetworkError(error)).toBe(false);
  });

  it('does not open the breaker of a healthy host, however many there are', async () => {
    const server = await start({ routes: [{ path: '*', limits: [] }] });
    const api = new LimitedClient(server.url);
    for (let i = 0; i < 8; i++) {
      const error = await api
        .post('/upload', failingUpload(), { idempotencyKey: `k${i}` })
        .catch((e: unknown) => e);
      expect((error as Error).message).toBe('fetch failed');
    }
    const stats = api.stats().hosts[server.url];
    // Each failed once: not retried, and no verdict on the host.
    expect(stats?.attempts).toBe(8);
    expect(stats?.circuit).toBe('closed');
    expect((await api.get('/healthy')).status).toBe(200);
    await api.close();
  });
});

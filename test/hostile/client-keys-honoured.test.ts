/**
 * What a server can make the client hold by showing that it honours idempotency keys (the echoed
 * key, `Idempotent-Replayed`): one flag on its host's pipeline, so at most `maxHosts` of them, and
 * forgotten with the pipeline. Over real HTTP against two mock servers: a host learned as honouring
 * keys, then evicted past `maxHosts: 1`, has its next write run once again (not retried after a
 * reset) until an answer teaches it anew; kept, the same write is retried and replayed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { LimitedClient } from '../../src/index.js';
import type { MockServer } from '../../src/server/index.js';
import { closeAll, start } from '../client/integration/server.js';

afterAll(closeAll);

/** `/ok` answers (with the key echoed); `/pay` loses its first connection after its side effect. */
function paymentServer(): Promise<MockServer> {
  return start({
    routes: [
      { method: 'POST', path: '/ok' },
      { method: 'POST', path: '/pay', faults: { reset: { when: 'after-handler', times: 1 } } },
    ],
  });
}

describe('a host learned as honouring keys, per pipeline (bounded by maxHosts)', () => {
  it('kept: its next write that loses its answer is retried and replayed', async () => {
    const server = await paymentServer();
    const client = new LimitedClient(server.url, { maxHosts: 1 });
    expect((await client.post('/ok', {})).status).toBe(200);
    expect((await client.post('/pay', { n: 1 })).status).toBe(200);
    expect(server.stats().routes['POST /pay']).toMatchObject({ sideEffects: 1, replays: 1 });
    await client.close();
  });

  it('evicted past maxHosts: forgotten, so the same write runs once and is not sent again', async () => {
    const [server, other] = await Promise.all([
      paymentServer(),
      start({ routes: [{ path: '*' }] }),
    ]);
    const client = new LimitedClient(server.url, { maxHosts: 1 });
    expect((await client.post('/ok', {})).status).toBe(200);
    // Another host: past maxHosts, the first (idle) pipeline is dropped, and what it learned.
    expect((await client.get(`${other.url}/x`)).status).toBe(200);
    expect(Object.keys(client.stats().hosts)).toEqual([other.url]);
    const lost = await client.post('/pay', { n: 1 }).catch((e: unknown) => e);
    expect(lost).not.toBeInstanceOf(Response);
    expect(server.stats().routes['POST /pay']).toMatchObject({ sideEffects: 1, replays: 0 });
    await client.close();
  });
});

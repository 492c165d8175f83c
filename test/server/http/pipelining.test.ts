/**
 * Pipelined requests on one connection, over raw sockets: their concurrency slots come back however
 * the exchange ends, and a connection cannot hold more than its share of requests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../../src/server/index.js';
import { FakeClock, until } from './helpers.js';
import { get, RawConnection } from './raw.js';

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A server whose every request takes a global concurrency slot; `/slow` works for a minute. */
async function start(clock: FakeClock) {
  server = await createMockServer({
    clock,
    limits: [{ algorithm: 'concurrency', limit: 3, key: 'global', name: 'slots' }],
    routes: [{ path: '/slow', faults: { latencyMs: 60_000 } }, { path: '/x' }],
  });
  return server;
}

/** Starts three `/slow` requests at once and says how many were admitted (each takes a slot). */
async function admittedOfThree(s: MockServer): Promise<number> {
  const before = s.stats().routes['* /slow'] ?? { admitted: 0, rejected: 0 };
  const connections = await Promise.all([0, 1, 2].map(() => RawConnection.open(s.port)));
  for (const c of connections) c.write(get('/slow'));
  await until(() => {
    const now = s.stats().routes['* /slow'] ?? { admitted: 0, rejected: 0 };
    return now.admitted + now.rejected - before.admitted - before.rejected === 3;
  }, 'the three probes to be decided');
  const admitted = (s.stats().routes['* /slow']?.admitted ?? 0) - before.admitted;
  for (const c of connections) c.destroy();
  return admitted;
}

describe('pipelined requests', () => {
  it('give their concurrency slots back when the connection drops with responses queued', async () => {
    const clock = new FakeClock();
    const s = await start(clock);
    const connection = await RawConnection.open(s.port);
    connection.write(get('/slow') + get('/x') + get('/x') + get('/x'));
    // /slow takes a slot and works; two /x take the other two and answer, queued behind /slow;
    // the third /x is rejected.
    await until(() => {
      const x = s.stats().routes['* /x'];
      return (x?.admitted ?? 0) + (x?.rejected ?? 0) === 3;
    }, 'the pipelined requests to be decided');
    expect(s.stats().routes['* /x']).toMatchObject({ admitted: 2, rejected: 1 });
    connection.destroy();
    // Every slot must come back: three new requests at once are all admitted.
    let admitted = 0;
    for (let attempt = 0; attempt < 50 && admitted < 3; attempt++) {
      admitted = await admittedOfThree(s);
    }
    expect(admitted).toBe(3);
  });

  it('give their slots back when the responses are delivered', async () => {
    const clock = new FakeClock();
    const s = await start(clock);
    const connection = await RawConnection.open(s.port);
    connection.write(get('/slow') + get('/x') + get('/x'));
    await until(() => s.stats().routes['* /x']?.admitted === 2, 'both /x to be admitted');
    clock.advance(60_000);
    const responses = await connection.waitFor(3);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    connection.destroy();
    expect(await admittedOfThree(s)).toBe(3);
  });
});

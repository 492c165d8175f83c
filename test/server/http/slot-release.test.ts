/**
 * Every way an admitted request can end gives its concurrency slot back, over real HTTP on
 * loopback: answered, rejected by a later limit, refused for its cost, replayed or refused by
 * `Idempotency-Key`, reset by a fault, cut off by the client in its body, its handler, its slow
 * answer or its leaky-bucket wait, and answered on a keep-alive connection that stays open. After
 * each, with the connection gone (or idle), as many requests as there are slots are all admitted.
 *
 * On fake time: `/hold` works for a minute that never passes, so each probe keeps its slot until
 * the probe's connection is dropped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../../src/server/index.js';
import { FakeClock, until } from './helpers.js';
import { get, RawConnection } from './raw.js';

const SLOTS = 4;

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(clock = new FakeClock()): Promise<{ s: MockServer; clock: FakeClock }> {
  const s = await createMockServer({
    clock,
    maxPipelinedRequests: 2,
    maxBufferedBodyBytes: 1024,
    limits: [{ algorithm: 'concurrency', limit: SLOTS, key: 'global', name: 'slots' }],
    routes: [
      { path: '/hold', faults: { latencyMs: 60_000 } },
      { path: '/x' },
      {
        path: '/limited',
        limits: [{ algorithm: 'fixed-window', limit: 1, windowMs: 60_000, name: 'once' }],
      },
      {
        method: 'POST',
        path: '/chat',
        limits: [
          {
            algorithm: 'fixed-window',
            limit: 100,
            windowMs: 60_000,
            unit: 'tokens',
            name: 'tokens',
            cost: { header: 'x-tokens', json: 'max_tokens', default: 1 },
          },
        ],
      },
      { method: 'POST', path: '/pay', faults: { latencyMs: 1000 } },
      { path: '/reset-before', faults: { reset: { when: 'before-handler' } } },
      { path: '/reset-after', faults: { reset: { when: 'after-handler' } } },
      { path: '/down', faults: { unavailable: { retryAfterSeconds: 1 } } },
      { path: '/trickle', faults: { slowBody: { chunkBytes: 1, intervalMs: 1000 } } },
      {
        path: '/queue',
        faults: { latencyMs: 60_000 },
        limits: [{ algorithm: 'leaky-bucket', rate: 1, capacity: 10, name: 'queue' }],
      },
    ],
  });
  server = s;
  return { s, clock };
}

/** Resolves once the server holds at most `connections` connections and `requests` requests. */
function released(s: MockServer, connections = 0, requests = 0): Promise<void> {
  return until(() => {
    const { held } = s.stats();
    return held.connections <= connections && held.requests <= requests;
  }, 'the connections and requests to be released');
}

/**
 * Sends `SLOTS` requests to `/hold` at once, each on its own connection, and says how many were
 * admitted (each admitted one keeps its slot until its connection is dropped, here at the end).
 */
async function admittedAtOnce(s: MockServer): Promise<number> {
  const { held } = s.stats();
  const before = s.stats().routes['* /hold'] ?? { admitted: 0, rejected: 0 };
  const probes = await Promise.all(Array.from({ length: SLOTS }, () => RawConnection.open(s.port)));
  try {
    for (const probe of probes) probe.write(get('/hold'));
    await until(() => {
      const now = s.stats().routes['* /hold'] ?? { admitted: 0, rejected: 0 };
      return now.admitted + now.rejected - before.admitted - before.rejected === SLOTS;
    }, 'the probes to be decided');
    return (s.stats().routes['* /hold']?.admitted ?? 0) - before.admitted;
  } finally {
    for (const probe of probes) probe.destroy();
    await released(s, held.connections, held.requests);
  }
}

/** A request with a body, framed by `Content-Length`. */
function post(target: string, body: string, headers: readonly string[] = []): string {
  return [
    `POST ${target} HTTP/1.1`,
    'Host: h',
    ...headers,
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

/**
 * Sends `request` on a new connection, waits for `count` answers (or the end), and drops it.
 * `methods` are the requests' methods, for answers to HEAD.
 */
async function exchange(
  s: MockServer,
  request: string,
  count = 1,
  methods: readonly string[] = [],
): Promise<number[]> {
  const c = await RawConnection.open(s.port);
  try {
    c.write(request);
    return (await c.waitFor(count, methods)).map((r) => r.status);
  } finally {
    c.destroy();
  }
}

/** Every slot is free: the connections are gone and `SLOTS` new requests are all admitted. */
async function expectAllSlotsFree(s: MockServer): Promise<void> {
  await released(s);
  expect(s.stats().held.bodyBytes).toBe(0);
  expect(await admittedAtOnce(s)).toBe(SLOTS);
}

describe('concurrency slots come back', () => {
  it('the probe itself: a held slot shows, and comes back when its holder leaves', async () => {
    const { s } = await start();
    const holder = await RawConnection.open(s.port);
    holder.write(get('/hold'));
    await until(() => s.stats().routes['* /hold']?.admitted === 1, 'the holder to be admitted');
    // The holder keeps one slot: of SLOTS probes, one is refused.
    expect(await admittedAtOnce(s)).toBe(SLOTS - 1);
    holder.destroy();
    await expectAllSlotsFree(s);
  });

  it('after answers, and after a rejection by a later limit (refunded)', async () => {
    const { s } = await start();
    expect(await exchange(s, get('/x'))).toEqual([200]);
    expect(await exchange(s, get('/limited'))).toEqual([200]);
    for (let i = 0; i < SLOTS + 1; i++) expect(await exchange(s, get('/limited'))).toEqual([429]);
    expect(s.stats().routes['* /limited']).toMatchObject({ admitted: 1, rejected: SLOTS + 1 });
    await expectAllSlotsFree(s);
  });

  it('after HEAD and OPTIONS', async () => {
    const { s } = await start();
    for (let i = 0; i < SLOTS + 1; i++) {
      expect(await exchange(s, get('/x', [], 'HEAD'), 1, ['HEAD'])).toEqual([200]);
      expect(await exchange(s, get('/x', [], 'OPTIONS'))).toEqual([200]);
    }
    await expectAllSlotsFree(s);
  });

  it('after a cost read from the body or a header: admitted, invalid (400), too large (413)', async () => {
    const { s } = await start();
    const json = ['Content-Type: application/json'];
    for (let i = 0; i < SLOTS + 1; i++) {
      expect(await exchange(s, post('/chat', '{"max_tokens":2}', json))).toEqual([200]);
      expect(await exchange(s, post('/chat', '{"max_tokens":0}', json))).toEqual([400]);
      expect(await exchange(s, post('/chat', '{"max_tokens":101}', json))).toEqual([413]);
      expect(await exchange(s, post('/chat', '{}', [...json, 'x-tokens: 100']))).toEqual([429]);
    }
    await expectAllSlotsFree(s);
  });

  it('after an Idempotency-Key replay (200), conflict (409) and reuse (422)', async () => {
    const { s, clock } = await start();
    const key = ['Idempotency-Key: k1'];
    const first = await RawConnection.open(s.port);
    first.write(post('/pay', '{"a":1}', key));
    await until(() => clock.pending.length === 1, 'the first payment to be in its handler');
    for (let i = 0; i < SLOTS; i++) {
      expect(await exchange(s, post('/pay', '{"a":1}', key))).toEqual([409]);
    }
    clock.advance(1000);
    expect((await first.waitFor(1)).map((r) => r.status)).toEqual([200]);
    first.destroy();
    for (let i = 0; i < SLOTS; i++) {
      expect(await exchange(s, post('/pay', '{"a":1}', key))).toEqual([200]);
      expect(await exchange(s, post('/pay', '{"a":2}', key))).toEqual([422]);
    }
    expect(s.stats().routes['POST /pay']).toMatchObject({ sideEffects: 1, replays: SLOTS });
    await expectAllSlotsFree(s);
  });

  it('after resets before and after the handler, and a 503 outage', async () => {
    const { s } = await start();
    for (let i = 0; i < SLOTS + 1; i++) {
      expect(await exchange(s, get('/reset-before'))).toEqual([]);
      expect(await exchange(s, get('/reset-after'))).toEqual([]);
      expect(await exchange(s, get('/down'))).toEqual([503]);
    }
    expect(s.stats().routes['* /reset-after']).toMatchObject({ resets: SLOTS + 1 });
    await expectAllSlotsFree(s);
  });

  it('after the client leaves in its body, in the handler, in a slow answer or in a queue', async () => {
    const { s, clock } = await start();
    for (let i = 0; i < SLOTS + 1; i++) {
      // Mid-body: the request is never decided.
      const body = await RawConnection.open(s.port);
      body.write(post('/chat', '{"max_tokens":2}').slice(0, -5));
      // In the handler, with the answer trickling, and waiting its turn in the leaky bucket.
      const handler = await RawConnection.open(s.port);
      handler.write(get('/hold'));
      const trickle = await RawConnection.open(s.port);
      trickle.write(get('/trickle'));
      await until(() => trickle.received.length > 0, 'the slow answer to start');
      const queued = await Promise.all([0, 1].map(() => RawConnection.open(s.port)));
      for (const q of queued) q.write(get('/queue'));
      await until(() => s.stats().routes['* /queue']?.admitted === 2 * (i + 1), 'both queued');
      await until(() => s.stats().held.requests === 5, 'every request to be held');
      for (const c of [body, handler, trickle, ...queued]) c.destroy();
      await released(s);
    }
    // The handlers' work goes on (it outlives its client), holding no slot.
    expect(clock.pending.length).toBeGreaterThan(0);
    await expectAllSlotsFree(s);
  });

  it('after answers on a keep-alive connection that stays open, pipelined or not', async () => {
    const { s } = await start();
    const kept = await RawConnection.open(s.port);
    for (let i = 1; i <= SLOTS + 1; i++) {
      kept.write(get('/x'));
      expect((await kept.waitFor(i)).length).toBe(i);
    }
    kept.write(get('/x') + get('/x'));
    expect((await kept.waitFor(SLOTS + 3)).every((r) => r.status === 200)).toBe(true);
    // The connection is open and idle: it holds no request, so every slot is free.
    await until(() => s.stats().held.requests === 0, 'the answered requests to be released');
    expect(s.stats().held.connections).toBe(1);
    expect(await admittedAtOnce(s)).toBe(SLOTS);
    kept.destroy();
  });

  it('after refusals: past the pipelining bound (503), a body over the budget (503)', async () => {
    const { s } = await start();
    // Three pipelined behind a held one: the third in flight is past the bound of 2.
    const statuses = await exchange(s, get('/x') + get('/x') + get('/x'), 3);
    expect(statuses).toContain(503);
    const big = 'a'.repeat(2048);
    expect(await exchange(s, post('/chat', big))).toEqual([503]);
    await expectAllSlotsFree(s);
  });
});

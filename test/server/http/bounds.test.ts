/**
 * What an outside party can make the mock server hold, each at its bound over real sockets:
 * connections, pipelined requests, request bodies (each and together), the request head, and the
 * limiters' keys. (The idempotency store's bounds are in idempotency.test.ts, the stats' client
 * keys in stores.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMockServer,
  MemoryStore,
  type MockServer,
  type MockServerConfig,
} from '../../../src/server/index.js';
import { FakeClock, until } from './helpers.js';
import { get, RawConnection, rawRequest } from './raw.js';

let server: MockServer | undefined;
const open: RawConnection[] = [];
afterEach(async () => {
  for (const connection of open.splice(0)) connection.destroy();
  await server?.close();
  server = undefined;
});

async function start(config: Omit<MockServerConfig, 'clock'>, clock = new FakeClock()) {
  server = await createMockServer({ clock, ...config });
  return server;
}

async function connect(port: number): Promise<RawConnection> {
  const connection = await RawConnection.open(port);
  open.push(connection);
  return connection;
}

/** A POST with a body, as raw bytes. */
function post(path: string, body: string): string {
  return [`POST ${path} HTTP/1.1`, 'Host: h', `Content-Length: ${body.length}`, '', body].join(
    '\r\n',
  );
}

describe('bounds', () => {
  it('maxConnections: the connection past it is closed unanswered, and a freed place is taken', async () => {
    const s = await start({ maxConnections: 3, routes: [{ path: '/x' }] });
    const first = await Promise.all([0, 1, 2].map(() => connect(s.port)));
    await until(() => s.stats().held.connections === 3, 'three connections');
    const fourth = await connect(s.port);
    fourth.write(get('/x'));
    await fourth.waitForEnd();
    expect(fourth.received.length).toBe(0);
    expect(s.stats().held.connections).toBe(3);
    first[0]?.destroy();
    await until(() => s.stats().held.connections === 2, 'a connection to close');
    const fifth = await connect(s.port);
    fifth.write(get('/x'));
    expect((await fifth.waitFor(1)).map((r) => r.status)).toEqual([200]);
  });

  it('maxPipelinedRequests: the request past it gets 503 and the connection closes', async () => {
    const clock = new FakeClock();
    const s = await start(
      { maxPipelinedRequests: 4, routes: [{ path: '/slow', faults: { latencyMs: 1000 } }] },
      clock,
    );
    const connection = await connect(s.port);
    connection.write(get('/slow').repeat(6));
    await until(() => clock.pending.length === 4, 'four requests working');
    expect(s.stats().held.requests).toBeGreaterThanOrEqual(4);
    clock.advance(1000);
    const responses = await connection.waitFor(6);
    await connection.waitForEnd();
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 503]);
    expect(responses[4]?.headers.get('connection')).toBe('close');
    expect(JSON.parse(responses[4]?.body ?? '')).toMatchObject({
      error: 'too_many_pipelined_requests',
    });
    expect(s.stats().routes['* /slow']?.admitted).toBe(4);
    await until(() => s.stats().held.requests === 0, 'every request to end');
  });

  it('maxBufferedBodyBytes: a body that does not fit beside those held gets 503; one that fits exactly does not', async () => {
    const clock = new FakeClock();
    const s = await start(
      {
        maxBufferedBodyBytes: 100_000,
        routes: [{ method: 'POST', path: '/upload', faults: { latencyMs: 1000 } }],
      },
      clock,
    );
    const held = await connect(s.port);
    held.write(post('/upload', 'a'.repeat(60_000)));
    await until(() => clock.pending.length === 1, 'the first upload to be working');
    expect(s.stats().held.bodyBytes).toBe(60_000);
    const [refused] = await rawRequest(s.port, post('/upload', 'b'.repeat(40_001)));
    expect(refused?.status).toBe(503);
    expect(refused?.headers.get('retry-after')).toBe('1');
    expect(JSON.parse(refused?.body ?? '')).toMatchObject({ error: 'server_busy' });
    expect(s.stats().held.bodyBytes).toBe(60_000);
    const fits = await connect(s.port);
    fits.write(post('/upload', 'c'.repeat(40_000)));
    await until(() => clock.pending.length === 2, 'the exact fit to be working');
    expect(s.stats().held.bodyBytes).toBe(100_000);
    clock.advance(1000);
    expect((await held.waitFor(1)).map((r) => r.status)).toEqual([200]);
    expect((await fits.waitFor(1)).map((r) => r.status)).toEqual([200]);
    await until(() => s.stats().held.bodyBytes === 0, 'the bodies to be released');
  });

  it('a body of exactly 1 MiB is read; one byte more is a 413', async () => {
    const s = await start({ routes: [{ method: 'POST', path: '/upload' }] });
    const limit = 1024 * 1024;
    const at = await fetch(`${s.url}/upload`, { method: 'POST', body: 'x'.repeat(limit) });
    expect(at.status).toBe(200);
    expect(((await at.json()) as { body: string }).body.length).toBe(limit);
    const over = await fetch(`${s.url}/upload`, { method: 'POST', body: 'x'.repeat(limit + 1) });
    expect(over.status).toBe(413);
    expect(s.stats().held.bodyBytes).toBe(0);
  });

  it('the request head: 16 KiB of header fields are read, more is a 431', async () => {
    const s = await start({ routes: [{ path: '/x' }] });
    // The request line and the Host field take 30 bytes of the 16 KiB.
    const [within] = await rawRequest(s.port, get('/x', [`X-Big: ${'a'.repeat(16_000)}`]));
    expect(within?.status).toBe(200);
    const [over] = await rawRequest(s.port, get('/x', [`X-Big: ${'a'.repeat(16 * 1024)}`]));
    expect(over?.status).toBe(431);
  });

  it("limiter keys: at most the store's maxKeys, however many clients come", async () => {
    const s = await start({
      store: new MemoryStore({ maxKeys: 50 }),
      routes: [
        {
          path: '/x',
          limits: [
            {
              algorithm: 'fixed-window',
              limit: 5,
              windowMs: 60_000,
              key: { header: 'x-api-key' },
            },
          ],
        },
      ],
    });
    for (let i = 0; i < 200; i++) {
      const response = await fetch(`${s.url}/x`, { headers: { 'x-api-key': `key-${i}` } });
      expect(response.status).toBe(200);
    }
    expect(s.stats().held.limiterKeys).toBe(50);
  });
});

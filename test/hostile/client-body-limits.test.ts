/**
 * Hostile GraphQL bodies (docs/body-limits.md): whatever a server puts in the JSON answer of a call
 * the client looks at, the call completes with the server's answer, its bytes untouched, and the
 * look stays within its bounds (64 KiB, 1 s of the client's clock): malformed JSON, numbers out of
 * range, deep nesting, a body larger than the bound with or without `Content-Length`, a body that
 * never ends, prototype keys.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BODY_LOOK_MS, MAX_BODY_LOOK_BYTES } from '../../src/client/body/look.js';
import { MAX_COST_ROUTES, RouteCosts } from '../../src/client/body/route-costs.js';
import { wrapFetch } from '../../src/index.js';
import { FakeClock, flush } from '../client/helpers.js';
import { countingFetch, runOnFakeTime } from '../client/integration/fake-time.js';
import { prototypeSnapshot } from './helpers.js';

const THROTTLED = '{"errors":[{"message":"Throttled","extensions":{"code":"THROTTLED"}}]}';

interface RawServer {
  url: string;
  readonly received: number;
  close(): Promise<void>;
}

/** A loopback server whose every answer `answer` writes itself (a body may never end). */
async function rawServer(answer: (res: ServerResponse, index: number) => void): Promise<RawServer> {
  let received = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    answer(res, received++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    get received() {
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A server answering every request with `body` as JSON (chunked, or with its length). */
function jsonServer(body: string, withLength = true) {
  return rawServer((res) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (withLength) headers['content-length'] = String(Buffer.byteLength(body));
    res.writeHead(200, headers);
    res.end(body);
  });
}

let server: RawServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * One query through a fresh wrapFetch, on fake time (`fake-time.ts`: a refusal without timing
 * waits for the host's pace, seconds of it); the answer's status and text.
 */
async function query(url: string, options: Parameters<typeof wrapFetch>[1] = {}) {
  const clock = new FakeClock();
  const wire = countingFetch();
  const send = wrapFetch(wire.fetch, { clock, retry: { retries: 2 }, ...options });
  try {
    const answer = send(url, { method: 'POST', body: '{"query":"{ shop { name } }"}' }).then(
      async (r) => ({ status: r.status, text: await r.text() }),
    );
    await runOnFakeTime(clock, wire, answer, { maxMs: 120_000 });
    return await answer;
  } finally {
    await send.close();
  }
}

describe('hostile GraphQL bodies: ignored, the answer handed back untouched', () => {
  it.each([
    ['malformed JSON', THROTTLED.slice(0, -2)],
    ['THROTTLED in a string, not an error', '{"data":{"note":"THROTTLED"}}'],
    ['errors as an object', '{"errors":{"extensions":{"code":"THROTTLED"}}}'],
    ['code of another type', '{"errors":[{"extensions":{"code":["THROTTLED"]}}]}'],
  ])('%s: one attempt', async (_, body) => {
    server = await jsonServer(body);
    expect(await query(server.url)).toEqual({ status: 200, text: body });
    expect(server.received).toBe(1);
  });

  it('numbers out of range (huge, negative, exponents): a refusal without timing, bounded retries', async () => {
    const cost = (v: string) =>
      `{"requestedQueryCost":${v},"throttleStatus":{"maximumAvailable":${v},"currentlyAvailable":${v},"restoreRate":${v}}}`;
    for (const v of ['1e308', '-5', '1e400', '-0', '0']) {
      const body = `{"errors":[{"extensions":{"code":"THROTTLED"}}],"extensions":{"cost":${cost(v)}}}`;
      server = await jsonServer(body);
      // Retried as a refusal (it says THROTTLED) without timing, as a bare 429: the 2 retries, and
      // the probes of the lockout a host refusing everything is taken into (those are bounded in
      // time by maxRetryAfterMs, here of fake time, not counted as retries).
      expect(await query(server.url, { maxRetryAfterMs: 5000 })).toEqual({
        status: 200,
        text: body,
      });
      expect(server.received).toBeGreaterThanOrEqual(3);
      expect(server.received).toBeLessThanOrEqual(10);
      await server.close();
      server = undefined;
    }
  }, 30_000);

  it('deep nesting within the bound: parsed or ignored, never a crash', async () => {
    const depth = 30_000;
    const body = `{"x":${'['.repeat(depth)}${']'.repeat(depth)},"data":{"ok":true}}`;
    server = await jsonServer(body);
    expect(await query(server.url)).toEqual({ status: 200, text: body });
    expect(server.received).toBe(1);
  });

  it('prototype keys stay data: Object.prototype untouched', async () => {
    const before = prototypeSnapshot();
    const body =
      '{"__proto__":{"errors":[{"extensions":{"code":"THROTTLED"}}]},"constructor":{"prototype":{"x":1}},' +
      '"extensions":{"__proto__":{"cost":{"throttleStatus":{"maximumAvailable":1}}}}}';
    server = await jsonServer(body);
    expect(await query(server.url)).toEqual({ status: 200, text: body });
    expect(server.received).toBe(1);
    expect(prototypeSnapshot()).toEqual(before);
  });
});

describe(`the look's bounds: ${MAX_BODY_LOOK_BYTES} bytes, ${BODY_LOOK_MS} ms`, () => {
  /** A THROTTLED answer padded to `bytes`. */
  const padded = (bytes: number) => {
    const head = `{"pad":"`;
    const tail = `","errors":[{"extensions":{"code":"THROTTLED"}}]}`;
    return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
  };

  it.each([true, false])(
    'at the bound it is read; one byte over it is not (Content-Length given: %s)',
    async (withLength) => {
      server = await jsonServer(padded(MAX_BODY_LOOK_BYTES), withLength);
      const at = await query(server.url);
      expect(at.text).toBe(padded(MAX_BODY_LOOK_BYTES));
      // Read: a refusal, retried.
      expect(server.received).toBeGreaterThan(1);
      await server.close();
      server = await jsonServer(padded(MAX_BODY_LOOK_BYTES + 1), withLength);
      const over = await query(server.url);
      // Not read: handed back at once, every byte there.
      expect(over.text).toBe(padded(MAX_BODY_LOOK_BYTES + 1));
      expect(server.received).toBe(1);
    },
  );

  it('a large body streamed in chunks reaches the caller whole', async () => {
    const chunk = 'y'.repeat(16 * 1024);
    server = await rawServer((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"pad":"');
      for (let i = 0; i < 64; i++) res.write(chunk);
      res.end('"}');
    });
    const got = await query(server.url);
    expect(got.text.length).toBe(8 + 64 * chunk.length + 2);
    expect(server.received).toBe(1);
  });

  it('a body that never ends: the call resolves once the look gives up, the caller reads what came', async () => {
    const clock = new FakeClock();
    let sent = false;
    server = await rawServer((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"errors":[{"extensions":{"code":"THROTTLED"}}]');
      sent = true;
      // ...and never more.
    });
    const send = wrapFetch(fetch, { clock });
    let response: Response | undefined;
    const call = send(server.url, { method: 'POST', body: '{"query":"{}"}' }).then((r) => {
      response = r;
    });
    await vi.waitFor(() => expect(sent).toBe(true));
    for (let i = 0; i < 20; i++) await flush();
    expect(response).toBeUndefined();
    await clock.advance(BODY_LOOK_MS);
    await call;
    expect(response?.status).toBe(200);
    expect(server.received).toBe(1);
    const reader = (response as Response).body?.getReader();
    const first = await reader?.read();
    expect(new TextDecoder().decode(first?.value)).toBe(
      '{"errors":[{"extensions":{"code":"THROTTLED"}}]',
    );
    await reader?.cancel();
    await send.close();
  });
});

describe("the look ends with the caller's signal", () => {
  it('an abort during the look ends it at once, without the clock moving', async () => {
    const clock = new FakeClock();
    let sent = false;
    server = await rawServer((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":');
      sent = true;
    });
    const send = wrapFetch(fetch, { clock });
    const abort = new AbortController();
    const call = send(server.url, {
      method: 'POST',
      body: '{"query":"{}"}',
      signal: abort.signal,
    }).then(
      (r) => r.status,
      (e: unknown) => (e as Error).name,
    );
    await vi.waitFor(() => expect(sent).toBe(true));
    for (let i = 0; i < 20; i++) await flush();
    abort.abort();
    // Settled with the answer (its body then fails as fetch's would) or with the abort: never
    // left waiting for the look's second of clock time.
    expect(['AbortError', 200]).toContain(await call);
    expect(clock.now()).toBe(new FakeClock().now());
    await send.close();
  });
});

describe(`learned route costs: at most ${MAX_COST_ROUTES} per host`, () => {
  it('at the bound every route is kept; past it the least recently answered goes', () => {
    const costs = new RouteCosts();
    for (let i = 0; i < MAX_COST_ROUTES; i++) costs.set(`POST http://h/graphql/${i}`, i);
    expect(costs.size).toBe(MAX_COST_ROUTES);
    costs.set('POST http://h/graphql/0', 7); // answered again: the most recent now
    costs.set('POST http://h/graphql/new', 1);
    expect(costs.size).toBe(MAX_COST_ROUTES);
    expect(costs.get('POST http://h/graphql/0')).toBe(7);
    expect(costs.get('POST http://h/graphql/1')).toBeUndefined();
    costs.set(`POST http://h/${'a'.repeat(2000)}`, 1);
    expect(costs.size).toBe(MAX_COST_ROUTES);
  });

  it('a server answering a new route each time keeps the host at the bound', async () => {
    let n = 0;
    server = await rawServer((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"extensions":{"cost":{"requestedQueryCost":${1 + (n++ % 5)}}}}`);
    });
    const send = wrapFetch(fetch, { bodyLimits: true });
    for (let i = 0; i < MAX_COST_ROUTES + 20; i++) {
      await (await send(`${server.url}/${i}`)).text();
    }
    await send.close();
    expect(server.received).toBe(MAX_COST_ROUTES + 20);
  }, 60_000);
});

/**
 * The mock server against generated hostile traffic over raw loopback sockets: methods, targets in
 * every form, header names from `Object.prototype`, client keys, bodies framed right and wrong,
 * pipelining, trickling, drops mid-request. One server takes every case, as a server exposed on a
 * network would. After each case, with its sockets gone, nothing may stay held; over the run,
 * `Object.prototype` stays as it was, no error escapes, no answer is a 500, memory stays bounded,
 * and every well-formed request is answered (a request still unanswered after a long watchdog has
 * hung).
 *
 * Prints the number of cases run, the largest memory growth and the slowest answer seen.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../src/server/index.js';
import { collectGarbage, heldBytes, until } from '../server/http/helpers.js';
import { parseResponses, RawConnection } from '../server/http/raw.js';

/**
 * At most this many cases, and no new case after this many milliseconds. The time limit is the
 * property's own (a case that starts after it passes at once), not fast-check's
 * `interruptAfterTimeLimit`: that one races the running case against the clock and returns while
 * the case is still in flight, so its connections would overlap the checks that follow the run
 * (the final slot check saw 7 of 8 admitted that way, about once in 30 runs).
 */
const MAX_RUNS = 300;
const TIME_LIMIT_MS = 12_000;
/**
 * A well-formed request not answered after this long is taken as never answered: a hang detector,
 * not a speed bound (its route's work takes at most 70 ms; a loaded machine may take seconds).
 * The slowest answer is printed; the server's speed is measured by `npm run bench:server`.
 */
const HANG_MS = 15_000;
/** Growth of heap and buffers over the run, after garbage collection. */
const MEMORY_BOUND_BYTES = 48 * 1024 * 1024;
/** How long a malformed or dropped connection is given before the client drops it. */
const HOSTILE_WAIT_MS = 100;

const PROTO_NAMES = Object.getOwnPropertyNames(Object.prototype);
const SLOTS = 8;

let server: MockServer;
const escaped: unknown[] = [];
const onError = (error: unknown) => escaped.push(error);
const onWarning = (warning: Error) => escaped.push(warning);

beforeAll(async () => {
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  process.on('warning', onWarning);
  server = await createMockServer({
    maxPipelinedRequests: 4,
    maxBufferedBodyBytes: 256 * 1024,
    limits: [
      { algorithm: 'concurrency', limit: SLOTS, key: 'global', name: 'slots' },
      { algorithm: 'token-bucket', capacity: 1_000_000, refillPerSecond: 1_000_000, name: 'ip' },
    ],
    routes: [
      {
        method: 'GET',
        path: '/items/:id',
        name: '__proto__',
        limits: [
          {
            algorithm: 'fixed-window',
            limit: 5,
            windowMs: 60_000,
            key: [{ header: 'constructor' }, 'ip'],
          },
        ],
      },
      {
        method: 'POST',
        path: '/payments',
        name: 'constructor',
        faults: { latencyMs: { min: 0, max: 20 } },
        limits: [
          { algorithm: 'gcra', rate: 1000, burst: 50, key: { header: 'x-api-key' }, name: 'pay' },
        ],
      },
      {
        // A cost read from the request: generated `toString` header values (numbers, names,
        // text) and JSON bodies walk it; past 1e6 is a 413, a bad value a 400, never a 500.
        method: 'POST',
        path: '/chat',
        name: 'valueOf',
        headers: 'openai',
        limits: [
          {
            algorithm: 'fixed-window',
            limit: 1_000_000,
            windowMs: 60_000,
            unit: 'tokens',
            cost: { header: 'toString', json: 'constructor.prototype.polluted', default: 1 },
          },
        ],
      },
      { path: '/slow', faults: { latencyMs: 30 } },
      { path: '/queue', limits: [{ algorithm: 'leaky-bucket', rate: 100, capacity: 5 }] },
      { path: '/files/*', faults: { slowBody: { chunkBytes: 64, intervalMs: 5 } } },
      {
        path: '/hasOwnProperty/:toString',
        headers: 'x-ratelimit',
        limits: [
          { algorithm: 'sliding-log', limit: 50, windowMs: 1000, key: { header: 'toString' } },
        ],
        response: { status: 201, headers: { valueOf: 'v', __proto__: 'p' } as never },
      },
    ],
  });
});

afterAll(async () => {
  await server?.close();
  process.off('uncaughtException', onError);
  process.off('unhandledRejection', onError);
  process.off('warning', onWarning);
});

// ---- Generated requests ------------------------------------------------------------------------

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,16}$/;

const segment = fc.oneof(
  fc.constantFrom(...PROTO_NAMES, '1', '42', '..', '.', '%2e%2e', '%69tems', '%ZZ', '%00', ''),
  fc.string({ maxLength: 8 }).map(encodeURIComponent),
);
/** Paths of the routes above (most of them), and others. */
const path = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.constantFrom('/items/', '/hasOwnProperty/', '/files/', '/files/a/', '/%69tems/'),
        segment,
      )
      .map(([prefix, last]) => prefix + last),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom('/payments', '/chat', '/slow', '/queue', '/x/../slow', '/'),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom('items', 'payments', 'slow', 'queue', 'files', 'hasOwnProperty', 'nope'),
        fc.array(segment, { maxLength: 3 }),
      )
      .map(([first, rest]) => `/${[first, ...rest].join('/')}`),
  },
);
const query = fc.oneof(
  fc.constant(''),
  fc
    .array(fc.tuple(fc.constantFrom(...PROTO_NAMES, 'a', 'b[c]'), fc.string({ maxLength: 6 })), {
      minLength: 1,
      maxLength: 3,
    })
    .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`),
);
const wellFormedTarget = fc.oneof(
  { weight: 5, arbitrary: fc.tuple(path, query).map(([p, q]) => p + q) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom('http://h', 'https://h.example:8080', 'HTTP://x'), path, query)
      .map(([origin, p, q]) => origin + p + q),
  },
  { weight: 1, arbitrary: fc.constantFrom('*', 'ftp://h/items/1', 'http:///x') },
);
const badTarget = fc.constantFrom('h.example:443', 'items/1', '/items/1 HTTP/1.0', '/a\u0000b', '');

const wellFormedMethod = fc.constantFrom(
  'GET',
  'POST',
  'HEAD',
  'PUT',
  'DELETE',
  'PATCH',
  'OPTIONS',
);
const badMethod = fc.constantFrom('get', 'BREW', 'G ET', 'CONNECT', '');

const headerName = fc.oneof(
  fc.constantFrom(...PROTO_NAMES, 'x-api-key', 'Idempotency-Key', 'Content-Type', 'toString'),
  fc.constantFrom('X-Forwarded-For', 'Connection', 'Expect', 'Cookie', 'Accept'),
  fc.stringMatching(TOKEN),
);
const headerValue = fc.oneof(
  fc.constantFrom(...PROTO_NAMES, '', 'application/json', 'text/plain', 'keep-alive', 'close'),
  fc.constantFrom('100-continue', '1.2.3.4, 5.6.7.8', 'a'.repeat(200)),
  fc.nat().map(String),
  fc.stringMatching(/^[\x20-\x7e]{0,40}$/).map((v) => v.trim()),
);
const badHeaderLine = fc.constantFrom(
  'No-Colon',
  'Bad Name: x',
  'X-Ctl: a\u0001b',
  ' Folded: x',
  'Content-Length: 1\r\nContent-Length: 2',
  'Transfer-Encoding: chunked, identity',
);

/** A body past the run's body budget (256 KiB), printed short in a counterexample. */
const BIG_BODY = Object.assign(Buffer.alloc(300 * 1024, 0x41), {
  [fc.toStringMethod]: () => 'Buffer.alloc(300 * 1024, 0x41)',
});

const body = fc.oneof(
  { weight: 4, arbitrary: fc.constant(Buffer.alloc(0)) },
  { weight: 3, arbitrary: fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        '{"__proto__":{"polluted":1}}',
        '{"constructor":{"prototype":{"polluted":1}}}',
        '{"a":',
        '[]',
        'null',
      )
      .map((s) => Buffer.from(s)),
  },
  { weight: 1, arbitrary: fc.constant(BIG_BODY) },
);

type Framing = 'length' | 'chunked' | 'short' | 'long' | 'both' | 'none';

interface GeneratedRequest {
  method: string;
  target: string;
  headers: [string, string][];
  badLine: string | undefined;
  body: Buffer;
  framing: Framing;
}

/** Header names the generator must not send on a request meant to be well-formed. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'expect', 'connection', 'host']);

/** Any request: mostly well-formed parts, with a share of every kind of mistake. */
const anyRequest: fc.Arbitrary<GeneratedRequest> = fc.record({
  method: fc.oneof({ weight: 9, arbitrary: wellFormedMethod }, { weight: 1, arbitrary: badMethod }),
  target: fc.oneof({ weight: 9, arbitrary: wellFormedTarget }, { weight: 1, arbitrary: badTarget }),
  headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 6 }),
  badLine: fc.oneof(
    { weight: 9, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: badHeaderLine },
  ),
  body,
  framing: fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom<Framing>('length', 'chunked') },
    { weight: 2, arbitrary: fc.constantFrom<Framing>('short', 'long', 'both', 'none') },
  ),
});

/** A request a server must answer: hostile names and values, but valid HTTP. */
const wellFormedRequest: fc.Arbitrary<GeneratedRequest> = fc.record({
  method: wellFormedMethod,
  target: wellFormedTarget,
  headers: fc.array(
    fc.tuple(headerName, headerValue).filter(([name]) => !FRAMING.has(name.toLowerCase())),
    { maxLength: 6 },
  ),
  badLine: fc.constant(undefined),
  body,
  framing: fc.constantFrom<Framing>('length', 'chunked'),
});

function isWellFormed(r: GeneratedRequest): boolean {
  return (
    /^(GET|POST|HEAD|PUT|DELETE|PATCH|OPTIONS)$/.test(r.method) &&
    /^[\x21-\x7e]+$/.test(r.target) &&
    r.badLine === undefined &&
    (r.framing === 'length' || r.framing === 'chunked') &&
    r.headers.every(([name]) => !FRAMING.has(name.toLowerCase()))
  );
}

function encode(r: GeneratedRequest): Buffer {
  const lines = [`${r.method} ${r.target} HTTP/1.1`, 'Host: h'];
  for (const [name, value] of r.headers) lines.push(`${name}: ${value}`);
  if (r.badLine !== undefined) lines.push(r.badLine);
  let payload = r.body;
  switch (r.framing) {
    case 'length':
      lines.push(`Content-Length: ${r.body.length}`);
      break;
    case 'short':
      lines.push(`Content-Length: ${Math.max(0, r.body.length - 3)}`);
      break;
    case 'long':
      lines.push(`Content-Length: ${r.body.length + 5}`);
      break;
    case 'both':
      lines.push(`Content-Length: ${r.body.length}`, 'Transfer-Encoding: chunked');
      break;
    case 'chunked':
      lines.push('Transfer-Encoding: chunked');
      payload = Buffer.concat([
        r.body.length > 0 ? Buffer.from(`${r.body.length.toString(16)}\r\n`) : Buffer.alloc(0),
        r.body,
        Buffer.from(r.body.length > 0 ? '\r\n0\r\n\r\n' : '0\r\n\r\n'),
      ]);
      break;
    case 'none':
      break;
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}

type Behaviour =
  | { kind: 'complete'; pipelined: boolean }
  | { kind: 'trickle'; chunks: number }
  | { kind: 'drop-after'; ms: number }
  | { kind: 'drop-mid'; cut: number };

const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  { weight: 4, arbitrary: fc.boolean().map((pipelined) => ({ kind: 'complete', pipelined })) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 2, max: 5 }).map((chunks) => ({ kind: 'trickle', chunks })),
  },
  {
    weight: 2,
    arbitrary: fc.integer({ min: 0, max: 60 }).map((ms) => ({ kind: 'drop-after', ms })),
  },
  {
    weight: 2,
    arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map((cut) => ({ kind: 'drop-mid', cut })),
  },
) as fc.Arbitrary<Behaviour>;

const connection = fc.record({
  requests: fc.oneof(
    fc.array(wellFormedRequest, { minLength: 1, maxLength: 5 }),
    fc.array(anyRequest, { minLength: 1, maxLength: 5 }),
  ),
  behaviour,
});
const scenario = fc.array(connection, { minLength: 1, maxLength: 3 });

// ---- Driving a case ----------------------------------------------------------------------------

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Observed {
  /** How many responses of each status came back on well-formed connections. */
  statuses: Map<number, number>;
  /** Milliseconds from a well-formed request's write to its answer, the largest. */
  slowestMs: number;
}

async function drive(
  port: number,
  spec: { requests: GeneratedRequest[]; behaviour: Behaviour },
  observed: Observed,
): Promise<void> {
  const c = await RawConnection.open(port);
  const wellFormed = spec.requests.every(isWellFormed);
  const methods = spec.requests.map((r) => r.method);
  const bytes = spec.requests.map(encode);
  const all = Buffer.concat(bytes);
  try {
    const { behaviour: b } = spec;
    if (b.kind === 'drop-mid') {
      c.write(all.subarray(0, Math.floor(all.length * b.cut)));
      await sleep(5);
      return;
    }
    if (b.kind === 'drop-after') {
      c.write(all);
      await sleep(b.ms);
      return;
    }
    const wrote = performance.now();
    if (b.kind === 'trickle') {
      const size = Math.ceil(all.length / b.chunks);
      for (let at = 0; at < all.length; at += size) {
        c.write(all.subarray(at, at + size));
        await sleep(2);
      }
    } else if (b.pipelined || !wellFormed) c.write(all);
    if (!wellFormed) {
      await sleep(HOSTILE_WAIT_MS);
      return;
    }
    if (b.kind === 'complete' && !b.pipelined) {
      // One at a time, each after the previous answer.
      for (const [i, one] of bytes.entries()) {
        const sent = performance.now();
        c.write(one);
        const got = await c.waitFor(i + 1, methods);
        if (got.length <= i) break;
        observed.slowestMs = Math.max(observed.slowestMs, performance.now() - sent);
      }
    } else {
      await answered(c, methods, spec.requests.length);
      observed.slowestMs = Math.max(observed.slowestMs, performance.now() - wrote);
    }
    const responses = parseResponses(c.received, methods, c.ended);
    for (const { status } of responses) {
      observed.statuses.set(status, (observed.statuses.get(status) ?? 0) + 1);
    }
    // Every request was answered (`answered` waited for that), unless the server closed the
    // connection after an answer that says it would (413, or 503 past the pipelining bound or the
    // body budget; bounds.test.ts checks those answers). That answer may not be read here: bytes
    // the client was still sending reach a closed socket, and the reset that comes back can
    // discard the answer before the client reads it (the lingering-close race of HTTP/1.1).
  } finally {
    c.destroy();
  }
}

/** Waits until `count` answers came or the server closed, failing past the answer bound. */
async function answered(c: RawConnection, methods: string[], count: number): Promise<void> {
  const giveUpAt = performance.now() + HANG_MS;
  while (parseResponses(c.received, methods, c.ended).length < count && !c.ended) {
    if (performance.now() > giveUpAt) {
      throw new Error(`no answer within ${HANG_MS} ms to well-formed requests`);
    }
    await sleep(2);
  }
}

function prototypeSnapshot(): Map<string, unknown> {
  const snapshot = new Map<string, unknown>();
  for (const name of Object.getOwnPropertyNames(Object.prototype)) {
    const d = Object.getOwnPropertyDescriptor(Object.prototype, name);
    snapshot.set(name, d?.value ?? d?.get);
  }
  return snapshot;
}

describe('the mock server under generated hostile traffic', () => {
  it('never crashes, pollutes, leaks a slot or grows, and answers every well-formed request', async () => {
    const prototype = prototypeSnapshot();
    collectGarbage();
    const baseline = heldBytes();
    const observed: Observed = { statuses: new Map(), slowestMs: 0 };
    let cases = 0;
    /** Cases started and not yet over: 0 once fc.assert returns, or a case still runs. */
    let running = 0;
    let largestGrowth = 0;
    const started = performance.now();
    // Printed with the summary, so that a failing run can be replayed (`seed` in fc.assert).
    const seed = Date.now() % 2 ** 31;
    await fc.assert(
      fc.asyncProperty(scenario, async (connections) => {
        if (performance.now() - started > TIME_LIMIT_MS) return;
        cases += 1;
        running += 1;
        try {
          await Promise.all(connections.map((spec) => drive(server.port, spec, observed)));
          // With its sockets gone, the case leaves nothing held.
          await until(() => {
            const held = server.stats().held;
            return held.connections === 0 && held.requests === 0 && held.bodyBytes === 0;
          }, 'every connection, request and body of the case to be released');
        } finally {
          running -= 1;
        }
        expect(escaped).toEqual([]);
        expect(prototypeSnapshot()).toEqual(prototype);
        if (cases % 25 === 0) {
          collectGarbage();
          largestGrowth = Math.max(largestGrowth, heldBytes() - baseline);
        }
      }),
      { seed, numRuns: MAX_RUNS },
    );
    // Every case ran to its end: what follows sees a quiet server, not the last case's traffic.
    expect(running).toBe(0);
    expect(server.stats().held).toMatchObject({ connections: 0, requests: 0, bodyBytes: 0 });
    collectGarbage();
    largestGrowth = Math.max(largestGrowth, heldBytes() - baseline);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const answers = [...observed.statuses.values()].reduce((a, b) => a + b, 0);
    const byStatus = [...observed.statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status}: ${n}`)
      .join(', ');
    console.log(
      `hostile mock-server suite (seed ${seed}): ${cases} generated cases in ${seconds} s; ` +
        `${answers} answers to well-formed requests (${byStatus}); largest memory growth ` +
        `${(largestGrowth / 1024 / 1024).toFixed(1)} MiB; slowest answer ${observed.slowestMs.toFixed(0)} ms`,
    );
    expect(cases).toBeGreaterThanOrEqual(20);
    expect(answers).toBeGreaterThan(0);
    expect(observed.statuses.has(500)).toBe(false);
    expect(largestGrowth).toBeLessThan(MEMORY_BOUND_BYTES);
    // Every concurrency slot came back: as many slow requests as there are slots, all admitted at
    // once. The server gives a slot back as its exchange ends, so with every case over none may
    // still be held, not even for a moment.
    const finals = await Promise.all(
      Array.from({ length: SLOTS }, () => fetch(`${server.url}/slow`).then((r) => r.status)),
    );
    expect(finals).toEqual(Array.from({ length: SLOTS }, () => 200));
    expect(escaped).toEqual([]);
    expect(prototypeSnapshot()).toEqual(prototype);
  }, 60_000);
});

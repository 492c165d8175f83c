import { describe, expect, it } from 'vitest';
import {
  type ClientEvents,
  isCircuitOpenError,
  isClientClosedError,
  isRateLimitError,
  isRetryBudgetExhaustedError,
  isTimeoutError,
  LimitedClient,
  type LimitedClientOptions,
  MemoryStateStore,
  type StateStore,
  type TimeoutError,
} from '../../src/index.js';
import { FakeClock, flush, type Handler, networkError, respond, scriptedFetch } from './helpers.js';

function setup(handler: Handler, options: LimitedClientOptions = {}) {
  const clock = new FakeClock();
  const fetch = scriptedFetch(clock, handler);
  const client = new LimitedClient('https://api.example.com', {
    fetch,
    clock,
    coldStart: false,
    ...options,
  });
  const events: { name: keyof ClientEvents; event: unknown }[] = [];
  for (const name of [
    'retry',
    'give-up',
    'budget-exhausted',
    'circuit-open',
    'held',
    'rate-limited',
  ] as const) {
    client.on(name, (event) => events.push({ name, event }));
  }
  const named = <K extends keyof ClientEvents>(name: K) =>
    events.filter((e) => e.name === name).map((e) => e.event as ClientEvents[K]);
  return { clock, fetch, client, named };
}

const sequence =
  (...answers: (number | Error | Response)[]): Handler =>
  (_call, i) => {
    const a = answers[Math.min(i, answers.length - 1)];
    if (a instanceof Error) throw a;
    if (a instanceof Response) return a.clone();
    return respond(a as number);
  };

describe('retries', () => {
  it('retries a GET after 503s with full-jitter backoff, within the ceiling each time', async () => {
    const { clock, fetch, client, named } = setup(sequence(503, 503, 200));
    const p = client.get('/x');
    await clock.until(p, 60_000, 1);
    expect((await p).status).toBe(200);
    expect(fetch.calls).toHaveLength(3);
    const retries = named('retry');
    expect(retries.map((r) => [r.attempt, r.delaySource, r.status])).toEqual([
      [2, 'backoff', 503],
      [3, 'backoff', 503],
    ]);
    expect(retries[0]?.delayMs).toBeLessThanOrEqual(100);
    expect(retries[1]?.delayMs).toBeLessThanOrEqual(200);
    const gaps = [1, 2].map((i) => (fetch.calls[i]?.at ?? 0) - (fetch.calls[i - 1]?.at ?? 0));
    expect(gaps[0]).toBeGreaterThanOrEqual(retries[0]?.delayMs ?? 0);
    expect(gaps[1]).toBeGreaterThanOrEqual(retries[1]?.delayMs ?? 0);
  });

  it("waits the server's Retry-After (never earlier, at most 5 % more) and holds the host meanwhile", async () => {
    const { clock, fetch, client, named } = setup(
      sequence(respond(429, { 'retry-after': '2' }), 200, 200),
    );
    const first = client.get('/a');
    await flush();
    const other = client.get('/b'); // sent after the 429: must wait for the hold too
    await clock.until(Promise.all([first, other]), 60_000, 10);
    expect(fetch.calls).toHaveLength(3);
    const [a, b, c] = fetch.calls;
    expect((b?.at ?? 0) - (a?.at ?? 0)).toBeGreaterThanOrEqual(2000);
    expect((c?.at ?? 0) - (a?.at ?? 0)).toBeGreaterThanOrEqual(2000);
    expect((b?.at ?? 0) - (a?.at ?? 0)).toBeLessThanOrEqual(2100 + 10);
    expect(named('retry')[0]).toMatchObject({ delaySource: 'retry-after', status: 429 });
    expect(named('held').some((h) => h.reason === 'retry-after')).toBe(true);
  });

  it('reports the wait a retry actually makes after a 429 without timing: the adaptive pace', async () => {
    const { clock, fetch, client, named } = setup(sequence(429, 200));
    const p = client.get('/x');
    await clock.until(p, 60_000, 1);
    const [retry] = named('retry');
    expect(retry).toMatchObject({ delaySource: 'pace', status: 429 });
    const gap = (fetch.calls[1]?.at ?? 0) - (fetch.calls[0]?.at ?? 0);
    expect(gap).toBe(retry?.delayMs);
    // Refused at its first request, with nothing accepted yet: paced at the lowest rate, half a
    // request a second, so the retry goes 2 s later.
    expect(gap).toBe(2000);
    // And growing back since (the cubic curve).
    expect(client.stats().hosts['https://api.example.com']?.paceRate).toBeGreaterThan(0.5);
  });

  it('reports the wait after a spent policy without a reset: the fallback hold', async () => {
    const spent = respond(429, { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0' });
    const { clock, fetch, client, named } = setup(sequence(spent, 200));
    const p = client.get('/x');
    await clock.until(p, 60_000, 1);
    const [retry] = named('retry');
    expect(retry).toMatchObject({ delaySource: 'fallback-hold', status: 429 });
    const gap = (fetch.calls[1]?.at ?? 0) - (fetch.calls[0]?.at ?? 0);
    expect(gap).toBe(retry?.delayMs);
    expect(gap).toBeGreaterThanOrEqual(1000);
  });

  it("reports the Retry-After wait with the hold's own jitter, drawn once", async () => {
    const { clock, fetch, client, named } = setup(
      sequence(respond(429, { 'retry-after': '20' }), 200),
    );
    const p = client.get('/x');
    await clock.until(p, 60_000, 1);
    const gap = (fetch.calls[1]?.at ?? 0) - (fetch.calls[0]?.at ?? 0);
    expect(named('retry')[0]).toMatchObject({ delaySource: 'retry-after', delayMs: gap });
    expect(client.stats().hosts['https://api.example.com']?.holdUntil).toBe(0);
  });

  it('counts in stats().rateLimited every answer the rate-limited event reports', async () => {
    const { clock, client, named } = setup(
      sequence(respond(503, { 'retry-after': '1' }), respond(429, { 'retry-after': '1' }), 200),
    );
    const p = client.get('/x');
    await clock.until(p, 60_000, 10);
    expect(named('rate-limited')).toHaveLength(2);
    expect(client.stats().hosts['https://api.example.com']?.rateLimited).toBe(2);
  });

  it('returns a 429 at once when the server asks for more than maxRetryAfterMs', async () => {
    const { clock, fetch, client, named } = setup(sequence(respond(429, { 'retry-after': '120' })));
    const p = client.get('/x');
    const elapsed = await clock.until(p, 10_000, 1);
    expect((await p).status).toBe(429);
    expect(elapsed).toBe(0);
    expect(fetch.calls).toHaveLength(1);
    expect(named('give-up')[0]).toMatchObject({
      reason: 'retry-after-too-long',
      status: 429,
      attempts: 1,
    });
  });

  it('rejects a request that a learned hold would keep past maxRetryAfterMs, without sending it', async () => {
    const { clock, fetch, client } = setup(
      sequence(
        respond(200, { 'ratelimit-policy': '"day";q=1000;w=86400', ratelimit: '"day";r=0;t=3600' }),
      ),
    );
    await client.get('/first');
    const error = await client.get('/second').catch((e) => e);
    expect(isRateLimitError(error)).toBe(true);
    expect(error.policy).toBe('day');
    // The server's reset is an hour away; the client probes after maxRetryAfterMs (60 s).
    expect(error.retryAfterMs).toBe(60_000);
    expect(fetch.calls).toHaveLength(1);
    expect(clock.pending).toBe(0);
  });

  it('a hostile Retry-After holds the host for maxRetryAfterMs at most, then one probe lets the server correct it', async () => {
    // A Unix timestamp sent as delay-seconds: about 56 years, clamped by the parser to 366 days.
    let healthy = false;
    const { clock, fetch, client } = setup(() =>
      healthy ? respond(200) : respond(503, { 'retry-after': '1764000000' }),
    );
    expect((await client.get('/x')).status).toBe(503); // returned at once: longer than allowed
    const refused = await client.get('/x').catch((e) => e);
    expect(isRateLimitError(refused)).toBe(true);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(60_000 + 1000);
    expect(fetch.calls).toHaveLength(1);
    healthy = true;
    await clock.advance(61_000);
    expect((await client.get('/x')).status).toBe(200); // the probe
    expect((await client.get('/x')).status).toBe(200); // and the host is open again
    expect(fetch.calls).toHaveLength(3);
  });

  it('while the probe of a capped hold is out, other calls are refused, not sent', async () => {
    const { clock, fetch, client } = setup((_call, i) =>
      i === 0
        ? respond(429, { 'retry-after': '86400' })
        : clock.sleep(500).then(() => respond(429, { 'retry-after': '86400' })),
    );
    expect((await client.get('/x')).status).toBe(429);
    await clock.advance(61_000);
    const probe = client.get('/x');
    await flush();
    expect(isRateLimitError(await client.get('/y').catch((e) => e))).toBe(true);
    await clock.until(probe);
    expect((await probe).status).toBe(429);
    expect(fetch.calls).toHaveLength(2);
    expect(isRateLimitError(await client.get('/z').catch((e) => e))).toBe(true);
  });

  it('retries a 429 whatever the method, even a POST without a key', async () => {
    const { clock, fetch, client } = setup(sequence(respond(429, { 'retry-after': '1' }), 201));
    const p = client.post('/charge', { amount: 5 }, { idempotencyKey: false });
    await clock.until(p);
    expect((await p).status).toBe(201);
    expect(fetch.calls).toHaveLength(2);
  });

  it('retries a keyed POST after a reset to a host that honours keys, with the same key on every attempt', async () => {
    const { clock, fetch, client } = setup(
      sequence(networkError('ECONNRESET'), networkError('UND_ERR_SOCKET'), 201),
      { idempotency: { honoured: true } },
    );
    const p = client.post('/charge', { amount: 5 });
    await clock.until(p);
    expect((await p).status).toBe(201);
    const keys = fetch.calls.map((c) => c.headers.get('idempotency-key'));
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(fetch.calls.map((c) => c.body)).toEqual(Array(3).fill('{"amount":5}'));
    // A second call gets its own key.
    const q = client.post('/charge', { amount: 6 });
    await clock.until(q);
    expect(fetch.calls[3]?.headers.get('idempotency-key')).not.toBe(keys[0]);
  });

  it('does not retry a POST without a key after a reset or a 503', async () => {
    const reset = networkError('ECONNRESET');
    const { fetch, client } = setup(sequence(reset));
    await expect(client.post('/charge', { a: 1 }, { idempotencyKey: false })).rejects.toBe(reset);
    expect(fetch.calls).toHaveLength(1);
    const other = setup(sequence(503, 200), { idempotency: false });
    const r = await other.client.post('/charge', { a: 1 });
    expect(r.status).toBe(503);
    expect(other.fetch.calls).toHaveLength(1);
  });

  it('does not retry permanent failures', async () => {
    const { fetch, client } = setup(sequence(networkError('ENOTFOUND')));
    await expect(client.get('/x')).rejects.toThrow('fetch failed');
    expect(fetch.calls).toHaveLength(1);
    const four = setup(sequence(400, 200));
    expect((await four.client.get('/x')).status).toBe(400);
    expect(four.fetch.calls).toHaveLength(1);
  });

  it("sends a stream body without the caller's `duplex`, which fetch requires", async () => {
    const { fetch, client } = setup(sequence(201));
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('streamed'));
        c.close();
      },
    });
    const r = await client.put('/upload', stream);
    expect(r.status).toBe(201);
    expect(fetch.calls[0]?.body).toBe('streamed');
  });

  it('does not resend a stream body, unless createBody can recreate it', async () => {
    const { clock, fetch, client, named } = setup(sequence(503, 503, 200));
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('chunk'));
        c.close();
      },
    });
    const r = await client.put('/upload', stream, { duplex: 'half' } as RequestInit);
    expect(r.status).toBe(503);
    expect(named('give-up')[0]?.reason).toBe('body-not-replayable');
    let made = 0;
    const p = client.put('/upload', undefined, {
      createBody: () => {
        made++;
        return new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode(`chunk ${made}`));
            c.close();
          },
        });
      },
    });
    await clock.until(p);
    expect((await p).status).toBe(200);
    expect(made).toBe(2);
    expect(fetch.calls.slice(1).map((c) => c.body)).toEqual(['chunk 1', 'chunk 2']);
  });

  it('stops after `retries` and returns the last response', async () => {
    const { clock, fetch, client, named } = setup(sequence(503), { retry: { retries: 2 } });
    const p = client.get('/x');
    await clock.until(p);
    expect((await p).status).toBe(503);
    expect(fetch.calls).toHaveLength(3);
    expect(named('give-up')[0]).toMatchObject({ reason: 'retries-exhausted', attempts: 3 });
  });

  it('retries a 409 of a keyed POST (an earlier attempt still running) to a host that honours keys, with backoff, until the stored answer', async () => {
    const { clock, fetch, client, named } = setup(
      (_call, i) =>
        i === 0
          ? new Promise<Response>(() => {}) // the first attempt times out here
          : i < 3
            ? respond(409, {}, '{"error":"idempotency_key_in_use"}')
            : respond(201, {}, '{"charged":1}'),
      { attemptTimeoutMs: 500, idempotency: { honoured: true } },
    );
    const p = client.post('/charge', { amount: 5 });
    await clock.until(p);
    expect((await p).status).toBe(201);
    expect(fetch.calls).toHaveLength(4);
    expect(new Set(fetch.calls.map((c) => c.headers.get('idempotency-key'))).size).toBe(1);
    expect(named('retry').map((r) => [r.status, r.delaySource])).toEqual([
      [undefined, 'backoff'],
      [409, 'backoff'],
      [409, 'backoff'],
    ]);
  });

  it('does not retry a 409 without a key: a real conflict', async () => {
    const { fetch, client } = setup(sequence(409));
    expect((await client.put('/doc', 'v2')).status).toBe(409);
    expect((await client.post('/doc', 'v2', { idempotencyKey: false })).status).toBe(409);
    expect(fetch.calls).toHaveLength(2);
  });

  it('lets the caller replace the rule, per client or per call', async () => {
    const { clock, fetch, client } = setup(sequence(409, 200), {
      retry: { shouldRetry: (c) => c.response?.status === 409 },
    });
    const p = client.get('/x');
    await clock.until(p);
    expect((await p).status).toBe(200);
    const q = client.get('/x', { retry: false });
    await clock.until(q);
    expect(fetch.calls).toHaveLength(3);
  });
});

describe('retry budget', () => {
  it('refuses retries past the budget: the last response comes back, an event says why', async () => {
    const { clock, client, fetch, named } = setup(sequence(503), {
      retryBudget: { ratio: 0, minPerSecond: 0.1 }, // one retry per 10 s window
      circuitBreaker: false,
    });
    const a = client.get('/a');
    await clock.until(a);
    const b = client.get('/b');
    await clock.until(b);
    expect((await b).status).toBe(503);
    expect(fetch.calls).toHaveLength(3); // a, its one retry, b
    expect(named('budget-exhausted')).toHaveLength(2); // a's second retry, b's first
    expect(named('give-up').map((g) => g.reason)).toEqual(['budget-exhausted', 'budget-exhausted']);
    expect(client.stats().hosts['https://api.example.com']?.budgetExhausted).toBe(2);
  });

  it('rejects with RetryBudgetExhaustedError when there is no response to return', async () => {
    const reset = networkError();
    const { client } = setup(sequence(reset), {
      retryBudget: { ratio: 0, minPerSecond: 0 },
      circuitBreaker: false,
    });
    const error = await client.get('/x').catch((e) => e);
    expect(isRetryBudgetExhaustedError(error)).toBe(true);
    expect(error.cause).toBe(reset);
    expect(error.attempts).toBe(1);
  });

  it('is configured per host', async () => {
    const { clock, client, fetch } = setup(sequence(503), {
      retryBudget: { ratio: 0, minPerSecond: 0 },
      circuitBreaker: false,
      hosts: { 'api.example.com': { retryBudget: { minPerSecond: 10 } } },
    });
    const p = client.get('/x');
    await clock.until(p);
    expect(fetch.calls).toHaveLength(4);
  });
});

describe('circuit breaker', () => {
  it('opens after consecutive failures, fails fast saying when, half-opens, closes on a probe', async () => {
    let down = true;
    const { clock, client, fetch, named } = setup(() => (down ? respond(500) : respond(200)), {
      retry: false,
      circuitBreaker: { consecutiveFailures: 3, coolDownMs: 5000 },
    });
    for (let i = 0; i < 3; i++) await client.get('/x');
    const error = await client.get('/x').catch((e) => e);
    expect(isCircuitOpenError(error)).toBe(true);
    expect(error.retryAt).toBe(clock.now() + 5000);
    expect(error.message).toContain('circuit open until');
    expect(fetch.calls).toHaveLength(3);
    expect(named('circuit-open')).toHaveLength(1);
    down = false;
    await clock.advance(5000);
    expect((await client.get('/x')).status).toBe(200);
    expect(client.stats().hosts['https://api.example.com']?.circuit).toBe('closed');
  });

  it("does not count a caller's mistake, a permanent failure or a 501 as the host failing", async () => {
    const failures: (Error | Response)[] = [
      new TypeError('RequestInit: duplex option is required when sending a body.'),
      networkError('ENOTFOUND'),
      respond(501),
      new TypeError('Request with GET/HEAD method cannot have body.'),
    ];
    const { client, fetch } = setup(sequence(...failures, ...failures, ...failures), {
      retry: false,
      circuitBreaker: { consecutiveFailures: 2 },
    });
    for (let i = 0; i < 12; i++) await client.get('/x').catch(() => {});
    expect(fetch.calls).toHaveLength(12);
    expect(client.stats().hosts['https://api.example.com']?.circuit).toBe('closed');
  });

  it('gives the half-open probe back when its error says nothing about the host', async () => {
    let answer: () => Response = () => respond(500);
    const { clock, client } = setup(() => answer(), {
      retry: false,
      circuitBreaker: { consecutiveFailures: 1, coolDownMs: 1000 },
    });
    await client.get('/x');
    await clock.advance(1000);
    answer = () => {
      throw new TypeError('Request with GET/HEAD method cannot have body.');
    };
    await expect(client.get('/x')).rejects.toThrow('cannot have body');
    answer = () => respond(200);
    expect((await client.get('/x')).status).toBe(200); // the probe slot came back
    expect(client.stats().hosts['https://api.example.com']?.circuit).toBe('closed');
  });

  it('does not count 429s as failures', async () => {
    const { clock, client } = setup(sequence(respond(429, { 'retry-after': '0' })), {
      retry: false,
      circuitBreaker: { consecutiveFailures: 2 },
    });
    let answered = 0;
    for (let i = 0; i < 10; i++) {
      // Each 429 slows the host's pace down: time has to pass for the next call. Past 10 s of
      // nothing but 429s the host is taken as refusing, and a call that would wait is refused.
      const p = client.get('/x').catch((e: unknown) => e);
      await clock.until(p, 60_000, 100);
      const outcome = await p;
      if (outcome instanceof Response) {
        expect(outcome.status).toBe(429);
        answered++;
      } else {
        expect(isRateLimitError(outcome)).toBe(true);
      }
    }
    expect(answered).toBeGreaterThanOrEqual(5);
    expect(client.stats().hosts['https://api.example.com']?.circuit).toBe('closed');
  });

  it('refuses a retry once it opens, returning the last response', async () => {
    const { clock, client, named } = setup(sequence(500), {
      circuitBreaker: { consecutiveFailures: 2 },
    });
    const p = client.get('/x');
    await clock.until(p);
    expect((await p).status).toBe(500);
    expect(named('give-up').at(-1)).toMatchObject({ reason: 'circuit-open', attempts: 2 });
  });
});

describe('timeouts and aborts', () => {
  const hang: Handler = () => new Promise<Response>(() => {});

  it('times out an attempt, retries it (GET), and times out overall', async () => {
    const { clock, fetch, client } = setup(hang, { attemptTimeoutMs: 1000, timeoutMs: 2500 });
    const p = client.get('/slow').catch((e) => e);
    await clock.until(p, 10_000, 50);
    const error = (await p) as TimeoutError;
    expect(isTimeoutError(error)).toBe(true);
    expect(error.scope).toBe('total');
    expect(error.timeoutMs).toBe(2500);
    expect(fetch.calls.length).toBeGreaterThanOrEqual(2);
  });

  it('gives up before a backoff that would end past the deadline', async () => {
    const { clock, client, named } = setup(sequence(respond(503, { 'retry-after': '5' })), {
      timeoutMs: 3000,
    });
    const p = client.get('/x');
    await clock.until(p);
    expect((await p).status).toBe(503);
    expect(named('give-up')[0]?.reason).toBe('deadline');
  });

  it("the caller's signal aborts a backoff sleep at once and leaves no timer", async () => {
    // A 500 without Retry-After: the retry sleeps a backoff (at least 1 s here), no hold involved.
    const { clock, client, fetch, named } = setup(sequence(500), {
      retry: { baseDelayMs: 5000, maxDelayMs: 5000 },
    });
    const controller = new AbortController();
    const p = client.get('/x', { signal: controller.signal }).catch((e) => e);
    await flush();
    expect(named('retry')[0]).toMatchObject({ delaySource: 'backoff', status: 500 });
    expect(named('held')).toHaveLength(0);
    expect(clock.pending).toBe(1); // the sleep
    controller.abort(new Error('stop'));
    expect(((await p) as Error).message).toBe('stop');
    expect(clock.pending).toBe(0);
    expect(fetch.calls).toHaveLength(1);
  });

  it("the caller's signal aborts a retry waiting in the host's hold at once and leaves no timer", async () => {
    const { clock, client, fetch, named } = setup(sequence(respond(503, { 'retry-after': '30' })));
    const controller = new AbortController();
    const p = client.get('/x', { signal: controller.signal }).catch((e) => e);
    await clock.advance(100);
    expect(fetch.calls).toHaveLength(1);
    expect(named('held').map((h) => h.reason)).toEqual(['retry-after']);
    controller.abort(new Error('stop'));
    expect(((await p) as Error).message).toBe('stop');
    expect(clock.pending).toBe(0);
  });

  it("the caller's signal aborts an attempt in flight", async () => {
    const { client } = setup(hang);
    const controller = new AbortController();
    const p = client.get('/x', { signal: controller.signal });
    await flush();
    controller.abort();
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('close()', () => {
  it('stops a call backing off between retries: it rejects with ClientClosedError, nothing more is sent', async () => {
    const { clock, fetch, client } = setup(sequence(500), {
      retry: { baseDelayMs: 1000, maxDelayMs: 1000 },
    });
    const p = client.get('/x').catch((e) => e);
    await flush();
    expect(fetch.calls).toHaveLength(1);
    await client.close();
    expect(isClientClosedError(await p)).toBe(true);
    await clock.advance(10_000);
    expect(fetch.calls).toHaveLength(1);
    expect(clock.pending).toBe(0);
  });

  it("stops a retry waiting in the host's hold: it rejects, it does not resolve to the 429", async () => {
    const { clock, fetch, client } = setup(sequence(respond(429, { 'retry-after': '30' }), 200));
    const p = client.get('/x').catch((e) => e);
    await clock.advance(100);
    await client.close();
    expect(isClientClosedError(await p)).toBe(true);
    await clock.advance(60_000);
    expect(fetch.calls).toHaveLength(1);
  });

  it('refuses a retry whose admission the store answers only after close()', async () => {
    const clock = new FakeClock();
    const fetch = scriptedFetch(clock, () => respond(429, { 'retry-after': '30' }));
    const memory = new MemoryStateStore({ clock });
    let updates = 0;
    let client: LimitedClient | undefined;
    const store: StateStore = {
      update(key, transaction, ttlMs) {
        // 1 admits, 2 settles the 429, 3 takes a retry, 4 asks to admit the retry: close now.
        if (++updates === 4) void client?.close();
        return Promise.resolve(memory.update(key, transaction, ttlMs));
      },
      delete: (key) => memory.delete(key),
    };
    client = new LimitedClient('https://api.example.com', {
      fetch,
      clock,
      store,
      coldStart: false,
    });
    const p = client.get('/x').catch((e) => e);
    await flush();
    expect(isClientClosedError(await p)).toBe(true);
    expect(clock.pending).toBe(0);
    expect(fetch.calls).toHaveLength(1);
  });

  it('lets an attempt on the wire finish, then neither backs off nor retries', async () => {
    const { clock, fetch, client } = setup((_call, i) =>
      clock.sleep(1000).then(() => respond(i === 0 ? 503 : 200)),
    );
    const retried = client.get('/retried').catch((e) => e);
    await flush();
    await client.close();
    await clock.advance(1000);
    expect(isClientClosedError(await retried)).toBe(true);
    await clock.advance(10_000);
    expect(fetch.calls).toHaveLength(1);
  });
});

describe('costs and the client bucket', () => {
  it('charges each call its cost against rate and burst', async () => {
    const { clock, fetch, client } = setup(sequence(200), { rate: 2, burst: 6 });
    const calls = [client.get('/a', { cost: 5 }), client.get('/b', { cost: 5 })];
    await clock.until(Promise.all(calls), 60_000, 100);
    // 6 units at start; the second call needs 4 more: 2 s at 2 units per second.
    expect((fetch.calls[1]?.at ?? 0) - (fetch.calls[0]?.at ?? 0)).toBe(2000);
  });

  it('takes the cost from a function of the request', async () => {
    const { clock, fetch, client } = setup(sequence(200), {
      rate: 1,
      burst: 3,
      cost: ({ url }) => (url.includes('search') ? 3 : 1),
    });
    const calls = [client.get('/search'), client.get('/item')];
    await clock.until(Promise.all(calls), 60_000, 100);
    expect((fetch.calls[1]?.at ?? 0) - (fetch.calls[0]?.at ?? 0)).toBe(1000);
  });

  it('refuses a cost the bucket can never pay', async () => {
    const { client } = setup(sequence(200), { rate: 1, burst: 2 });
    await expect(client.get('/x', { cost: 3 })).rejects.toThrow(
      'invalid option init.cost: must be a number from 0 to 2',
    );
  });
});

describe('edge cases', () => {
  it('a createBody that throws gives its slot back: nothing was sent', async () => {
    const { client, fetch } = setup(sequence(200), { concurrency: 1 });
    const broken = client.put('/x', undefined, {
      createBody: () => {
        throw new Error('no body today');
      },
    });
    await expect(broken).rejects.toThrow('no body today');
    expect(client.stats().hosts['https://api.example.com']?.inFlight).toBe(0);
    expect((await client.get('/y')).status).toBe(200);
    expect(fetch.calls).toHaveLength(1);
  });

  it('honours a Retry-After equal to maxRetryAfterMs (the limit compares the server wait, not the jitter)', async () => {
    const { clock, fetch, client } = setup(sequence(respond(429, { 'retry-after': '60' }), 200));
    const p = client.get('/x');
    await clock.until(p, 120_000, 1000);
    expect((await p).status).toBe(200);
    expect(fetch.calls).toHaveLength(2);
  });

  it('treats an AbortError from a fetch that ignores the reason as the attempt timeout', async () => {
    const clock = new FakeClock();
    let n = 0;
    const fetch = ((_input: RequestInfo | URL, init?: RequestInit) =>
      n++ === 0
        ? new Promise<Response>((_, reject) =>
            init?.signal?.addEventListener('abort', () =>
              reject(new DOMException('aborted', 'AbortError')),
            ),
          )
        : Promise.resolve(respond(200))) as typeof globalThis.fetch;
    const client = new LimitedClient('https://api.example.com', {
      fetch,
      clock,
      coldStart: false,
      attemptTimeoutMs: 1000,
    });
    const p = client.get('/x');
    await clock.until(p, 10_000, 100);
    expect((await p).status).toBe(200);
    expect(n).toBe(2);
  });
});

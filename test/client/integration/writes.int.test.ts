/**
 * Issue 23 §1 over real HTTP, against the mock server: a write runs at most once unless the host is
 * known to honour idempotency keys. With the defaults (a key attached), on a route that ignores the
 * key, a plain 500, 502, 503 or 504 after the handler ran, an attempt timeout while it runs and a
 * connection reset after it each leave exactly one side effect; a fast plain 503 that the host's
 * rules take for a load shedder does not replay a write either. On a host that honours keys
 * (declared, learned from an answer, or listed) the retried write runs once and the call succeeds.
 * Side effects are counted by the server (`stats()`), attempts by the client. The attempt timeouts
 * run on a fake clock that the client and the server share (`fake-time.ts`): the handler's 300 ms
 * and the attempt's 100 ms are the clock's, so a loaded machine cannot reorder them.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { LimitedClient, type LimitedClientOptions } from '../../../src/index.js';
import type { FaultsConfig, MockServer } from '../../../src/server/index.js';
import { isTimeoutError } from '../../../src/shared/errors.js';
import { countingFetch, FakeClock, runOnFakeTime, serverClock, until } from './fake-time.js';
import { closeAll, start } from './server.js';

afterAll(closeAll);

type Fault = { name: string; faults: FaultsConfig };

/**
 * Every way a write can fail once its side effect ran, each firing on the first request only (an
 * attempt timeout while the handler runs: {@link timedOutWrite}).
 */
const AFTER_HANDLER: Fault[] = [
  ...([500, 502, 503, 504] as const).map((status) => ({
    name: `a plain ${status}`,
    faults: { serverError: { status, when: 'after-handler' as const, times: 1 } },
  })),
  {
    name: 'a connection reset',
    faults: { reset: { when: 'after-handler' as const, times: 1 } },
  },
];

/** A server with one POST route, `/pay`. */
function payServer(faults: FaultsConfig, idempotency: boolean): Promise<MockServer> {
  return start({ routes: [{ method: 'POST', path: '/pay', idempotency, faults }] });
}

/** The route's side effects. Every call here makes one, so more than one is a repeat. */
function sideEffects(server: MockServer): number {
  return server.stats().routes['POST /pay']?.sideEffects ?? 0;
}

/** The handler's work and the attempt timeout, in milliseconds of the fake clock. */
const HANDLER_MS = 300;
const ATTEMPT_TIMEOUT_MS = 100;

/**
 * A POST on `/pay` whose attempt times out while its handler runs, on one fake clock for the
 * client and the server: sent, held by the handler for {@link HANDLER_MS}, given up by the client
 * after {@link ATTEMPT_TIMEOUT_MS} while the handler goes on. Resolves once that attempt has left
 * the wire, the call still running (its retries are the caller's to drive).
 */
async function timedOutWrite(idempotency: boolean, options: LimitedClientOptions = {}) {
  const clock = new FakeClock();
  const held = serverClock(clock);
  const server = await start({
    clock: held,
    routes: [{ method: 'POST', path: '/pay', idempotency, faults: { latencyMs: HANDLER_MS } }],
  });
  const wire = countingFetch();
  const client = new LimitedClient(server.url, {
    clock,
    fetch: wire.fetch,
    attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
    retry: { retries: 10, maxDelayMs: 200 },
    ...options,
  });
  let done = false;
  const outcome = settle(client.post('/pay', { amount: 42 })).finally(() => {
    done = true;
  });
  await until(() => held.sleeping === 1, 'the handler to start');
  await clock.advance(ATTEMPT_TIMEOUT_MS);
  await until(() => wire.inFlight === 0, 'the timed-out attempt to leave the wire');
  return { clock, server, wire, client, outcome, done: () => done };
}

/** The call's response, or what it rejected with. */
function settle(call: Promise<Response>): Promise<Response | unknown> {
  return call.catch((error: unknown) => error);
}

describe.concurrent('a write to a host that ignores keys runs once', () => {
  for (const { name, faults } of AFTER_HANDLER) {
    it(`with the defaults, after ${name} (the side effect done): one attempt, one side effect`, async () => {
      const server = await payServer(faults, false);
      const client = new LimitedClient(server.url);
      const outcome = await settle(client.post('/pay', { amount: 42 }));
      if (outcome instanceof Response) expect(outcome.status).toBeGreaterThanOrEqual(500);
      expect(client.stats().totals.attempts).toBe(1);
      expect(sideEffects(server)).toBe(1);
      expect(server.stats().admitted).toBe(1);
      await client.close();
    });
  }

  it('with the defaults, after an attempt timeout (the handler still running): one attempt, one side effect', async () => {
    const { clock, server, wire, client, outcome, done } = await timedOutWrite(false);
    // The handler ends at 300 ms. A retry would be on the wire within 5 s: its backoff is 200 ms
    // at most, and the attempt given up counts as in flight for a second or two after it.
    await clock.advance(5_000);
    await until(() => done() || wire.inFlight > 0, 'the call to end or send again');
    expect(client.stats().totals.attempts).toBe(1);
    expect(server.stats().admitted).toBe(1);
    expect(isTimeoutError(await outcome)).toBe(true);
    expect(sideEffects(server)).toBe(1);
    await client.close();
  });

  it('a fast plain 503 the rules take for a load shedder slows the host, but a write without a key runs once', async () => {
    const server = await start({
      routes: [
        { method: 'GET', path: '/ok' },
        {
          method: 'POST',
          path: '/pay',
          idempotency: false,
          faults: { serverError: { status: 503, when: 'after-handler', times: 1 } },
        },
      ],
    });
    const client = new LimitedClient(server.url);
    const retries: unknown[] = [];
    client.on('retry', (e) => retries.push(e.status));
    // An acceptance just before: a fast 503 now reads as a shedder refusing some of the traffic.
    expect((await client.get('/ok')).status).toBe(200);
    const answer = await client.post('/pay', { amount: 1 }, { idempotencyKey: false });
    expect(answer.status).toBe(503);
    expect(retries).toEqual([]);
    expect(server.stats().routes['POST /pay']).toMatchObject({ sideEffects: 1, serverErrors: 1 });
    expect(client.stats().totals.attempts).toBe(2);
    await client.close();
  });

  it('is sent again when the answer proves it was not processed: a 429, a 503 with Retry-After', async () => {
    // On fake time: the second call meets the window the first one's retry spent, whatever the load.
    const clock = new FakeClock();
    const server = await start({
      clock,
      routes: [
        {
          method: 'POST',
          path: '/pay',
          idempotency: false,
          faults: { unavailable: { times: 1, retryAfterSeconds: 1 } },
          limits: [{ algorithm: 'fixed-window', limit: 1, windowMs: 1000, key: 'global' }],
        },
      ],
    });
    // Learning off, so that the second call is sent into the spent window and refused.
    const wire = countingFetch();
    const client = new LimitedClient(server.url, { learnLimits: false, clock, fetch: wire.fetch });
    const post = async (n: number) => {
      const call = client.post('/pay', { n });
      await runOnFakeTime(clock, wire, call);
      return (await call).status;
    };
    // The first is refused by the fault (503, Retry-After: 1) before its handler, then goes.
    expect(await post(1)).toBe(200);
    // The second is refused by the limit (429, Retry-After), then goes in the next window.
    expect(await post(2)).toBe(200);
    expect(server.stats().routes['POST /pay']).toMatchObject({
      sideEffects: 2,
      unavailable: 1,
      rejected: 1,
    });
    await client.close();
  });

  it('is sent again after a refused connection (nothing reached a server), even without a key', async () => {
    const server = await start({ routes: [{ path: '*' }] });
    const dead = server.url;
    await server.close();
    const client = new LimitedClient(dead, { retry: { retries: 2, maxDelayMs: 20 } });
    const error = await settle(client.post('/pay', { amount: 1 }, { idempotencyKey: false }));
    expect(error).not.toBeInstanceOf(Response);
    expect(client.stats().totals.attempts).toBe(3);
    await client.close();
  });
});

describe.concurrent('a write to a host that honours keys is retried and runs once', () => {
  for (const { name, faults } of AFTER_HANDLER) {
    it(`declared (idempotency.honoured), after ${name}: the call succeeds, one side effect`, async () => {
      const server = await payServer(faults, true);
      const client = new LimitedClient(server.url, { idempotency: { honoured: true } });
      const answer = await client.post('/pay', { amount: 42 });
      expect(answer.status).toBe(200);
      expect(client.stats().totals.attempts).toBeGreaterThan(1);
      expect(sideEffects(server)).toBe(1);
      await client.close();
    });
  }

  it('declared (idempotency.honoured), after an attempt timeout: the call succeeds, one side effect', async () => {
    const { clock, server, wire, client, outcome } = await timedOutWrite(true, {
      idempotency: { honoured: true },
    });
    // The retries get a 409 while the handler runs, then its stored answer: none is held.
    await runOnFakeTime(clock, wire, outcome);
    const answer = await outcome;
    expect(answer).toBeInstanceOf(Response);
    expect((answer as Response).status).toBe(200);
    expect((answer as Response).headers.get('idempotent-replayed')).toBe('true');
    expect(client.stats().totals.attempts).toBeGreaterThan(1);
    expect(sideEffects(server)).toBe(1);
    await client.close();
  });

  it('learned from a failing answer that echoes the key: the 503 itself teaches, the retry gets the replay', async () => {
    const server = await payServer(
      { serverError: { status: 503, when: 'after-handler', times: 1 } },
      true,
    );
    const client = new LimitedClient(server.url);
    const answer = await client.post('/pay', { amount: 42 });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('idempotent-replayed')).toBe('true');
    expect(server.stats().routes['POST /pay']).toMatchObject({ sideEffects: 1, replays: 1 });
    await client.close();
  });

  it('learned from a first answer: before it a reset is final, after it a reset is retried', async () => {
    const server = await start({
      routes: [
        {
          method: 'POST',
          path: '/pay',
          faults: { reset: { when: 'after-handler', times: 1 } },
        },
        { method: 'POST', path: '/refund', faults: { reset: { when: 'after-handler', times: 1 } } },
        { method: 'POST', path: '/ok' },
      ],
    });
    const client = new LimitedClient(server.url);
    // Nothing known yet: the write that lost its answer is not sent again.
    expect(await settle(client.post('/pay', { amount: 1 }))).not.toBeInstanceOf(Response);
    expect(server.stats().routes['POST /pay']).toMatchObject({ sideEffects: 1, replays: 0 });
    // An answer echoes the key: the host honours keys, for this client from now on.
    const taught = await client.post('/ok', {});
    expect(taught.headers.get('idempotency-key')).not.toBeNull();
    const refund = await client.post('/refund', { amount: 1 });
    expect(refund.status).toBe(200);
    expect(server.stats().routes['POST /refund']).toMatchObject({ sideEffects: 1, replays: 1 });
    await client.close();
  });

  it('listed (api.stripe.com, mapped to the loopback server): retried; an unlisted host is not', async () => {
    const server = await start({
      routes: [
        {
          method: 'POST',
          path: '/v1/charges',
          faults: { reset: { when: 'after-handler', times: 1 } },
        },
        {
          method: 'POST',
          path: '/repos/o/r/issues',
          faults: { reset: { when: 'after-handler', times: 1 } },
        },
      ],
    });
    // Real HTTP to the mock server, with the provider's URL as the client sees it.
    const toLoopback = ((input: RequestInfo | URL, init?: RequestInit) =>
      fetch(String(input).replace(/^https:\/\/[^/]+/, server.url), init)) as typeof fetch;
    const stripe = new LimitedClient('https://api.stripe.com', { fetch: toLoopback });
    const charge = await stripe.post('/v1/charges', { amount: 42 });
    expect(charge.status).toBe(200);
    expect(server.stats().routes['POST /v1/charges']).toMatchObject({ sideEffects: 1, replays: 1 });
    const github = new LimitedClient('https://api.github.com', { fetch: toLoopback });
    expect(await settle(github.post('/repos/o/r/issues', { title: 'x' }))).not.toBeInstanceOf(
      Response,
    );
    expect(server.stats().routes['POST /repos/o/r/issues']).toMatchObject({
      sideEffects: 1,
      replays: 0,
    });
    await Promise.all([stripe.close(), github.close()]);
  });

  it('honoured: false wins over the list and over what the host answers', async () => {
    const server = await start({
      routes: [
        {
          method: 'POST',
          path: '/v1/charges',
          faults: { serverError: { status: 503, when: 'after-handler', times: 1 } },
        },
      ],
    });
    const toLoopback = ((input: RequestInfo | URL, init?: RequestInit) =>
      fetch(String(input).replace(/^https:\/\/[^/]+/, server.url), init)) as typeof fetch;
    const stripe = new LimitedClient('https://api.stripe.com', {
      fetch: toLoopback,
      hosts: { 'api.stripe.com': { idempotency: { honoured: false } } },
    });
    const answer = await stripe.post('/v1/charges', { amount: 42 });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('idempotency-key')).not.toBeNull();
    expect(stripe.stats().totals.attempts).toBe(1);
    expect(server.stats().routes['POST /v1/charges']).toMatchObject({ sideEffects: 1 });
    await stripe.close();
  });
});

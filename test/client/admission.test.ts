import { describe, expect, it } from 'vitest';
import { toCost } from '../../src/client/call/cost.js';
import { Admission } from '../../src/client/queue/admission.js';
import type { AdmissionRequest } from '../../src/client/queue/admission-deps.js';
import { Slots } from '../../src/client/queue/host-slots.js';
import type { Ticket } from '../../src/client/rules/contract.js';
import { type AdmitResult, bindRules } from '../../src/client/rules/host-rules.js';
import {
  isQueueFullError,
  isQueueTimeoutError,
  isRateLimitError,
  type RateLimitError,
} from '../../src/shared/errors.js';
import { FakeClock, flush } from './helpers.js';

function setup(options: { concurrency?: number; maxQueue?: number; queueTimeoutMs?: number } = {}) {
  const clock = new FakeClock(0);
  const ticket = (n: number) => ({ kind: 'attempt' as const, seq: n, at: 0, cost: 1, first: true });
  let gate: () => AdmitResult = () => ({ ok: true, ticket: ticket(0) });
  const admitted: number[] = [];
  const held: string[] = [];
  let queued = 0;
  let seq = 0;
  /** The queue, with `acquire`: {@link Admission.admit} as a promise always. */
  class Queue extends Admission {
    acquire(r: AdmissionRequest): Promise<Ticket> {
      return Promise.resolve(this.admit(r));
    }
  }
  const a = new Queue({
    clock,
    slots: new Slots(options.concurrency ?? Number.POSITIVE_INFINITY),
    maxQueue: options.maxQueue ?? 100,
    queueTimeoutMs: options.queueTimeoutMs ?? Number.POSITIVE_INFINITY,
    tryAdmit: (cost) => {
      const r = gate();
      if (r.ok) {
        admitted.push(cost.requests);
        return { ok: true, ticket: ticket(++seq) };
      }
      return r;
    },
    giveBack: () => {},
    onQueued: () => {
      queued++;
    },
    onHeld: (_ctx, reason) => held.push(reason),
    // The registry's reasons, every rule on.
    reasons: bindRules({
      learn: {
        flightTtlMs: 1,
        jitter: { ratio: 0, maxMs: 0 },
        fallbackHoldMs: 1,
        initialWindow: 1,
      },
      bucket: { rate: 1, burst: 1 },
      budget: { ratio: 0.1, minPerSecond: 1, windowMs: 1000 },
    }),
    keepAlive: () => () => {},
  });
  const req = ({
    cost = 1,
    ...over
  }: Partial<Omit<AdmissionRequest, 'cost'>> & { cost?: number } = {}): AdmissionRequest => ({
    firstAttempt: true,
    priority: false,
    signal: undefined,
    maxWaitMs: 60_000,
    ctx: { method: 'GET', url: 'https://a.com/' },
    ...over,
    cost: toCost(cost),
  });
  return {
    a,
    clock,
    req,
    admitted,
    held,
    queued: () => queued,
    setGate: (g: () => AdmitResult) => {
      gate = g;
    },
  };
}

describe('admission', () => {
  it('admits at once while there is room, queues past the concurrency cap, FIFO', async () => {
    const { a, req, queued } = setup({ concurrency: 2 });
    const order: number[] = [];
    const all = [1, 2, 3, 4].map((i) => a.acquire(req({ cost: i })).then(() => order.push(i)));
    await flush();
    expect(order).toEqual([1, 2]);
    expect(a.queueLength).toBe(2);
    expect(queued()).toBe(2);
    a.release();
    await flush();
    expect(order).toEqual([1, 2, 3]);
    a.release();
    await Promise.all(all);
    expect(order).toEqual([1, 2, 3, 4]);
  });

  it('refuses past maxQueue with QueueFullError', async () => {
    const { a, req } = setup({ concurrency: 1, maxQueue: 1 });
    await a.acquire(req());
    const waiting = a.acquire(req());
    const error = await a.acquire(req()).catch((e) => e);
    expect(isQueueFullError(error)).toBe(true);
    expect(error.message).toBe('GET https://a.com/: queue full (1 requests waiting)');
    a.release();
    await waiting;
  });

  it('a request that aborts while queued leaves at once and takes nothing', async () => {
    const { a, req, admitted } = setup({ concurrency: 1 });
    await a.acquire(req({ cost: 1 }));
    const controller = new AbortController();
    const aborted = a.acquire(req({ cost: 7, signal: controller.signal }));
    const next = a.acquire(req({ cost: 3 }));
    await flush();
    controller.abort(new Error('user gave up'));
    await expect(aborted).rejects.toThrow('user gave up');
    expect(a.queueLength).toBe(1);
    a.release();
    await next;
    expect(admitted).toEqual([1, 3]);
  });

  it('an already aborted signal is refused before anything', async () => {
    const { a, req, admitted } = setup();
    await expect(a.acquire(req({ signal: AbortSignal.abort(new Error('no')) }))).rejects.toThrow(
      'no',
    );
    expect(admitted).toEqual([]);
  });

  it('a request that waits longer than queueTimeoutMs leaves with QueueTimeoutError, taking nothing', async () => {
    const { a, req, clock, admitted } = setup({ concurrency: 1, queueTimeoutMs: 500 });
    await a.acquire(req({ cost: 1 }));
    const late = a.acquire(req({ cost: 5 })).catch((e) => e);
    await clock.advance(499);
    expect(a.queueLength).toBe(1);
    await clock.advance(1);
    const error = await late;
    expect(isQueueTimeoutError(error)).toBe(true);
    expect(a.queueLength).toBe(0);
    expect(admitted).toEqual([1]);
  });

  it('waits out a hold on the single host timer, emitting held once', async () => {
    const { a, req, clock, setGate, held } = setup();
    let until = 1000;
    setGate(() =>
      clock.now() >= until
        ? { ok: true, ticket: { kind: 'attempt', seq: 0, at: 0, cost: 1, first: true } }
        : { ok: false, waitMs: until - clock.now(), reason: 'learned-limit', policy: 'p' },
    );
    let done = false;
    const p = a.acquire(req()).then(() => {
      done = true;
    });
    await clock.advance(999);
    expect(done).toBe(false);
    await clock.advance(1);
    await p;
    expect(held).toEqual(['learned-limit']);
    until = 0;
  });

  it('refuses with RateLimitError when the server would hold longer than allowed', async () => {
    const { a, req, setGate } = setup();
    setGate(() => ({ ok: false, waitMs: 90_000, reason: 'learned-limit', policy: 'day' }));
    const error = (await a.acquire(req({ maxWaitMs: 60_000 })).catch((e) => e)) as RateLimitError;
    expect(isRateLimitError(error)).toBe(true);
    expect(error.retryAfterMs).toBe(90_000);
    expect(error.policy).toBe('day');
    expect(error.serverWaitMs).toBe(90_000);
    expect(error.message).toBe(
      'GET https://a.com/: rate limited by policy "day": the server asks for a wait of 90000 ms, more than the 60000 ms the caller allows (maxRetryAfterMs)',
    );
  });

  it('says the wait the server asked for apart from the capped hold it recorded (Retry-After: 125)', async () => {
    const { a, req, setGate } = setup();
    // A 125 s hold recorded for at most 60 s, then a probe: the server's own end is kept apart.
    setGate(() => ({ ok: false, waitMs: 59_999, reason: 'retry-after', serverWaitMs: 125_000 }));
    const error = (await a.acquire(req({ maxWaitMs: 60_000 })).catch((e) => e)) as RateLimitError;
    expect(error).toMatchObject({ retryAfterMs: 59_999, serverWaitMs: 125_000 });
    expect(error.message).toBe(
      'GET https://a.com/: rate limited: the server asks for a wait of 125000 ms, more than the 60000 ms the caller allows (maxRetryAfterMs); a probe may go in 59999 ms',
    );
  });

  it('says so when the host refuses every request', async () => {
    const { a, req, setGate } = setup();
    setGate(() => ({
      ok: false,
      waitMs: 2000,
      reason: 'refusing',
      serverWaitMs: Number.POSITIVE_INFINITY,
    }));
    const error = (await a.acquire(req({ maxWaitMs: 60_000 })).catch((e) => e)) as RateLimitError;
    expect(error.message).toBe(
      'GET https://a.com/: rate limited: the host refuses every request; the next probe may go in 2000 ms',
    );
  });

  it("the client rate never counts as too long (it is the caller's own limit)", async () => {
    const { a, req, setGate, clock } = setup();
    let open = false;
    setGate(() =>
      open
        ? { ok: true, ticket: { kind: 'attempt', seq: 0, at: 0, cost: 1, first: true } }
        : { ok: false, waitMs: 120_000, reason: 'client-rate' },
    );
    const p = a.acquire(req({ maxWaitMs: 1000 }));
    await clock.advance(100_000);
    open = true;
    await clock.advance(20_000);
    await expect(p).resolves.toBeDefined();
  });

  it('puts retries at the front of the line', async () => {
    const { a, req } = setup({ concurrency: 1 });
    await a.acquire(req());
    const order: string[] = [];
    const first = a.acquire(req()).then(() => order.push('first'));
    const retry = a.acquire(req({ priority: true })).then(() => order.push('retry'));
    await flush();
    a.release();
    await flush();
    a.release();
    await Promise.all([first, retry]);
    expect(order).toEqual(['retry', 'first']);
  });

  // Issue 23 §3: a retry that came back went ahead of the retries already waiting, so against a
  // host that refused everything one call made all the probes and spent its retries in 0.2 s.
  it('lets retries go in the order they came back, all of them ahead of first attempts', async () => {
    const { a, req } = setup({ concurrency: 1 });
    await a.acquire(req());
    const order: string[] = [];
    const wait = (name: string, priority: boolean) =>
      a.acquire(req({ priority })).then(() => {
        order.push(name);
        a.release();
      });
    const all = [
      wait('first 1', false),
      wait('retry 1', true),
      wait('first 2', false),
      wait('retry 2', true),
      wait('retry 3', true),
    ];
    await flush();
    a.release();
    await Promise.all(all);
    expect(order).toEqual(['retry 1', 'retry 2', 'retry 3', 'first 1', 'first 2']);
  });

  it('keeps that order when the last retry in line leaves before its turn', async () => {
    const { a, req } = setup({ concurrency: 1 });
    await a.acquire(req());
    const order: string[] = [];
    const wait = (name: string, priority: boolean, signal?: AbortSignal) =>
      a.acquire(req({ priority, signal })).then(
        () => {
          order.push(name);
          a.release();
        },
        () => order.push(`${name} left`),
      );
    const leaving = new AbortController();
    const all = [
      wait('first', false),
      wait('retry 1', true),
      wait('retry 2', true, leaving.signal),
    ];
    await flush();
    leaving.abort();
    all.push(wait('retry 3', true));
    await flush();
    a.release();
    await Promise.all(all);
    expect(order).toEqual(['retry 2 left', 'retry 1', 'retry 3', 'first']);
  });

  it('close rejects everyone waiting', async () => {
    const { a, req } = setup({ concurrency: 1 });
    await a.acquire(req());
    const waiting = a.acquire(req()).catch((e) => e);
    await flush();
    a.close(() => new Error('closed'));
    expect(((await waiting) as Error).message).toBe('closed');
  });
});

/**
 * What a route does when a limit's store fails: fail closed (503) or fail open (a local share of
 * each limit), over real HTTP. The failing store here is a memory store switched off on demand;
 * `test/redis/mock-server.test.ts` does the same with Redis paused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../../src/headers/index.js';
import { scaleLimit } from '../../../src/server/http/compile.js';
import {
  createMockServer,
  type LimitConfig,
  type LimiterSpec,
  MemoryStore,
  type MockServer,
  type MockServerConfig,
  type RateLimitStore,
  type StoreErrorEvent,
  type StoreRequest,
} from '../../../src/server/index.js';
import { StoreUnavailableError } from '../../../src/shared/errors.js';
import { FakeClock } from './helpers.js';

/** A memory store that throws `StoreUnavailableError` from every call while `down`. */
class SwitchableStore implements RateLimitStore {
  readonly inner = new MemoryStore();
  down = false;

  #check(operation: string): void {
    if (this.down) throw new StoreUnavailableError(operation, 'switched off by the test');
  }
  async take(spec: LimiterSpec, key: string, request: StoreRequest) {
    this.#check('take');
    return this.inner.take(spec, key, request);
  }
  async peek(spec: LimiterSpec, key: string, request: StoreRequest) {
    this.#check('peek');
    return this.inner.peek(spec, key, request);
  }
  async refund(spec: LimiterSpec, key: string, request: StoreRequest & { receipt?: number }) {
    this.#check('refund');
    return this.inner.refund(spec, key, request);
  }
}

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(config: Omit<MockServerConfig, 'clock'>) {
  server = await createMockServer({ clock: new FakeClock(), ...config });
  const events: StoreErrorEvent[] = [];
  server.on('store-error', (event) => events.push(event));
  return { server, events };
}

function remaining(response: Response): number | undefined {
  return parseRateLimitHeaders(response.headers)?.policies[0]?.remaining;
}

async function statuses(url: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await fetch(url)).status);
  return out;
}

const eight: LimitConfig = {
  algorithm: 'fixed-window',
  limit: 8,
  windowMs: 60_000,
  name: 'minute',
};

describe('failMode', () => {
  it("'open' charges a request costing more than the local share the whole share, once at rest", async () => {
    const store = new SwitchableStore();
    const { server: s } = await start({
      store,
      routes: [
        {
          method: 'POST',
          path: '/chat',
          failMode: 'open',
          limits: [
            {
              algorithm: 'fixed-window',
              limit: 600,
              windowMs: 60_000,
              name: 'tokens',
              unit: 'tokens',
              cost: { json: 'max_tokens' },
            },
          ],
        },
      ],
    });
    const chat = (maxTokens: number) =>
      fetch(`${s.url}/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ max_tokens: maxTokens }),
      });
    store.down = true;
    // The local share is 150 of 600: a 400-token request is charged all 150, and the next waits.
    const big = await chat(400);
    expect(big.status).toBe(200);
    expect(remaining(big)).toBe(0);
    expect((await chat(1)).status).toBe(429);
    // Above the whole limit it is still a 413, decided before any store is asked.
    expect((await chat(601)).status).toBe(413);
    // Both decided on the local share.
    expect(s.stats()).toMatchObject({ admitted: 1, rejected: 1, degraded: 2 });
  });

  it("'closed' (the default) answers 503 with Retry-After while the store fails, and counts it", async () => {
    const store = new SwitchableStore();
    const { server: s, events } = await start({ store, routes: [{ path: '/x', limits: [eight] }] });
    store.down = true;
    const response = await fetch(`${s.url}/x`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    // No policy fields: nothing is known about the limit, only that the client should wait.
    const parsed = parseRateLimitHeaders(response.headers);
    expect(parsed).toMatchObject({ policies: [], retryAfterMs: 1000 });
    expect(parsed?.remaining).toBeUndefined();
    expect(await response.json()).toMatchObject({ error: 'limiter_unavailable', policy: 'minute' });
    expect(events).toMatchObject([
      { route: '* /x', policy: 'minute', operation: 'take', failMode: 'closed' },
    ]);
    expect(s.stats()).toMatchObject({ admitted: 0, rejected: 0, failedClosed: 1, degraded: 0 });
    expect(s.stats().routes['* /x']).toMatchObject({ failedClosed: 1, storeErrors: 1 });

    store.down = false;
    expect((await fetch(`${s.url}/x`)).status).toBe(200);
  });

  it("'closed' gives back what the limits before the failing one took", async () => {
    const store = new SwitchableStore();
    const working = new MemoryStore();
    const { server: s } = await start({
      store,
      routes: [
        {
          path: '/x',
          limits: [
            {
              algorithm: 'token-bucket',
              capacity: 5,
              refillPerSecond: 1,
              name: 'ok',
              store: working,
            },
            eight,
          ],
        },
      ],
    });
    store.down = true;
    expect(await statuses(`${s.url}/x`, 3)).toEqual([503, 503, 503]);
    store.down = false;
    const response = await fetch(`${s.url}/x`);
    const ok = parseRateLimitHeaders(response.headers)?.policies.find((p) => p.name === 'ok');
    expect(ok?.remaining).toBe(4);
  });

  it("'open' decides on a local share of each limit, never on no limit", async () => {
    const store = new SwitchableStore();
    const { server: s, events } = await start({
      store,
      routes: [{ path: '/x', limits: [eight], failMode: 'open', failOpenShare: 0.25 }],
    });
    store.down = true;
    const first = await fetch(`${s.url}/x`);
    expect(first.status).toBe(200);
    // The headers describe the limit being enforced: 2 (a quarter of 8), 1 left.
    expect(parseRateLimitHeaders(first.headers)).toMatchObject({ limit: 2, remaining: 1 });
    expect(await statuses(`${s.url}/x`, 3)).toEqual([200, 429, 429]);
    expect(s.stats()).toMatchObject({ admitted: 2, rejected: 2, degraded: 4, failedClosed: 0 });
    expect(events.map((e) => `${e.operation} ${e.failMode}`)).toEqual(Array(4).fill('take open'));

    // Back to the shared state, which the outage did not touch.
    store.down = false;
    const back = await fetch(`${s.url}/x`);
    expect(parseRateLimitHeaders(back.headers)).toMatchObject({ limit: 8, remaining: 7 });
    expect(s.stats().degraded).toBe(4);
  });

  it("'open' replaces only the limits whose store fails", async () => {
    const store = new SwitchableStore();
    const { server: s } = await start({
      store,
      routes: [
        {
          path: '/x',
          failMode: 'open',
          failOpenShare: 0.5,
          limits: [
            {
              algorithm: 'fixed-window',
              limit: 3,
              windowMs: 60_000,
              name: 'shared-ok',
              store: new MemoryStore(),
            },
            eight,
          ],
        },
      ],
    });
    store.down = true;
    // The working limit (3) binds before the local half of the failing one (4).
    expect(await statuses(`${s.url}/x`, 5)).toEqual([200, 200, 200, 429, 429]);
  });

  it('a release that fails is counted and reported, and crashes nothing', async () => {
    const store = new SwitchableStore();
    const { server: s, events } = await start({
      store,
      routes: [
        {
          path: '/slow',
          limits: [{ algorithm: 'concurrency', limit: 2, name: 'slots' }],
          faults: { latencyMs: 0 },
        },
      ],
    });
    // The store fails after the take, before the response ends and releases the slot.
    const inner = store.inner;
    const take = inner.take.bind(inner);
    inner.take = async (...args) => {
      const decision = await take(...args);
      store.down = true;
      return decision;
    };
    expect((await fetch(`${s.url}/slow`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(events).toMatchObject([{ policy: 'slots', operation: 'refund' }]);
    expect(s.stats().routes['* /slow']).toMatchObject({ admitted: 1, storeErrors: 1 });
  });

  it('rejects a share outside (0, 1] and an unknown mode, naming the field', async () => {
    const routes = (route: object) => ({ routes: [{ path: '/', ...route }] });
    await expect(createMockServer(routes({ failOpenShare: 0 }))).rejects.toThrow(
      'invalid option routes[0].failOpenShare: must be a number above 0, up to 1, got 0',
    );
    await expect(createMockServer(routes({ failMode: 'maybe' }))).rejects.toThrow(
      `invalid option routes[0].failMode: must be 'open' or 'closed', got "maybe"`,
    );
  });
});

describe('scaleLimit', () => {
  it('rounds counts down to at least the cost, and scales rates exactly', () => {
    expect(scaleLimit(eight, 0.25, 1)).toEqual({ ...eight, limit: 2 });
    expect(scaleLimit(eight, 0.01, 1)).toEqual({ ...eight, limit: 1 });
    expect(scaleLimit(eight, 0.01, 3)).toEqual({ ...eight, limit: 3 });
    expect(
      scaleLimit({ algorithm: 'token-bucket', capacity: 10, refillPerSecond: 4 }, 0.25, 1),
    ).toEqual({ algorithm: 'token-bucket', capacity: 2, refillPerSecond: 1 });
    // GCRA's limit is burst + 1: 10 * 0.5 = 5, so a burst of 4.
    expect(scaleLimit({ algorithm: 'gcra', rate: 10, burst: 9 }, 0.5, 1)).toEqual({
      algorithm: 'gcra',
      rate: 5,
      burst: 4,
    });
    expect(scaleLimit({ algorithm: 'leaky-bucket', rate: 2, capacity: 6 }, 0.5, 1)).toEqual({
      algorithm: 'leaky-bucket',
      rate: 1,
      capacity: 3,
    });
    expect(
      scaleLimit({ algorithm: 'concurrency', limit: 8, store: new MemoryStore() }, 0.5, 1),
    ).toEqual({
      algorithm: 'concurrency',
      limit: 4,
    });
  });
  it('a store-error listener that throws changes nothing: the route still fails open, with a warning', async () => {
    const store = new SwitchableStore();
    const { server: s } = await start({
      store,
      routes: [{ path: '/x', limits: [eight], failMode: 'open' }],
    });
    s.on('store-error', () => {
      throw new Error('a listener bug');
    });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      store.down = true;
      expect(await statuses(`${s.url}/x`, 2)).toEqual([200, 200]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.some((w) => w.includes("'store-error' listener threw"))).toBe(true);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

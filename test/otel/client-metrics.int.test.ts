/**
 * limited-client/otel over real HTTP against the in-repo mock server, read by the real
 * OpenTelemetry SDK (`@opentelemetry/sdk-metrics`, its in-memory exporter): each metric by name,
 * attributes and value after a scripted scenario (a cold start and 429s with Retry-After, an
 * outage that opens the breaker, a spent retry budget, a store that fails, a Redis that is not
 * there, a learned policy), and the same through the undici interceptor.
 */
import { createClient } from 'redis';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import {
  LimitedClient,
  MemoryStateStore,
  type StateStore,
  type Transaction,
  wrapFetch,
} from '../../src/index.js';
import { instrument, instrumentStore } from '../../src/otel/index.js';
import { RedisStore } from '../../src/redis/index.js';
import { limited } from '../../src/undici/index.js';
import { closeAll, pause, start } from '../client/integration/server.js';
import { histogramOf, pointsOf, sumOf, testMeter } from './meter.js';

afterAll(closeAll);

/** The attribute names a client metric may carry: nothing from a path, a key or a token. */
const ALLOWED = new Set([
  'server.address',
  'server.port',
  'http.request.method',
  'http.response.status_code',
  'error.type',
  'limited_client.outcome',
  'limited_client.wait.reason',
  'limited_client.retry.delay_source',
  'limited_client.give_up.reason',
  'limited_client.circuit.from',
  'limited_client.circuit.to',
  'limited_client.circuit.state',
  'limited_client.policy.name',
  'limited_client.store.operation',
]);

/** Every route of a 1-per-second limit without headers: the client learns only from 429s. */
const ONE_PER_SECOND = {
  routes: [
    {
      path: '/limited/:id',
      headers: 'none' as const,
      limits: [
        { algorithm: 'fixed-window' as const, limit: 1, windowMs: 1000, key: 'global' as const },
      ],
    },
  ],
};

describe.concurrent('instrument() over real HTTP', () => {
  it('a cold start and 429s with Retry-After: calls, attempts, waits, pushbacks, retries', async () => {
    const server = await start(ONE_PER_SECOND);
    const meter = testMeter();
    const client = new LimitedClient(server.url);
    const handle = instrument(client, { meterProvider: meter.provider });
    const responses = await Promise.all(
      [1, 2, 3].map((i) => client.get(`/limited/${i}?token=s3cret`)),
    );
    await Promise.all(responses.map((r) => r.arrayBuffer()));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    const totals = client.stats().totals;
    expect(totals.rateLimited).toBeGreaterThan(0);
    const m = await meter.collect();
    const host = { 'server.address': '127.0.0.1', 'http.request.method': 'GET' };
    expect(sumOf(m, 'limited_client.calls', { ...host, 'http.response.status_code': 200 })).toBe(3);
    expect(pointsOf(m, 'limited_client.calls')[0]?.attributes).toMatchObject({
      ...host,
      'server.port': new URL(server.url).port === '' ? undefined : Number(new URL(server.url).port),
      'limited_client.outcome': 'response',
    });
    expect(histogramOf(m, 'limited_client.call.duration', host).count).toBe(3);
    expect(sumOf(m, 'limited_client.attempts')).toBe(totals.attempts);
    expect(sumOf(m, 'limited_client.attempts', { 'http.response.status_code': 429 })).toBe(
      totals.rateLimited,
    );
    expect(sumOf(m, 'limited_client.attempts', { 'http.response.status_code': 200 })).toBe(3);
    expect(
      sumOf(m, 'limited_client.pushbacks', { ...host, 'http.response.status_code': 429 }),
    ).toBe(totals.rateLimited);
    const asked = histogramOf(m, 'limited_client.retry_after', {
      'http.response.status_code': 429,
    });
    expect(asked.count).toBe(totals.rateLimited);
    expect(asked.max).toBeGreaterThan(0);
    expect(asked.max).toBeLessThanOrEqual(1); // a 1 s window: Retry-After at most 1 s
    expect(sumOf(m, 'limited_client.retries', { 'http.response.status_code': 429 })).toBe(
      totals.retries,
    );
    // The two that came while the host had not answered yet waited for the cold start.
    expect(
      histogramOf(m, 'limited_client.wait.duration', { 'limited_client.wait.reason': 'cold-start' })
        .count,
    ).toBeGreaterThanOrEqual(1);
    // Every attempt sent records one wait, whatever held it.
    expect(histogramOf(m, 'limited_client.wait.duration').count).toBe(totals.attempts);
    expect(sumOf(m, 'limited_client.queue.depth', host)).toBe(0);
    expect(sumOf(m, 'limited_client.in_flight', { 'server.address': '127.0.0.1' })).toBe(0);
    for (const metric of m.values()) {
      for (const point of metric.dataPoints) {
        for (const name of Object.keys(point.attributes)) expect(ALLOWED).toContain(name);
        expect(JSON.stringify(point.attributes)).not.toMatch(/\/limited|s3cret|token/);
      }
    }
    handle.stop();
    await client.close();
    await meter.close();
  });

  it('an outage that opens the breaker: transitions, refusals, state, calls by error type', async () => {
    const server = await start({
      routes: [{ path: '/x', faults: { unavailable: { afterMs: 0 } } }],
    });
    const meter = testMeter();
    const client = new LimitedClient(server.url, {
      retry: false,
      circuitBreaker: { consecutiveFailures: 3, coolDownMs: 60_000 },
    });
    const handle = instrument(client, { meterProvider: meter.provider });
    const codes: (number | string)[] = [];
    for (let i = 0; i < 5; i++) {
      try {
        const r = await client.get('/x');
        await r.arrayBuffer();
        codes.push(r.status);
      } catch (error) {
        codes.push((error as { code: string }).code);
      }
    }
    expect(codes).toEqual([503, 503, 503, 'ERR_CIRCUIT_OPEN', 'ERR_CIRCUIT_OPEN']);
    const m = await meter.collect();
    const at = { 'server.address': '127.0.0.1' };
    expect(
      sumOf(m, 'limited_client.circuit.transitions', {
        ...at,
        'limited_client.circuit.from': 'closed',
        'limited_client.circuit.to': 'open',
      }),
    ).toBe(1);
    expect(sumOf(m, 'limited_client.circuit.transitions')).toBe(1);
    expect(sumOf(m, 'limited_client.circuit.refusals', at)).toBe(2);
    expect(
      sumOf(m, 'limited_client.circuit.state', { ...at, 'limited_client.circuit.state': 'open' }),
    ).toBe(1);
    expect(
      sumOf(m, 'limited_client.circuit.state', { ...at, 'limited_client.circuit.state': 'closed' }),
    ).toBe(0);
    expect(
      sumOf(m, 'limited_client.calls', {
        'limited_client.outcome': 'error',
        'error.type': 'ERR_CIRCUIT_OPEN',
      }),
    ).toBe(2);
    expect(sumOf(m, 'limited_client.calls', { 'http.response.status_code': 503 })).toBe(3);
    expect(sumOf(m, 'limited_client.attempts')).toBe(3);
    handle.stop();
    await client.close();
    await meter.close();
  });

  it('an outage without a breaker: retries by cause, and the ones the budget refused', async () => {
    const server = await start({
      routes: [{ path: '/down', faults: { unavailable: { afterMs: 0 } } }],
    });
    const meter = testMeter();
    const client = new LimitedClient(server.url, {
      circuitBreaker: false,
      retry: { retries: 1, baseDelayMs: 1, maxDelayMs: 5 },
      retryBudget: { ratio: 0.1, minPerSecond: 0.1 },
    });
    const handle = instrument(client, { meterProvider: meter.provider });
    for (let i = 0; i < 20; i++) await (await client.get('/down')).arrayBuffer();
    const totals = client.stats().totals;
    expect(totals.budgetExhausted).toBeGreaterThan(0);
    const m = await meter.collect();
    expect(sumOf(m, 'limited_client.retries.refused', { 'server.address': '127.0.0.1' })).toBe(
      totals.budgetExhausted,
    );
    expect(
      sumOf(m, 'limited_client.retries', {
        'http.response.status_code': 503,
        'limited_client.retry.delay_source': 'backoff',
      }),
    ).toBe(totals.retries);
    expect(
      histogramOf(m, 'limited_client.wait.duration', { 'limited_client.wait.reason': 'backoff' })
        .count,
    ).toBe(totals.retries);
    expect(
      sumOf(m, 'limited_client.give_ups', { 'limited_client.give_up.reason': 'budget-exhausted' }),
    ).toBe(totals.budgetExhausted);
    expect(sumOf(m, 'limited_client.calls', { 'http.response.status_code': 503 })).toBe(20);
    handle.stop();
    await client.close();
    await meter.close();
  });

  it('a store that fails: store errors and latency, and the calls that went on without it', async () => {
    const server = await start({ routes: [{ path: '/s' }] });
    const meter = testMeter();
    const memory = new MemoryStateStore();
    let updates = 0;
    // Over memory; its 2nd update (the first call's settle) rejects, as a store that timed out.
    const flaky: StateStore = {
      update<S, R>(key: string, transaction: Transaction<S, R>, ttlMs: number) {
        updates++;
        if (updates === 2) return Promise.reject(new TypeError('store down'));
        return Promise.resolve(memory.update(key, transaction, ttlMs));
      },
      delete: (key) => memory.delete(key),
    };
    const store = instrumentStore(flaky, { meterProvider: meter.provider });
    const client = new LimitedClient(server.url, { store, coldStart: false });
    const handle = instrument(client, { meterProvider: meter.provider });
    for (let i = 0; i < 3; i++) expect((await client.get('/s')).status).toBe(200);
    const m = await meter.collect();
    expect(
      sumOf(m, 'limited_client.store.bypassed', { 'limited_client.store.operation': 'settle' }),
    ).toBe(1);
    expect(
      sumOf(m, 'limited_client.store.errors', {
        'limited_client.store.operation': 'update',
        'error.type': 'TypeError',
      }),
    ).toBe(1);
    const latency = histogramOf(m, 'limited_client.store.duration', {
      'limited_client.store.operation': 'update',
    });
    expect(latency.count).toBe(updates);
    expect(latency.sum).toBeGreaterThanOrEqual(0);
    expect(sumOf(m, 'limited_client.calls', { 'http.response.status_code': 200 })).toBe(3);
    handle.stop();
    await client.close();
    await meter.close();
  });

  it('a Redis nobody listens on: one outage counted, the calls go on a local copy', async () => {
    const server = await start({ routes: [{ path: '/r' }] });
    const meter = testMeter();
    const redis = createClient({
      url: 'redis://127.0.0.1:1',
      socket: { reconnectStrategy: false },
    });
    redis.on('error', () => {});
    await expect(redis.connect()).rejects.toThrow(/ECONNREFUSED/);
    const store = instrumentStore(new RedisStore(redis, { timeoutMs: 200 }), {
      meterProvider: meter.provider,
    });
    const client = new LimitedClient(server.url, { store });
    const handle = instrument(client, { meterProvider: meter.provider });
    for (let i = 0; i < 3; i++) expect((await client.get('/r')).status).toBe(200);
    const m = await meter.collect();
    expect(sumOf(m, 'limited_client.store.outages')).toBe(1);
    expect(pointsOf(m, 'limited_client.store.outages')[0]?.attributes['error.type']).toBeTypeOf(
      'string',
    );
    expect(histogramOf(m, 'limited_client.store.duration').count).toBeGreaterThanOrEqual(3);
    expect(sumOf(m, 'limited_client.calls', { 'http.response.status_code': 200 })).toBe(3);
    handle.stop();
    await client.close();
    await meter.close();
  });

  it('a learned policy: its remaining budget as a ratio of its limit', async () => {
    const server = await start({
      routes: [
        {
          path: '/p',
          limits: [{ algorithm: 'fixed-window', limit: 10, windowMs: 60_000, name: 'minute' }],
        },
      ],
    });
    const meter = testMeter();
    const client = new LimitedClient(server.url);
    const handle = instrument(client, { meterProvider: meter.provider });
    for (let i = 0; i < 3; i++) await (await client.get('/p')).arrayBuffer();
    const policy = Object.values(client.stats().hosts)[0]?.policies.find(
      (p) => p.name === 'minute',
    );
    expect(policy?.limit).toBe(10);
    const m = await meter.collect();
    const ratio = sumOf(m, 'limited_client.policy.remaining_ratio', {
      'server.address': '127.0.0.1',
      'limited_client.policy.name': 'minute',
    });
    expect(ratio).toBeCloseTo((policy?.remaining ?? -1) / 10, 5);
    expect(ratio).toBeLessThanOrEqual(0.7);
    handle.stop();
    await client.close();
    await meter.close();
  });

  it("a host with several budgets: each scope's remaining ratio, named by its scope", async () => {
    const github = (path: string, limit: number, resource: string) => ({
      path,
      headers: 'github' as const,
      limits: [{ algorithm: 'fixed-window' as const, limit, windowMs: 60_000, resource }],
    });
    const server = await start({
      routes: [github('/search/*', 4, 'search'), github('*', 100, 'core')],
    });
    const meter = testMeter();
    const client = new LimitedClient(server.url);
    const handle = instrument(client, { meterProvider: meter.provider });
    for (let i = 0; i < 2; i++) await (await client.get(`/search/q${i}`)).arrayBuffer();
    await (await client.get('/repos/a')).arrayBuffer();
    const m = await meter.collect();
    const ratio = (scope: string, name: string) =>
      sumOf(m, 'limited_client.policy.remaining_ratio', {
        'limited_client.scope.name': scope,
        'limited_client.policy.name': name,
      });
    expect(ratio('github:search', 'search')).toBeCloseTo(2 / 4, 5);
    expect(ratio('github:core', 'core')).toBeCloseTo(99 / 100, 5);
    handle.stop();
    await client.close();
    await meter.close();
  });

  it('stop() removes every listener: nothing more is counted', async () => {
    const server = await start({ routes: [{ path: '/q' }] });
    const meter = testMeter();
    const fetch = wrapFetch(undefined, { coldStart: false });
    const handle = instrument(fetch, { meterProvider: meter.provider });
    await (await fetch(`${server.url}/q`)).arrayBuffer();
    expect(sumOf(await meter.collect(), 'limited_client.calls')).toBe(1);
    handle.stop();
    handle.stop();
    await (await fetch(`${server.url}/q`)).arrayBuffer();
    const m = await meter.collect();
    // Cumulative: each keeps what it had before stop(), and nothing of the call after it.
    expect(histogramOf(m, 'limited_client.call.duration').count).toBe(1);
    expect(histogramOf(m, 'limited_client.wait.duration').count).toBe(1);
    expect(sumOf(m, 'limited_client.calls')).toBeLessThanOrEqual(1);
    expect(sumOf(m, 'limited_client.attempts')).toBeLessThanOrEqual(1);
    await fetch.close();
    await meter.close();
  });

  it('refuses what is not a client', () => {
    expect(() => instrument({} as never)).toThrow(/LimitedClient/);
    expect(() => instrumentStore({} as never)).toThrow(/state store/);
  });
});

describe('instrument() on the undici interceptor', () => {
  it('a cold start and 429s with Retry-After, through undici.request', async () => {
    const server = await start(ONE_PER_SECOND);
    const meter = testMeter();
    const interceptor = limited();
    const dispatcher = new Agent().compose(interceptor);
    const handle = instrument(interceptor, { meterProvider: meter.provider });
    const statuses = await Promise.all(
      [1, 2, 3].map(async (i) => {
        const r = await request(`${server.url}/limited/${i}`, { dispatcher });
        await r.body.dump();
        return r.statusCode;
      }),
    );
    expect(statuses).toEqual([200, 200, 200]);
    const totals = interceptor.stats().totals;
    expect(totals.rateLimited).toBeGreaterThan(0);
    const m = await meter.collect();
    expect(sumOf(m, 'limited_client.calls', { 'http.response.status_code': 200 })).toBe(3);
    expect(sumOf(m, 'limited_client.attempts')).toBe(totals.attempts);
    expect(sumOf(m, 'limited_client.pushbacks', { 'http.response.status_code': 429 })).toBe(
      totals.rateLimited,
    );
    expect(histogramOf(m, 'limited_client.retry_after').count).toBe(totals.rateLimited);
    expect(sumOf(m, 'limited_client.retries')).toBe(totals.retries);
    expect(
      histogramOf(m, 'limited_client.wait.duration', { 'limited_client.wait.reason': 'cold-start' })
        .count,
    ).toBeGreaterThanOrEqual(1);
    handle.stop();
    await interceptor.close();
    await dispatcher.close();
    await meter.close();
    await pause(0);
  });
});

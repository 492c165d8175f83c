/**
 * The mock server's metrics over real HTTP: scripted traffic, then `GET /__metrics` scraped and
 * read with a Prometheus text parser from npm (parse-prometheus-text-format), not a regular
 * expression: decisions by route and policy, rejections and why, decision latency, Retry-After
 * sent, keys nearly spent, top keys; a store that fails, closed and open; the CLI's `--metrics`.
 */
import parse, { type MetricFamily } from 'parse-prometheus-text-format';
import { createClient } from 'redis';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../../src/redis/index.js';
import { type CliIo, runCli } from '../../src/server/cli.js';
import { createMockServer, type MockServer } from '../../src/server/index.js';
import { until } from '../server/http/helpers.js';

const servers: MockServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

async function scrape(url: string): Promise<{ families: MetricFamily[]; type: string | null }> {
  const response = await fetch(`${url}/__metrics`);
  expect(response.status).toBe(200);
  return { families: parse(await response.text()), type: response.headers.get('content-type') };
}

/** The value of the sample of `name` whose labels include `labels` (undefined when none). */
function value(families: MetricFamily[], name: string, labels: Record<string, string> = {}) {
  const family = families.find((f) => f.name === name);
  const sample = family?.metrics.find((m) =>
    Object.entries(labels).every(([k, v]) => m.labels?.[k] === v),
  );
  return sample;
}

function number(families: MetricFamily[], name: string, labels: Record<string, string> = {}) {
  const sample = value(families, name, labels);
  return sample?.value === undefined ? undefined : Number(sample.value);
}

describe('the mock server with metrics: true', () => {
  it('decisions, rejections, latency, Retry-After, keys nearly spent and top keys', async () => {
    const server = await createMockServer({
      metrics: true,
      routes: [
        {
          path: '/a',
          limits: [
            {
              algorithm: 'fixed-window',
              limit: 5,
              windowMs: 60_000,
              name: 'minute',
              key: { header: 'x-key' },
            },
          ],
        },
      ],
    });
    servers.push(server);
    const send = (key: string) =>
      fetch(`${server.url}/a`, { headers: { 'x-key': key } }).then((r) => r.status);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push(await send('heavy'));
    for (let i = 0; i < 2; i++) statuses.push(await send('light'));
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    const { families, type } = await scrape(server.url);
    expect(type).toBe('text/plain; version=0.0.4; charset=utf-8');
    const route = { route: '* /a' };
    expect(
      number(families, 'limited_client_server_requests_total', { ...route, decision: 'allowed' }),
    ).toBe(7);
    expect(
      number(families, 'limited_client_server_requests_total', { ...route, decision: 'rejected' }),
    ).toBe(3);
    expect(
      number(families, 'limited_client_server_rejections_total', {
        ...route,
        policy: 'minute',
        reason: 'limit',
      }),
    ).toBe(3);
    // The parser folds a labelled histogram into one sample of buckets (its `_sum` and `_count`
    // are dropped): with one route, the buckets are that route's, and `+Inf` is the count.
    const latency = value(families, 'limited_client_server_decision_duration_seconds');
    expect(Number(latency?.buckets?.['+Inf'])).toBe(10);
    expect(Number(latency?.buckets?.['1'])).toBe(10);
    const retryAfter = value(families, 'limited_client_server_retry_after_seconds');
    // A 60 s window: each of the three 429s asked for more than 0.5 s and at most 60 s.
    expect(Number(retryAfter?.buckets?.['+Inf'])).toBe(3);
    expect(Number(retryAfter?.buckets?.['60'])).toBe(3);
    expect(Number(retryAfter?.buckets?.['0.5'])).toBe(0);
    expect(
      number(families, 'limited_client_server_keys_near_exhaustion', {
        ...route,
        policy: 'minute',
      }),
    ).toBe(1);
    const top = families.find((f) => f.name === 'limited_client_server_top_key_requests');
    expect(top?.metrics.map((m) => [m.labels?.key, Number(m.value)])).toEqual([
      [expect.stringContaining('heavy'), 8],
      [expect.stringContaining('light'), 2],
    ]);
    expect(
      number(families, 'limited_client_server_top_key_error_bound', { sketch: 'requests' }),
    ).toBe(10 / 1000);
    // The scrape is no request of any route: the counts did not move.
    const again = await scrape(server.url);
    expect(
      number(again.families, 'limited_client_server_requests_total', {
        ...route,
        decision: 'allowed',
      }),
    ).toBe(7);
    // What the parser drops, read from the text as written: the route's count and sum lines.
    const text = server.metrics() ?? '';
    expect(text).toContain(
      'limited_client_server_decision_duration_seconds_count{route="* /a"} 10\n',
    );
    expect(text).toContain('limited_client_server_retry_after_seconds_count{route="* /a"} 3\n');
  });

  it('top keys by weighted cost, and a key that would break a line is escaped', async () => {
    const server = await createMockServer({
      metrics: true,
      routes: [
        {
          path: '/cost',
          limits: [
            {
              algorithm: 'token-bucket',
              capacity: 1000,
              refillPerSecond: 1,
              key: { header: 'x-key' },
              cost: { header: 'x-cost' },
            },
          ],
        },
      ],
    });
    servers.push(server);
    const send = (key: string, cost: number) =>
      fetch(`${server.url}/cost`, { headers: { 'x-key': key, 'x-cost': String(cost) } });
    for (let i = 0; i < 5; i++) await send('many-cheap', 1);
    await send('one "dear" \\ call', 50);
    const { families } = await scrape(server.url);
    const byCost = families.find((f) => f.name === 'limited_client_server_top_key_cost');
    expect(byCost?.metrics.map((m) => [m.labels?.key, Number(m.value)])).toEqual([
      [expect.stringContaining('one "dear" \\ call'), 50],
      [expect.stringContaining('many-cheap'), 5],
    ]);
    const byRequests = families.find((f) => f.name === 'limited_client_server_top_key_requests');
    expect(byRequests?.metrics[0]?.labels?.key).toContain('many-cheap');
  });

  it('a store that fails: store errors, fail-closed and fail-open activations', async () => {
    const redis = createClient({
      url: 'redis://127.0.0.1:1',
      socket: { reconnectStrategy: false },
    });
    redis.on('error', () => {});
    await expect(redis.connect()).rejects.toThrow(/ECONNREFUSED/);
    const store = new RedisStore(redis, { timeoutMs: 200 });
    const limit = {
      algorithm: 'fixed-window' as const,
      limit: 100,
      windowMs: 1000,
      name: 'second',
    };
    const server = await createMockServer({
      metrics: true,
      store,
      routes: [
        { path: '/closed', limits: [limit] },
        { path: '/open', failMode: 'open', limits: [limit] },
      ],
    });
    servers.push(server);
    for (let i = 0; i < 2; i++) expect((await fetch(`${server.url}/closed`)).status).toBe(503);
    for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/open`)).status).toBe(200);
    const { families } = await scrape(server.url);
    const closed = { route: '* /closed' };
    const open = { route: '* /open' };
    expect(number(families, 'limited_client_server_store_fail_closed_total', closed)).toBe(2);
    expect(
      number(families, 'limited_client_server_requests_total', {
        ...closed,
        decision: 'failed_closed',
      }),
    ).toBe(2);
    expect(
      number(families, 'limited_client_server_rejections_total', {
        ...closed,
        policy: 'second',
        reason: 'store_unavailable',
      }),
    ).toBe(2);
    expect(
      number(families, 'limited_client_server_store_errors_total', {
        ...closed,
        policy: 'second',
        operation: 'take',
      }),
    ).toBe(2);
    expect(number(families, 'limited_client_server_store_fail_open_total', open)).toBe(3);
    expect(
      number(families, 'limited_client_server_requests_total', { ...open, decision: 'allowed' }),
    ).toBe(3);
    expect(number(families, 'limited_client_server_store_fail_open_total', closed)).toBeUndefined();
  });

  it('without metrics: true, /__metrics is a path like any other and metrics() is undefined', async () => {
    const server = await createMockServer({ routes: [{ path: '*' }] });
    servers.push(server);
    const response = await fetch(`${server.url}/__metrics`);
    expect(response.status).toBe(200);
    expect(await response.text()).not.toContain('# TYPE');
    expect(server.metrics()).toBeUndefined();
  });
});

describe('the CLI with --metrics', () => {
  it('serves the metrics; a scrape parses and counts what was sent', async () => {
    const out: string[] = [];
    let stop: (() => void) | undefined;
    const io: CliIo = {
      stdout: (line) => out.push(line),
      stderr: (line) => out.push(line),
      onStop(fn) {
        stop = fn;
        return () => {
          stop = undefined;
        };
      },
    };
    const running = runCli(['--metrics', '-q', '-l', 'fixed-window:limit=2,windowMs=60000'], io);
    await until(() => out.some((l) => l.includes('/__metrics')), 'the metrics line');
    const url = /listening on (\S+)/.exec(out[0] as string)?.[1] as string;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(`${url}/anything`)).status);
    expect(statuses).toEqual([200, 200, 429]);
    const { families } = await scrape(url);
    expect(number(families, 'limited_client_server_requests_total', { decision: 'allowed' })).toBe(
      2,
    );
    expect(number(families, 'limited_client_server_requests_total', { decision: 'rejected' })).toBe(
      1,
    );
    expect(families.find((f) => f.name === 'limited_client_server_retry_after_seconds')?.type).toBe(
      'HISTOGRAM',
    );
    stop?.();
    expect(await running).toBe(0);
  });
});

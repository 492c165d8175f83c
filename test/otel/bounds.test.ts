/**
 * The metrics' bounds, at the bound: keys tracked as nearly spent (MAX_NEAR_KEYS), a key's label
 * (MAX_KEY_LABEL_CHARS), the origin cache of the client's attributes (MAX_CACHED_ORIGINS). See
 * docs/observability.md#bounds.
 */
import parse from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import type { ClientEvents, ClientStats } from '../../src/client/types.js';
import { MAX_CACHED_ORIGINS, OriginAttributes } from '../../src/otel/attributes.js';
import { instrument, MAX_SERIES } from '../../src/otel/client-metrics.js';
import type { Admission } from '../../src/server/http/admission.js';
import type { PolicyReport } from '../../src/server/http/rate-limit-headers.js';
import {
  MAX_KEY_LABEL_CHARS,
  MAX_NEAR_KEYS,
  ServerMetrics,
} from '../../src/server/metrics/server-metrics.js';
import { Emitter } from '../../src/shared/events.js';
import { pointsOf, sumOf, testMeter } from './meter.js';

const route = { label: '* /x', limits: [{ name: 'p' }], retryAfter: 'seconds' };

/** An admitted request that left `remaining` of a limit of 100, refilling in `resetMs`. */
function admitted(remaining: number, resetMs: number): Admission {
  const report = { name: 'p', limit: 100, remaining, resetMs, retryAfterMs: 0 } as PolicyReport;
  return {
    allowed: true,
    failedClosed: false,
    acquisitions: [],
    results: [],
    reports: [report],
    failures: [],
  };
}

function gauge(text: string, name: string): number {
  const family = parse(text).find((f) => f.name === name);
  return Number(family?.metrics[0]?.value);
}

describe('metric bounds', () => {
  it(`keys nearly spent: at most ${MAX_NEAR_KEYS}, and room again once they refill`, () => {
    const metrics = new ServerMetrics();
    for (let i = 0; i < MAX_NEAR_KEYS + 50; i++) {
      metrics.decided(route, [`k${i}`], [1], `k${i}`, admitted(3, 1000), 0.01, 0);
    }
    const name = 'limited_client_server_keys_near_exhaustion';
    expect(gauge(metrics.render(500), name)).toBe(MAX_NEAR_KEYS);
    // A key with room left is not nearly spent; a known key moves, it does not add.
    metrics.decided(route, ['k0'], [1], 'k0', admitted(50, 1000), 0.01, 0);
    expect(gauge(metrics.render(500), name)).toBe(MAX_NEAR_KEYS);
    // Refilled: all age out, and new ones are tracked again.
    expect(gauge(metrics.render(1000), name)).toBe(0);
    metrics.decided(route, ['late'], [1], 'late', admitted(0, 1000), 0.01, 2000);
    expect(gauge(metrics.render(2500), name)).toBe(1);
  });

  it(`a key's label: cut at ${MAX_KEY_LABEL_CHARS} characters`, () => {
    const metrics = new ServerMetrics();
    const long = 'k'.repeat(MAX_KEY_LABEL_CHARS * 4);
    metrics.decided(route, [long], [1], long, admitted(90, 1000), 0.01, 0);
    const family = parse(metrics.render(0)).find(
      (f) => f.name === 'limited_client_server_top_key_requests',
    );
    expect(family?.metrics[0]?.labels?.key).toBe('k'.repeat(MAX_KEY_LABEL_CHARS));
  });

  it(`origin attributes: ${MAX_CACHED_ORIGINS} cached, then the cache starts over, right every time`, () => {
    const origins = new OriginAttributes();
    for (let i = 0; i <= MAX_CACHED_ORIGINS; i++) {
      expect(origins.of(`https://h${i}.example:${1000 + i}`)).toEqual({
        'server.address': `h${i}.example`,
        'server.port': 1000 + i,
      });
      expect(origins.size).toBeLessThanOrEqual(MAX_CACHED_ORIGINS);
    }
    expect(origins.size).toBe(1);
    expect(origins.of('https://[::1]')).toEqual({ 'server.address': '::1' });
    expect(origins.of('not a url')).toEqual({ 'server.address': '_OTHER' });
  });

  it(`per-call series: at most ${MAX_SERIES}, the rest in one overflow set`, async () => {
    // A target of its own: the events of 2,100 hosts, one call each.
    const events = new Emitter<ClientEvents>();
    const stats = (): ClientStats => ({ hosts: {}, totals: {} as ClientStats['totals'] });
    const meter = testMeter();
    const handle = instrument(
      { on: (name, listener) => events.on(name, listener), stats },
      { meterProvider: meter.provider },
    );
    const hosts = MAX_SERIES + 100;
    for (let i = 0; i < hosts; i++) {
      events.emit('done', {
        origin: `https://h${i}.example`,
        method: 'GET',
        url: '',
        status: 200,
        durationMs: 1,
      });
    }
    const m = await meter.collect();
    expect(sumOf(m, 'limited_client.calls')).toBe(hosts);
    const points = pointsOf(m, 'limited_client.calls');
    expect(points.length).toBeLessThanOrEqual(MAX_SERIES);
    expect(sumOf(m, 'limited_client.calls', { 'otel.metric.overflow': true })).toBeGreaterThan(0);
    handle.stop();
    await meter.close();
  });
});

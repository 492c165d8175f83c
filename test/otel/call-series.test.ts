/**
 * The per-call series (src/otel/call-series.ts): one frozen attribute object per series, the same
 * object on every lookup, and every kind of set (bases, outcomes, waits) under one bound.
 */
import { describe, expect, it } from 'vitest';
import { OriginAttributes } from '../../src/otel/attributes.js';
import { CallSeries, MAX_SERIES } from '../../src/otel/call-series.js';

describe('CallSeries', () => {
  it('gives the same frozen object for the same outcome, another for another', () => {
    const series = new CallSeries(new OriginAttributes());
    const ok = series.outcome('https://a.example:8443', 'GET', 200, undefined);
    expect(series.outcome('https://a.example:8443', 'GET', 200, undefined)).toBe(ok);
    expect(Object.isFrozen(ok.attributes)).toBe(true);
    expect(ok.attributes).toEqual({
      'server.address': 'a.example',
      'server.port': 8443,
      'http.request.method': 'GET',
      'limited_client.outcome': 'response',
      'http.response.status_code': 200,
    });
    const failed = series.outcome('https://a.example:8443', 'GET', undefined, {
      code: 'ECONNRESET',
    });
    expect(failed).not.toBe(ok);
    expect(failed.attributes).toMatchObject({
      'limited_client.outcome': 'error',
      'error.type': 'ECONNRESET',
    });
    // Another method, another host: other series, even after the last lookup was cached.
    expect(series.outcome('https://a.example:8443', 'POST', 200, undefined)).not.toBe(ok);
    expect(series.outcome('https://b.example', 'GET', 200, undefined).attributes).toMatchObject({
      'server.address': 'b.example',
      'http.request.method': 'GET',
    });
    expect(series.outcome('https://a.example:8443', 'GET', 200, undefined)).toBe(ok);
    expect(series.wait('https://a.example:8443', 'GET', 'none')).toBe(
      series.wait('https://a.example:8443', 'GET', 'none'),
    );
  });

  it(`keeps at most ${MAX_SERIES} sets of every kind; past it one overflow set counts`, () => {
    const series = new CallSeries(new OriginAttributes());
    const made = new Set<object>();
    // Each host: a base, an outcome and a wait (three sets), well past the bound.
    for (let i = 0; i < MAX_SERIES; i++) {
      const origin = `https://h${i}.example`;
      const outcome = series.outcome(origin, 'GET', 200, undefined);
      outcome.calls++;
      outcome.attempts++;
      made.add(outcome.attributes);
      made.add(series.wait(origin, 'GET', 'none'));
      made.add(series.base(origin, 'GET'));
    }
    // The overflow set is one of the objects handed out; the others are at most the bound.
    expect(made.size).toBeLessThanOrEqual(MAX_SERIES + 1);
    const outcomes = [...series.outcomes()];
    const overflow = outcomes.find((o) => o.attributes['otel.metric.overflow'] === true);
    expect(overflow?.attributes).toEqual({ 'otel.metric.overflow': true });
    // Every call was counted once: in its own series or in the overflow one.
    expect(outcomes.reduce((sum, o) => sum + o.calls, 0)).toBe(MAX_SERIES);
    expect(outcomes.reduce((sum, o) => sum + o.attempts, 0)).toBe(MAX_SERIES);
    expect(overflow?.calls).toBeGreaterThan(0);
  });
});

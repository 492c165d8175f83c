/**
 * `instrument(target, options)`: the client's events and `stats()` as OpenTelemetry metrics. Every
 * metric is listed, with its unit and attributes, in docs/observability.md.
 *
 * @module
 */
import type {
  Attributes,
  BatchObservableResult,
  Meter,
  MeterProvider,
  Observable,
} from '@opentelemetry/api';
import { createNoopMeter, metrics } from '@opentelemetry/api';
import type { ClientEvents, ClientStats, EventBase, HostStats } from '../client/types.js';
import type { Listener } from '../shared/events.js';
import { errorTypeOf, OriginAttributes } from './attributes.js';
import { CallSeries } from './call-series.js';

export { MAX_SERIES } from './call-series.js';

/** The name and version of the meter the metrics are made with. */
export const METER_NAME = 'limited-client';

/** Bucket bounds of the duration histograms, in seconds (1 ms to 2 minutes). */
const SECONDS_BUCKETS = [
  0, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120,
];

/**
 * What `instrument` reads: a `LimitedClient`, a fetch made by `wrapFetch`, or the undici
 * interceptor made by `limited()` (each has `on` and `stats`).
 */
export interface InstrumentTarget {
  /** Counts and state per host: read for the gauges when the reader collects. */
  stats(): ClientStats;
  /** Adds a listener; returns the function that removes it (called by `stop()`). */
  on<K extends keyof ClientEvents>(name: K, listener: Listener<ClientEvents[K]>): () => void;
}

/** Options of {@link instrument}. */
export interface InstrumentOptions {
  /**
   * The provider to make the meter with.
   * @default the global provider of `@opentelemetry/api` (a no-op until the application registers one)
   */
  meterProvider?: MeterProvider;
  /** A meter to use instead of making one (then `meterProvider` is not read). */
  meter?: Meter;
}

/** What {@link instrument} returns: the handle to stop the metrics. */
export interface Instrumentation {
  /**
   * Stops: removes the event listeners and the gauges' callback; the target pays nothing for
   * metrics from then on. Idempotent.
   */
  stop(): void;
}

type Histogram = ReturnType<Meter['createHistogram']>;

/**
 * Reports a client's calls, attempts, waits, pushbacks, retries, breaker and learned budgets as
 * OpenTelemetry metrics (names under `limited_client.`; attributes from the semantic conventions:
 * `server.address`, `server.port`, `http.request.method`, `http.response.status_code`,
 * `error.type`). Bounded cardinality: no path, no key, no token, no partition. Counters and
 * histograms follow the client's events; queue depth, requests in flight, breaker state and the
 * remaining budget per learned policy are gauges read from `stats()` when the reader collects.
 *
 * Off by default: a client that is not instrumented builds no payload for these events, and
 * neither does one instrumented onto a meter that keeps nothing (the API's no-op meter, which the
 * global provider gives until the application registers an SDK): then no listener is added.
 *
 * @param target a `LimitedClient`, a `wrapFetch` fetch or a `limited()` interceptor.
 * @param options where the meter comes from (the global provider by default).
 * @returns a handle whose `stop()` removes every listener.
 * @example
 * import { MeterProvider } from '@opentelemetry/sdk-metrics';
 * import { LimitedClient } from 'limited-client';
 * import { instrument } from 'limited-client/otel';
 *
 * const client = new LimitedClient('https://api.example.com');
 * const metrics = instrument(client, { meterProvider: new MeterProvider({ readers: [reader] }) });
 * // ... later
 * metrics.stop();
 */
export function instrument(
  target: InstrumentTarget,
  options: InstrumentOptions = {},
): Instrumentation {
  if (typeof target?.on !== 'function' || typeof target.stats !== 'function') {
    throw new TypeError(
      'limited-client/otel: instrument() takes a LimitedClient, a wrapFetch fetch or a limited() interceptor',
    );
  }
  const meter =
    options.meter ?? (options.meterProvider ?? metrics.getMeterProvider()).getMeter(METER_NAME);
  const origins = new OriginAttributes();
  const seconds = (name: string, description: string): Histogram =>
    meter.createHistogram(name, {
      unit: 's',
      description,
      advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
    });

  const calls = meter.createObservableCounter('limited_client.calls', {
    unit: '{call}',
    description: 'Calls ended, by outcome: a response (its status) or an error (its type)',
  });
  const callDuration = seconds('limited_client.call.duration', 'From a call’s arrival to its end');
  const attempts = meter.createObservableCounter('limited_client.attempts', {
    unit: '{attempt}',
    description: 'Attempts answered, by outcome',
  });
  const waits = seconds(
    'limited_client.wait.duration',
    'Time an attempt waited in the pipeline before it was sent, by what held it',
  );
  const pushbacks = meter.createCounter('limited_client.pushbacks', {
    unit: '{response}',
    description: 'Pushbacks received (429s, 503s with Retry-After), by status',
  });
  const retryAfter = seconds('limited_client.retry_after', 'Retry-After the servers asked for');
  const retries = meter.createCounter('limited_client.retries', {
    unit: '{retry}',
    description: 'Retries scheduled, by cause (status or error type) and what timed them',
  });
  const refused = meter.createCounter('limited_client.retries.refused', {
    unit: '{retry}',
    description: 'Retries the retry budget refused',
  });
  const giveUps = meter.createCounter('limited_client.give_ups', {
    unit: '{call}',
    description: 'Calls that needed another attempt and stopped, by reason',
  });
  const circuitRefusals = meter.createCounter('limited_client.circuit.refusals', {
    unit: '{call}',
    description: 'Calls or retries refused because the circuit was open',
  });
  const transitions = meter.createCounter('limited_client.circuit.transitions', {
    unit: '{transition}',
    description: 'Breaker state changes, by from and to',
  });
  const storeBypassed = meter.createCounter('limited_client.store.bypassed', {
    unit: '{call}',
    description: 'Calls that went on without the state store after it failed, by operation',
  });
  const queueDepth = meter.createObservableGauge('limited_client.queue.depth', {
    unit: '{request}',
    description: 'Requests waiting in the host’s queue',
  });
  const inFlight = meter.createObservableGauge('limited_client.in_flight', {
    unit: '{request}',
    description: 'Requests holding a slot (sent, or answered with a body still open)',
  });
  const circuitState = meter.createObservableGauge('limited_client.circuit.state', {
    unit: '{pipeline}',
    description: 'Pipelines of the host (the host and its partitions) in each breaker state',
  });
  const remaining = meter.createObservableGauge('limited_client.policy.remaining_ratio', {
    unit: '1',
    description:
      'Remaining budget of each learned policy, as a ratio of its limit (lowest over partitions)',
  });

  // A meter that keeps nothing (the API's no-op one: no SDK registered when instrument() ran; the
  // API's global provider does not change its meters later) gets no listener and no callback, so
  // the client builds no payload for these metrics.
  const noop = createNoopMeter();
  if (callDuration === noop.createHistogram('') && pushbacks === noop.createCounter('')) {
    return { stop() {} };
  }

  // The per-call path (`sent`, `answered`, `done`) reuses one attribute object per series, found
  // without building a key, and counts calls and attempts there (read when the reader collects):
  // a call costs two histogram records in the SDK, not four records and six attribute objects.
  const series = new CallSeries(origins);
  const base = (e: EventBase): Attributes => series.base(e.origin, e.method);
  const waited = (e: EventBase, reason: string): Attributes =>
    series.wait(e.origin, e.method, reason);

  const disposers: (() => void)[] = [];
  const on = <K extends keyof ClientEvents>(name: K, listener: Listener<ClientEvents[K]>) => {
    disposers.push(target.on(name, listener));
  };
  on('done', (e) => {
    const outcome = series.outcome(e.origin, e.method, e.status, e.error);
    outcome.calls++;
    callDuration.record(e.durationMs / 1000, outcome.attributes);
  });
  on('answered', (e) => {
    series.outcome(e.origin, e.method, e.status, e.error).attempts++;
  });
  on('sent', (e) => waits.record(e.waitedMs / 1000, waited(e, e.waitReason ?? 'none')));
  on('rate-limited', (e) => {
    const attributes = { ...base(e), 'http.response.status_code': e.status };
    pushbacks.add(1, attributes);
    if (e.retryAfterMs !== undefined) retryAfter.record(e.retryAfterMs / 1000, attributes);
  });
  on('retry', (e) => {
    const attributes: Attributes = {
      ...base(e),
      'limited_client.retry.delay_source': e.delaySource,
    };
    if (e.status !== undefined) attributes['http.response.status_code'] = e.status;
    else attributes['error.type'] = errorTypeOf(e.error);
    retries.add(1, attributes);
    // The backoff is slept outside the pipeline's waits: the `sent` that follows does not count it.
    if (e.delaySource === 'backoff') waits.record(e.delayMs / 1000, waited(e, 'backoff'));
  });
  on('budget-exhausted', (e) => refused.add(1, base(e)));
  on('give-up', (e) => giveUps.add(1, { ...base(e), 'limited_client.give_up.reason': e.reason }));
  on('circuit-open', (e) => circuitRefusals.add(1, base(e)));
  on('circuit-state', (e) =>
    transitions.add(1, {
      ...origins.of(e.origin),
      'limited_client.circuit.from': e.from,
      'limited_client.circuit.to': e.to,
    }),
  );
  on('store-error', (e) =>
    storeBypassed.add(1, { ...base(e), 'limited_client.store.operation': e.operation }),
  );

  const observables: Observable[] = [
    calls,
    attempts,
    queueDepth,
    inFlight,
    circuitState,
    remaining,
  ];
  const observe = (result: BatchObservableResult) => {
    for (const outcome of series.outcomes()) {
      if (outcome.calls > 0) result.observe(calls, outcome.calls, outcome.attributes);
      if (outcome.attempts > 0) result.observe(attempts, outcome.attempts, outcome.attributes);
    }
    observeStats(target.stats(), origins, result, {
      queueDepth,
      inFlight,
      circuitState,
      remaining,
    });
  };
  meter.addBatchObservableCallback(observe, observables);

  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      for (const dispose of disposers) dispose();
      meter.removeBatchObservableCallback(observe, observables);
    },
  };
}

interface Gauges {
  queueDepth: Observable;
  inFlight: Observable;
  circuitState: Observable;
  remaining: Observable;
}

const STATES = ['closed', 'open', 'half-open'] as const;

/** The gauges, per origin: partitions of a host are summed (or, for a ratio, the lowest kept). */
function observeStats(
  stats: ClientStats,
  origins: OriginAttributes,
  result: BatchObservableResult,
  g: Gauges,
) {
  const byOrigin = new Map<
    string,
    { queue: number; flight: number; states: Map<string, number>; ratios: Map<string, number> }
  >();
  for (const host of Object.values(stats.hosts)) {
    let sum = byOrigin.get(host.origin);
    if (sum === undefined) {
      sum = { queue: 0, flight: 0, states: new Map(), ratios: new Map() };
      byOrigin.set(host.origin, sum);
    }
    sum.queue += host.queueLength;
    sum.flight += host.inFlight;
    sum.states.set(host.circuit, (sum.states.get(host.circuit) ?? 0) + 1);
    keepLowest(sum.ratios, '', host.policies);
    // A scope's budget per major parameter (a Discord channel) is one series: the path's id is
    // not an attribute.
    for (const scope of host.scopes)
      keepLowest(sum.ratios, scope.name.split('@')[0] as string, scope.policies);
  }
  for (const [origin, sum] of byOrigin) {
    const attributes = origins.of(origin);
    result.observe(g.queueDepth, sum.queue, attributes);
    result.observe(g.inFlight, sum.flight, attributes);
    for (const state of STATES) {
      result.observe(g.circuitState, sum.states.get(state) ?? 0, {
        ...attributes,
        'limited_client.circuit.state': state,
      });
    }
    for (const [key, ratio] of sum.ratios) {
      const [scope, name] = key.split(SEPARATOR) as [string, string];
      result.observe(g.remaining, ratio, {
        ...attributes,
        'limited_client.policy.name': name.slice(0, 64),
        ...(scope !== '' && { 'limited_client.scope.name': scope.slice(0, 64) }),
      });
    }
  }
}

/** Between a scope's name and a policy's in a ratio's key (never in either). */
const SEPARATOR = '\u0000';

/** Keeps, per scope and policy name, the lowest remaining ratio of `policies`. */
function keepLowest(ratios: Map<string, number>, scope: string, policies: HostStats['policies']) {
  for (const policy of policies) {
    if (policy.limit === undefined || policy.limit <= 0 || policy.remaining === undefined) continue;
    const ratio = Math.min(1, Math.max(0, policy.remaining / policy.limit));
    const key = `${scope}${SEPARATOR}${policy.name}`;
    const before = ratios.get(key);
    if (before === undefined || ratio < before) ratios.set(key, ratio);
  }
}

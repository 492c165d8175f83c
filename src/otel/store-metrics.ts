/**
 * `instrumentStore(store, options)`: the client's state store, timed. Its calls' latency and
 * failures as OpenTelemetry metrics; everything else of the store passes through untouched.
 *
 * @module
 */
import type { Attributes, Meter } from '@opentelemetry/api';
import { metrics } from '@opentelemetry/api';
import type { StateStore } from '../client/host/store.js';
import { errorTypeOf } from './attributes.js';
import { type InstrumentOptions, METER_NAME } from './client-metrics.js';

/** Bucket bounds of the store's latency, in seconds (50 µs to 5 s). */
const STORE_BUCKETS = [
  0, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
  5,
];

/** The store calls that are timed; the others (`now`, `forget`, `close`) pass through. */
const TIMED = new Set<PropertyKey>(['update', 'get', 'delete']);

/**
 * Wraps a client state store (a `RedisStore`, or any `StateStore`) so that each `update`, `get`
 * and `delete` is timed into `limited_client.store.duration` (seconds, by
 * `limited_client.store.operation`, and `error.type` when it failed) and each failure counted in
 * `limited_client.store.errors`; a store with a `down` event (`RedisStore`) also has its outages
 * counted in `limited_client.store.outages`. Pass the wrapper as the client's `store`; close the original
 * yourself as before. A synchronous store stays synchronous.
 *
 * @param store the store to time.
 * @param options where the meter comes from (the global provider by default).
 * @returns a store with the same behaviour and every property of `store`.
 * @example
 * const store = instrumentStore(new RedisStore(redis), { meterProvider });
 * const client = new LimitedClient('https://api.example.com', { store });
 */
export function instrumentStore<S extends StateStore>(
  store: S,
  options: InstrumentOptions = {},
): S {
  if (typeof store?.update !== 'function') {
    throw new TypeError(
      'limited-client/otel: instrumentStore() takes a state store (with update())',
    );
  }
  const meter: Meter =
    options.meter ?? (options.meterProvider ?? metrics.getMeterProvider()).getMeter(METER_NAME);
  const duration = meter.createHistogram('limited_client.store.duration', {
    unit: 's',
    description: 'Latency of the client’s state store calls',
    advice: { explicitBucketBoundaries: STORE_BUCKETS },
  });
  const errors = meter.createCounter('limited_client.store.errors', {
    unit: '{call}',
    description: 'State store calls that failed (threw, rejected)',
  });
  const outages = meter.createCounter('limited_client.store.outages', {
    unit: '{outage}',
    description: 'Outages of a store that reports them (RedisStore: its down event), by error type',
  });
  // A store that reports its outages (`RedisStore`'s `down`: the calls then go on a local copy,
  // so no call fails and nothing else would show it).
  const events = store as { on?: (name: 'down', listener: (error: unknown) => void) => unknown };
  if (typeof events.on === 'function') {
    events.on('down', (error) => outages.add(1, { 'error.type': errorTypeOf(error) }));
  }
  const okAttributes = new Map<string, Attributes>();
  const ok = (operation: string) => {
    let attributes = okAttributes.get(operation);
    if (!attributes) {
      attributes = { 'limited_client.store.operation': operation };
      okAttributes.set(operation, attributes);
    }
    return attributes;
  };
  const failed = (operation: string, started: number, error: unknown) => {
    const attributes = {
      'limited_client.store.operation': operation,
      'error.type': errorTypeOf(error),
    };
    duration.record((performance.now() - started) / 1000, attributes);
    errors.add(1, attributes);
  };
  const timed = (operation: string, method: (...args: unknown[]) => unknown) =>
    function timedCall(...args: unknown[]) {
      const started = performance.now();
      let result: unknown;
      try {
        result = method.apply(store, args);
      } catch (error) {
        failed(operation, started, error);
        throw error;
      }
      if (result instanceof Promise) {
        return result.then(
          (value) => {
            duration.record((performance.now() - started) / 1000, ok(operation));
            return value;
          },
          (error: unknown) => {
            failed(operation, started, error);
            throw error;
          },
        );
      }
      duration.record((performance.now() - started) / 1000, ok(operation));
      return result;
    };
  // Bound once: a store's private fields (`#x`) need `this` to be the store, not the proxy.
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let wrapped = bound.get(property);
      if (wrapped === undefined) {
        const method = value as (...args: unknown[]) => unknown;
        wrapped = TIMED.has(property) ? timed(String(property), method) : method.bind(target);
        bound.set(property, wrapped);
      }
      return wrapped;
    },
  });
}

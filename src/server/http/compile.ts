/**
 * Turns a validated configuration into what the server runs: one limiter per limit (the server's
 * limits shared by every route), path matchers, fault triggers.
 *
 * @module
 */
import type { Clock } from '../../clock.js';
import { ConcurrencyLimit } from '../algorithms/concurrency-limit.js';
import { FixedWindow } from '../algorithms/fixed-window.js';
import { Gcra } from '../algorithms/gcra.js';
import { LeakyBucket } from '../algorithms/leaky-bucket.js';
import type { RateLimiter } from '../algorithms/limiter.js';
import { SlidingLog } from '../algorithms/sliding-log.js';
import { SlidingWindowCounter } from '../algorithms/sliding-window-counter.js';
import { TokenBucket } from '../algorithms/token-bucket.js';
import type { RateLimitStore } from '../store.js';
import {
  type FaultsConfig,
  type HeaderFamily,
  type KeyConfig,
  type LimitConfig,
  type MockServerConfig,
  policyNames,
  type ResponseConfig,
  type RetryAfterFormat,
  routeLabel,
} from './config.js';
import { Trigger } from './faults.js';
import { keyScope } from './keys.js';
import { compilePath, type PathMatcher } from './routes.js';

/** A limit ready to decide: its limiter and what the headers and error bodies say about it. */
export interface CompiledLimit {
  limiter: RateLimiter;
  name: string;
  key: KeyConfig | undefined;
  scope: string;
  description: string;
  windowMs: number | undefined;
  concurrency: boolean;
  leaky: boolean;
}

/** A route ready to serve. */
export interface CompiledRoute {
  label: string;
  method: string | undefined;
  match: PathMatcher;
  cost: number;
  limits: CompiledLimit[];
  headers: HeaderFamily;
  retryAfter: RetryAfterFormat;
  response: ResponseConfig;
  idempotency: boolean;
  faults: {
    latency: FaultsConfig['latencyMs'];
    unavailable?: { trigger: Trigger; retryAfterSeconds?: number };
    reset?: { trigger: Trigger; when: 'before-handler' | 'after-handler' };
    slowBody?: { chunkBytes: number; intervalMs: number };
  };
}

/** Compiles every route of a validated configuration. */
export function compileRoutes(
  config: MockServerConfig,
  store: RateLimitStore,
  clock: Clock,
): CompiledRoute[] {
  const edgeConfigs = config.limits ?? [];
  // The server's limits are shared by every route: one limiter each, named alike on every route.
  const edgeNames = policyNames(edgeConfigs, [], 0);
  const edge = edgeConfigs.map((limit, i) =>
    compileLimit(limit, edgeNames[i] as string, `limits/${edgeNames[i]}`, store, clock),
  );
  return config.routes.map((route, r) => {
    const label = routeLabel(route);
    const names = policyNames(edgeConfigs, route.limits ?? [], r, label).slice(edge.length);
    const own = (route.limits ?? []).map((limit, i) =>
      compileLimit(limit, names[i] as string, `${label}/${names[i]}`, store, clock),
    );
    const faults = route.faults ?? {};
    const compiled: CompiledRoute = {
      label,
      method: route.method?.toUpperCase(),
      match: compilePath(route.path),
      cost: route.cost ?? 1,
      limits: [...edge, ...own],
      headers: route.headers ?? 'ietf',
      retryAfter: route.retryAfter ?? 'seconds',
      response: route.response ?? {},
      idempotency: route.idempotency ?? true,
      faults: { latency: faults.latencyMs },
    };
    if (faults.unavailable) {
      compiled.faults.unavailable = {
        trigger: new Trigger(faults.unavailable),
        retryAfterSeconds: faults.unavailable.retryAfterSeconds,
      };
    }
    if (faults.reset) {
      compiled.faults.reset = { trigger: new Trigger(faults.reset), when: faults.reset.when };
    }
    if (faults.slowBody) {
      compiled.faults.slowBody = {
        chunkBytes: faults.slowBody.chunkBytes ?? 1,
        intervalMs: faults.slowBody.intervalMs,
      };
    }
    return compiled;
  });
}

function compileLimit(
  limit: LimitConfig,
  name: string,
  namespace: string,
  store: RateLimitStore,
  clock: Clock,
): CompiledLimit {
  const common = { store: limit.store ?? store, clock, name: namespace };
  const base = {
    name,
    key: limit.key,
    scope: keyScope(limit.key),
    concurrency: false,
    leaky: false,
  };
  switch (limit.algorithm) {
    case 'fixed-window':
    case 'sliding-log':
    case 'sliding-window-counter': {
      const options = { limit: limit.limit, windowMs: limit.windowMs, ...common };
      const limiter =
        limit.algorithm === 'fixed-window'
          ? new FixedWindow(options)
          : limit.algorithm === 'sliding-log'
            ? new SlidingLog(options)
            : new SlidingWindowCounter(options);
      return {
        ...base,
        limiter,
        windowMs: limit.windowMs,
        description: `${limit.limit} per ${duration(limit.windowMs)}, ${limit.algorithm}`,
      };
    }
    case 'token-bucket':
      return {
        ...base,
        limiter: new TokenBucket({
          capacity: limit.capacity,
          refillPerSecond: limit.refillPerSecond,
          ...common,
        }),
        windowMs: (limit.capacity * 1000) / limit.refillPerSecond,
        description: `a bucket of ${limit.capacity} refilled at ${limit.refillPerSecond}/s`,
      };
    case 'gcra':
      return {
        ...base,
        limiter: new Gcra({ rate: limit.rate, burst: limit.burst, ...common }),
        windowMs: ((limit.burst + 1) * 1000) / limit.rate,
        description: `${limit.rate}/s with a burst of ${limit.burst}`,
      };
    case 'leaky-bucket':
      return {
        ...base,
        leaky: true,
        limiter: new LeakyBucket({ rate: limit.rate, capacity: limit.capacity, ...common }),
        windowMs: (limit.capacity * 1000) / limit.rate,
        description: `a queue of ${limit.capacity} drained at ${limit.rate}/s`,
      };
    case 'concurrency':
      return {
        ...base,
        concurrency: true,
        limiter: new ConcurrencyLimit({
          limit: limit.limit,
          retryAfterMs: limit.retryAfterMs,
          ...common,
        }),
        windowMs: undefined,
        description: `${limit.limit} in flight`,
      };
  }
}

function duration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * Turns a validated configuration into what the server runs: one limiter per limit (the server's
 * limits shared by every route), path matchers, fault triggers.
 *
 * @module
 */
import type { Clock } from '../../shared/clock.js';
import { ConcurrencyLimit } from '../algorithms/concurrency-limit.js';
import { FixedWindow } from '../algorithms/fixed-window.js';
import { Gcra } from '../algorithms/gcra.js';
import { LeakyBucket } from '../algorithms/leaky-bucket.js';
import type { RateLimiter } from '../algorithms/limiter.js';
import { SlidingLog } from '../algorithms/sliding-log.js';
import { SlidingWindowCounter } from '../algorithms/sliding-window-counter.js';
import { TokenBucket } from '../algorithms/token-bucket.js';
import type { RateLimitStore } from '../store.js';
import { bucketHash, partitionKey } from './budget-fields.js';
import {
  type FailMode,
  type FaultsConfig,
  type HeaderFamily,
  type KeyConfig,
  type LimitConfig,
  type MockServerConfig,
  policyNames,
  type ResponseConfig,
  type RetryAfterFormat,
  type RouteConfig,
  routeLabel,
  staticCost,
} from './config.js';
import { type CompiledCost, compileCost } from './costs.js';
import { declaredQuota } from './declared-quota.js';
import { FAULT_DEFAULTS, LIMIT_DEFAULTS, ROUTE_DEFAULTS } from './defaults.js';
import { Trigger } from './faults.js';
import { compileKey, type KeyFunction, keyScope, readsRequest } from './keys.js';
import { describePolicy, type PolicyField } from './rate-limit-headers.js';
import { compilePath, type PathMatcher } from './routes.js';

/** A limit ready to decide: its limiter and what the headers and error bodies say about it. */
export interface CompiledLimit {
  limiter: RateLimiter;
  name: string;
  key: KeyConfig | undefined;
  /** The key of a request under this limit. */
  keyOf: KeyFunction;
  scope: string;
  description: string;
  concurrency: boolean;
  leaky: boolean;
  /** What it counts: `requests`, `tokens`..., `concurrent-requests` for a concurrency limit. */
  unit: string;
  /** What a request spends in it on this route. */
  cost: CompiledCost;
  /** Its name and declared quota as the header fields write them, serialised once. */
  field: PolicyField;
  /**
   * This limit scaled to `share`, in this server's memory, created on first use: what a route
   * failing open decides on while the limit's store fails.
   */
  local(share: number): RateLimiter;
  /** {@link field} for the copy {@link local} returns (its own, scaled, declared quota). */
  localField(share: number): PolicyField;
  /** GitHub's `x-ratelimit-resource`: the limit's `resource`, else its name. */
  resource: string;
  /** Discord's `X-RateLimit-Bucket`: the limit's `resource`, else an opaque hash of its name. */
  bucket: string;
  /** A server-wide limit (shared by every route): Discord's global limit. */
  serverWide: boolean;
  /** The IETF `pk` of a request's key under this limit, when it writes one (`partitionKey`). */
  partitionOf: ((key: string) => string) | undefined;
}

/** A route ready to serve. */
export interface CompiledRoute {
  label: string;
  method: string | undefined;
  match: PathMatcher;
  limits: CompiledLimit[];
  /** Whether a limit is a leaky bucket: admitted requests may have to wait their turn. */
  leaky: boolean;
  /** Whether a limit counts requests in flight: admitted requests hold a slot until they end. */
  concurrency: boolean;
  /** Whether a limit's key reads a path parameter or the JSON body (`{ param }`, `{ json }`). */
  keysReadRequest: boolean;
  headers: HeaderFamily;
  retryAfter: RetryAfterFormat;
  /** The status of a refused request (429, or GitHub's 403). */
  rejectStatus: 429 | 403;
  response: ResponseConfig;
  /** The response's header fields, names and values in turn: the configured ones, and a JSON type. */
  responseHeaders: string[];
  /** The configured response body, serialised; `undefined` for the echo. */
  responseBody: Buffer | undefined;
  idempotency: boolean;
  failMode: FailMode;
  failOpenShare: number;
  faults: {
    latency: FaultsConfig['latencyMs'];
    unavailable?: { trigger: Trigger; retryAfterSeconds?: number };
    reset?: { trigger: Trigger; when: 'before-handler' | 'after-handler' };
    serverError?: { trigger: Trigger; status: number; when: 'before-handler' | 'after-handler' };
    slowBody?: { chunkBytes: number; intervalMs: number };
  };
}

/**
 * Compiles every route of a validated configuration.
 * @param store where limits keep their state unless one names its own store.
 * @param localStore where the local copies of the limits (for routes failing open) keep theirs.
 */
export function compileRoutes(
  config: MockServerConfig,
  store: RateLimitStore,
  clock: Clock,
  localStore: RateLimitStore,
): CompiledRoute[] {
  const edgeConfigs = config.limits ?? [];
  // Local copies of the limits, for routes failing open, share one memory store. The server's
  // limits serve every route, so theirs must fit the costliest request.
  // The server's limits are shared by every route: one limiter each, named alike on every route,
  // its cost read per route (a limit without a cost of its own spends each route's).
  const edgeNames = policyNames(edgeConfigs, [], 0);
  const edge = edgeConfigs.map((limit, i) =>
    compileLimit(limit, edgeNames[i] as string, `limits/${edgeNames[i]}`, store, clock, {
      store: localStore,
      minUnits: Math.max(1, ...config.routes.map((route) => staticCost(limit, route))),
    }),
  );
  for (const limit of edge) limit.serverWide = true;
  return config.routes.map((route, r) => {
    const label = routeLabel(route);
    const names = policyNames(edgeConfigs, route.limits ?? [], r, label).slice(edge.length);
    const own = (route.limits ?? []).map((limit, i) =>
      compileLimit(
        limit,
        names[i] as string,
        `${label}/${names[i]}`,
        store,
        clock,
        { store: localStore, minUnits: staticCost(limit, route) },
        route,
      ),
    );
    const limits = [...edge.map((limit, i) => withCost(limit, edgeConfigs[i], route)), ...own];
    const faults = route.faults ?? {};
    const compiled: CompiledRoute = {
      label,
      method: route.method?.toUpperCase(),
      match: compilePath(route.path),
      limits,
      leaky: limits.some((limit) => limit.leaky),
      concurrency: limits.some((limit) => limit.concurrency),
      keysReadRequest: [...edgeConfigs, ...(route.limits ?? [])].some((limit) =>
        readsRequest(limit.key),
      ),
      headers: route.headers ?? ROUTE_DEFAULTS.headers,
      retryAfter: route.retryAfter ?? ROUTE_DEFAULTS.retryAfter,
      rejectStatus: route.rejectStatus ?? ROUTE_DEFAULTS.rejectStatus,
      response: route.response ?? {},
      responseHeaders: responseHeaders(route.response?.headers),
      responseBody:
        route.response?.body === undefined
          ? undefined
          : Buffer.from(JSON.stringify(route.response.body)),
      idempotency: route.idempotency ?? ROUTE_DEFAULTS.idempotency,
      failMode: route.failMode ?? ROUTE_DEFAULTS.failMode,
      failOpenShare: route.failOpenShare ?? ROUTE_DEFAULTS.failOpenShare,
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
    if (faults.serverError) {
      const { status, when } = faults.serverError;
      compiled.faults.serverError = { trigger: new Trigger(faults.serverError), status, when };
    }
    if (faults.slowBody) {
      compiled.faults.slowBody = {
        chunkBytes: faults.slowBody.chunkBytes ?? FAULT_DEFAULTS.slowBody.chunkBytes,
        intervalMs: faults.slowBody.intervalMs,
      };
    }
    return compiled;
  });
}

/** A server-wide limit as one route sees it: its cost on that route. Same limiter, same state. */
function withCost(
  limit: CompiledLimit,
  config: LimitConfig | undefined,
  route: RouteConfig,
): CompiledLimit {
  return { ...limit, cost: compileCost(config?.cost, route.cost ?? ROUTE_DEFAULTS.cost) };
}

/** The configured header fields as a raw list, with `Content-Type: application/json` unless set. */
function responseHeaders(configured: Record<string, string> | undefined): string[] {
  const fields = Object.entries(configured ?? {}).flat();
  const typed = Object.keys(configured ?? {}).some((name) => name.toLowerCase() === 'content-type');
  return typed ? fields : ['Content-Type', 'application/json', ...fields];
}

/**
 * Compiles one limit. Its `cost` is the limit's own, falling back to 1; a route applies its own
 * `cost` to a server-wide limit with {@link withCost}.
 */
function compileLimit(
  limit: LimitConfig,
  name: string,
  namespace: string,
  store: RateLimitStore,
  clock: Clock,
  fallback: Fallback,
  route?: RouteConfig,
): CompiledLimit {
  const locals = new Map<number, { limiter: RateLimiter; field: PolicyField }>();
  const described = describeLimit(limit);
  const limiter = makeLimiter(limit, { store: limit.store ?? store, clock, name: namespace });
  const unit = described.concurrency ? 'concurrent-requests' : (limit.unit ?? 'requests');
  const fieldOf = (config: LimitConfig, slots: number) =>
    describePolicy(name, declaredQuota(config) ?? { slots }, unit);
  const localCopy = (share: number) => {
    let local = locals.get(share);
    if (local === undefined) {
      const scaled = scaleLimit(limit, share, fallback.minUnits);
      const copy = makeLimiter(scaled, {
        store: fallback.store,
        clock,
        name: `${namespace}@${share}`,
      });
      local = { limiter: copy, field: fieldOf(scaled, copy.limit) };
      locals.set(share, local);
    }
    return local;
  };
  return {
    ...described,
    name,
    key: limit.key,
    keyOf: compileKey(limit.key),
    scope: keyScope(limit.key),
    limiter,
    unit,
    cost: compileCost(limit.cost, route?.cost ?? ROUTE_DEFAULTS.cost),
    field: fieldOf(limit, limiter.limit),
    local: (share) => localCopy(share).limiter,
    localField: (share) => localCopy(share).field,
    resource: limit.resource ?? name,
    bucket: limit.resource ?? bucketHash(name),
    serverWide: false,
    partitionOf:
      (limit.partitionKey ?? LIMIT_DEFAULTS.partitionKey)
        ? (key) => partitionKey(namespace, key)
        : undefined,
  };
}

/** Where a limit's local copies live, and the fewest units they may hold (the largest cost). */
interface Fallback {
  store: RateLimitStore;
  minUnits: number;
}

/** The limiter of a limit, with its store, clock and namespace. */
function makeLimiter(
  limit: LimitConfig,
  common: { store: RateLimitStore; clock: Clock; name: string },
): RateLimiter {
  switch (limit.algorithm) {
    case 'fixed-window':
      return new FixedWindow({ limit: limit.limit, windowMs: limit.windowMs, ...common });
    case 'sliding-log':
      return new SlidingLog({ limit: limit.limit, windowMs: limit.windowMs, ...common });
    case 'sliding-window-counter':
      return new SlidingWindowCounter({ limit: limit.limit, windowMs: limit.windowMs, ...common });
    case 'token-bucket':
      return new TokenBucket({
        capacity: limit.capacity,
        refillPerSecond: limit.refillPerSecond,
        ...common,
      });
    case 'gcra':
      return new Gcra({ rate: limit.rate, burst: limit.burst, ...common });
    case 'leaky-bucket':
      return new LeakyBucket({ rate: limit.rate, capacity: limit.capacity, ...common });
    case 'concurrency':
      return new ConcurrencyLimit({
        limit: limit.limit,
        retryAfterMs: limit.retryAfterMs,
        ...common,
      });
  }
}

/** What the error bodies say about a limit. */
function describeLimit(
  limit: LimitConfig,
): Pick<CompiledLimit, 'description' | 'concurrency' | 'leaky'> {
  const flags = { concurrency: limit.algorithm === 'concurrency', leaky: false };
  switch (limit.algorithm) {
    case 'fixed-window':
    case 'sliding-log':
    case 'sliding-window-counter':
      return {
        ...flags,
        description: `${limit.limit} per ${duration(limit.windowMs)}, ${limit.algorithm}`,
      };
    case 'token-bucket':
      return {
        ...flags,
        description: `a bucket of ${limit.capacity} refilled at ${limit.refillPerSecond}/s`,
      };
    case 'gcra':
      return { ...flags, description: `${limit.rate}/s with a burst of ${limit.burst}` };
    case 'leaky-bucket':
      return {
        ...flags,
        leaky: true,
        description: `a queue of ${limit.capacity} drained at ${limit.rate}/s`,
      };
    case 'concurrency':
      return { ...flags, description: `${limit.limit} in flight` };
  }
}

/**
 * `limit` scaled to `share` of it: counts and capacities rounded down (to at least `minUnits`, so
 * every request of the routes it serves still fits), rates multiplied. Its own store is dropped.
 */
export function scaleLimit(limit: LimitConfig, share: number, minUnits: number): LimitConfig {
  const units = (n: number) => Math.max(minUnits, Math.floor(n * share));
  const { store: _store, ...rest } = limit;
  switch (rest.algorithm) {
    case 'fixed-window':
    case 'sliding-log':
    case 'sliding-window-counter':
    case 'concurrency':
      return { ...rest, limit: units(rest.limit) };
    case 'token-bucket':
      return {
        ...rest,
        capacity: units(rest.capacity),
        refillPerSecond: rest.refillPerSecond * share,
      };
    case 'gcra':
      return { ...rest, rate: rest.rate * share, burst: units(rest.burst + 1) - 1 };
    case 'leaky-bucket':
      return { ...rest, rate: rest.rate * share, capacity: units(rest.capacity) };
  }
}

function duration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

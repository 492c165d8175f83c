/**
 * `createMockServer`: the algorithms behind real HTTP, with the misbehaviour clients must survive.
 *
 * @module
 */
import { once } from 'node:events';
import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, systemClock } from '../../clock.js';
import { ConcurrencyLimit } from '../algorithms/concurrency-limit.js';
import { FixedWindow } from '../algorithms/fixed-window.js';
import { Gcra } from '../algorithms/gcra.js';
import { LeakyBucket } from '../algorithms/leaky-bucket.js';
import type { Acquisition, RateLimiter } from '../algorithms/limiter.js';
import { SlidingLog } from '../algorithms/sliding-log.js';
import { SlidingWindowCounter } from '../algorithms/sliding-window-counter.js';
import { TokenBucket } from '../algorithms/token-bucket.js';
import { MemoryStore } from '../memory-store.js';
import type { RateLimitStore } from '../store.js';
import type { TakeResult } from '../types.js';
import {
  type FaultsConfig,
  type HeaderFamily,
  type KeyConfig,
  type LimitConfig,
  type MockServerConfig,
  parseConfig,
  policyNames,
  type ResponseConfig,
  type RetryAfterFormat,
  routeLabel,
} from './config.js';
import { latencyFor, Trigger } from './faults.js';
import { fingerprint, IdempotencyStore, type StoredResponse } from './idempotency.js';
import { clientIp, keyScope, requestKey } from './keys.js';
import {
  mostRestrictive,
  type PolicyReport,
  rateLimitFields,
  retryAfterField,
} from './rate-limit-headers.js';
import { compilePath, methodMatches, type PathMatcher } from './routes.js';
import { type MockServerStats, StatsRecorder } from './stats.js';

/** A running mock server, from {@link createMockServer}. */
export interface MockServer {
  /** The base URL, e.g. `http://127.0.0.1:49152`. */
  readonly url: string;
  /** The port it listens on (the one picked, when the config said 0). */
  readonly port: number;
  /** A snapshot of the counters: admitted, rejected, side effects; per route and client key. */
  stats(): MockServerStats;
  /** Sets every counter back to zero. Limits keep their state. */
  resetStats(): void;
  /**
   * Stops listening, destroys every open connection, and cancels pending delays. Resolves once the
   * server is closed; calling it again returns the same promise.
   */
  close(): Promise<void>;
}

/** The largest request body read, in bytes; larger ones get 413. */
const MAX_BODY_BYTES = 1024 * 1024;

interface CompiledLimit {
  limiter: RateLimiter;
  name: string;
  key: KeyConfig | undefined;
  scope: string;
  description: string;
  windowMs: number | undefined;
  concurrency: boolean;
  leaky: boolean;
}

interface CompiledRoute {
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

/**
 * Starts a rate-limited HTTP server on loopback (an ephemeral port unless `config.port` says
 * otherwise). The configuration is validated first; a mistake throws an `InvalidOptionError` naming
 * the field (`invalid option routes[0].limits[0].windowMs: must be a positive integer, got 0`).
 *
 * What a request goes through, in order:
 * 1. the first route whose method and path match (else 404, or 405 with `Allow`);
 * 2. the server's `limits`, then the route's: admitted only if every one admits it; otherwise 429
 *    with the header fields, `Retry-After` and a JSON body naming the policy and its scope, and
 *    nothing spent in any limit (each admitted take is refunded);
 * 3. its turn in any leaky bucket (the response waits);
 * 4. the `unavailable` fault (503), then the `reset` fault `before-handler`;
 * 5. `Idempotency-Key`: a replay of the stored response, or 409 while the first is running, or
 *    422 for the same key with a different request;
 * 6. the handler: `latencyMs` of work (completed even if the client leaves), then the side effect
 *    (counted in `stats()`, its response stored for replay), then the `reset` fault
 *    `after-handler`;
 * 7. the response (slowly, with `slowBody`). Concurrency slots are released when the response
 *    ends or the client goes away, whichever comes first.
 *
 * @example
 * const server = await createMockServer({
 *   routes: [{
 *     method: 'POST', path: '/payments', cost: 1,
 *     limits: [{ algorithm: 'token-bucket', capacity: 5, refillPerSecond: 1, key: { header: 'x-api-key' } }],
 *     faults: { reset: { when: 'after-handler', times: 1 } },
 *   }],
 * });
 * const response = await fetch(`${server.url}/payments`, { method: 'POST' });
 * console.log(server.stats().sideEffects);
 * await server.close();
 */
export async function createMockServer(config: MockServerConfig): Promise<MockServer> {
  const parsed = parseConfig(config);
  const clock = parsed.clock ?? systemClock;
  const store = parsed.store ?? new MemoryStore();
  const routes = compileRoutes(parsed, store, clock);
  const trustProxy = parsed.trustProxy ?? false;
  const idempotencyHeader = (parsed.idempotency?.header ?? 'Idempotency-Key').toLowerCase();
  const idempotency = new IdempotencyStore(
    parsed.idempotency?.ttlMs ?? 86_400_000,
    parsed.idempotency?.maxEntries ?? 10_000,
  );
  const stats = new StatsRecorder();
  for (const route of routes) stats.declare(route.label);
  const closing = new AbortController();
  const startedAt = clock.now();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const exchange = new Exchange(res, closing.signal);
    const method = (req.method ?? 'GET').toUpperCase();
    const rawUrl = req.url ?? '/';
    const queryAt = rawUrl.indexOf('?');
    const path = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt);
    const query = new URLSearchParams(queryAt < 0 ? '' : rawUrl.slice(queryAt + 1));

    let route: CompiledRoute | undefined;
    let params: Record<string, string> = {};
    const allowed = new Set<string>();
    for (const candidate of routes) {
      const found = candidate.match(path);
      if (found === undefined) continue;
      if (methodMatches(candidate.method, method)) {
        route = candidate;
        params = found;
        break;
      }
      if (candidate.method !== undefined) allowed.add(candidate.method);
    }
    if (route === undefined) {
      if (allowed.size > 0) {
        sendJson(
          res,
          clock,
          405,
          { Allow: [...allowed].join(', ') },
          { error: 'method_not_allowed' },
        );
      } else sendJson(res, clock, 404, {}, { error: 'not_found', path });
      return;
    }

    const body = await readBody(req);
    if (body === undefined) {
      sendJson(res, clock, 413, { Connection: 'close' }, { error: 'payload_too_large' });
      return;
    }

    const now = clock.now();
    const ip = clientIp(req, trustProxy);
    const keys = route.limits.map((limit) => requestKey(limit.key, req, ip));
    const client = clientKey(keys, ip);
    const admission = await admit(route, keys, now);
    if (!admission.allowed) {
      stats.count(route.label, client, 'rejected');
      sendRejection(res, route, admission.reports, now);
      return;
    }
    stats.count(route.label, client, 'admitted');
    for (const [i, acquisition] of admission.acquisitions.entries()) {
      if (route.limits[i]?.concurrency) exchange.onClose(() => void acquisition.refund());
    }
    const limitHeaders = rateLimitFields(route.headers, admission.reports, false, now);

    // Its turn in the leaky buckets.
    const delayMs = Math.max(0, ...admission.results.map((r) => r.delayMs ?? 0));
    if (!(await exchange.wait(clock, delayMs))) {
      for (const [i, acquisition] of admission.acquisitions.entries()) {
        if (route.limits[i]?.leaky) void acquisition.refund();
      }
      return;
    }

    const unavailable = route.faults.unavailable;
    if (unavailable?.trigger.fires(clock.now() - startedAt, clock)) {
      stats.count(route.label, client, 'unavailable');
      const headers: OutgoingHttpHeaders = { ...limitHeaders };
      if (unavailable.retryAfterSeconds !== undefined) {
        headers['Retry-After'] = String(unavailable.retryAfterSeconds);
      }
      sendJson(res, clock, 503, headers, { error: 'unavailable', route: route.label });
      return;
    }
    const reset = route.faults.reset;
    if (reset?.when === 'before-handler' && reset.trigger.fires(clock.now() - startedAt, clock)) {
      stats.count(route.label, client, 'resets');
      resetConnection(req);
      return;
    }

    const idempotencyKey = route.idempotency ? header(req, idempotencyHeader) : undefined;
    const claimKey = `${route.label}\n${idempotencyKey}`;
    if (idempotencyKey !== undefined) {
      const claim = idempotency.begin(claimKey, fingerprint(method, rawUrl, body), clock.now());
      if (claim.kind === 'replay') {
        stats.count(route.label, client, 'replays');
        const replayed = {
          ...claim.response.headers,
          ...limitHeaders,
          'Idempotent-Replayed': 'true',
        };
        await send(res, exchange, clock, claim.response.status, replayed, claim.response.body);
        return;
      }
      if (claim.kind !== 'new') {
        stats.count(route.label, client, 'idempotencyConflicts');
        const conflict = claim.kind === 'in-progress';
        sendJson(res, clock, conflict ? 409 : 422, limitHeaders, {
          error: conflict ? 'idempotency_key_in_use' : 'idempotency_key_reused',
          message: conflict
            ? 'A request with this Idempotency-Key is still being processed.'
            : 'This Idempotency-Key was used with a different request.',
        });
        return;
      }
    }

    // The handler: it works for `latencyMs` (and finishes even if the client leaves; only the
    // server closing stops it), then runs the side effect.
    const latency = latencyFor(route.faults.latency, clock);
    if (latency > 0) {
      try {
        await clock.sleep(latency, closing.signal);
      } catch {
        if (idempotencyKey !== undefined) idempotency.abandon(claimKey);
        return;
      }
    }
    // The side effect.
    const execution = stats.count(route.label, client, 'sideEffects');
    const response = respond(route, { method, path, params, query, body, req, execution });
    if (idempotencyKey !== undefined) idempotency.complete(claimKey, response, clock.now());
    if (reset?.when === 'after-handler' && reset.trigger.fires(clock.now() - startedAt, clock)) {
      stats.count(route.label, client, 'resets');
      resetConnection(req);
      return;
    }
    await send(
      res,
      exchange,
      clock,
      response.status,
      { ...response.headers, ...limitHeaders },
      response.body,
      route.faults.slowBody,
    );
  };

  const sendRejection = (
    res: ServerResponse,
    route: CompiledRoute,
    reports: PolicyReport[],
    now: number,
  ) => {
    const top = mostRestrictive(reports, true);
    const limit = route.limits[reports.indexOf(top)] as CompiledLimit;
    const headers: OutgoingHttpHeaders = rateLimitFields(route.headers, reports, true, now);
    const retryAfter = retryAfterField(route.retryAfter, top.retryAfterMs, now);
    if (retryAfter !== undefined) headers['Retry-After'] = retryAfter;
    const seconds = Math.ceil(top.retryAfterMs / 1000);
    sendJson(res, clock, 429, headers, {
      error: 'rate_limited',
      message: `Too many requests: policy "${top.name}" (${limit.description}, per ${limit.scope}) has no room for this request; retry in ${seconds} s.`,
      policy: top.name,
      scope: limit.scope,
      limit: top.limit,
      remaining: top.remaining,
      cost: route.cost,
      retryAfterMs: top.retryAfterMs,
    });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else sendJson(res, clock, 500, {}, { error: 'internal_error', message: String(error) });
    });
  });
  server.listen(parsed.port ?? 0, parsed.host ?? '127.0.0.1');
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([error]) => Promise.reject(error)),
  ]);
  const address = server.address() as AddressInfo;
  const host = urlHost(address.address);
  let closed: Promise<void> | undefined;

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

interface Admission {
  allowed: boolean;
  acquisitions: Acquisition[];
  results: TakeResult[];
  reports: PolicyReport[];
}

/**
 * Takes `route.cost` from each limit in order. When one rejects, the takes already made are
 * refunded (last first), so a rejected request spends nothing anywhere, and every limit is then
 * described as it stands (`peek`). Another request can briefly see a refunded unit as spent: the
 * error is toward rejecting, never toward admitting too much.
 */
async function admit(route: CompiledRoute, keys: string[], now: number): Promise<Admission> {
  const acquisitions: Acquisition[] = [];
  const results: TakeResult[] = [];
  const options = { cost: route.cost, now };
  let rejected = -1;
  for (const [i, limit] of route.limits.entries()) {
    const acquisition = await limit.limiter.acquire(keys[i] as string, options);
    results.push(acquisition.result);
    if (!acquisition.result.allowed) {
      rejected = i;
      break;
    }
    acquisitions.push(acquisition);
  }
  if (rejected >= 0) {
    for (const acquisition of [...acquisitions].reverse()) await acquisition.refund();
    for (const [i, limit] of route.limits.entries()) {
      if (i !== rejected) results[i] = await limit.limiter.peek(keys[i] as string, options);
    }
  }
  const reports = route.limits.map((limit, i) => report(limit, results[i] as TakeResult));
  return { allowed: rejected < 0, acquisitions, results, reports };
}

function report(limit: CompiledLimit, result: TakeResult): PolicyReport {
  const out: PolicyReport = {
    name: limit.name,
    limit: result.limit,
    remaining: result.remaining,
    resetMs: result.resetMs,
    retryAfterMs: result.retryAfterMs,
    concurrency: limit.concurrency,
  };
  if (limit.windowMs !== undefined) out.windowMs = limit.windowMs;
  return out;
}

/** The stats key of a request: its limits' keys, without `global` unless that is all there is. */
function clientKey(keys: string[], ip: string): string {
  if (keys.length === 0) return `ip:${ip}`;
  const distinct = [...new Set(keys)];
  const specific = distinct.filter((k) => k !== 'global');
  return (specific.length > 0 ? specific : distinct).join(' ');
}

interface HandlerInput {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Buffer;
  req: IncomingMessage;
  execution: number;
}

/** The route's answer: its configured body, or an echo of the request. */
function respond(route: CompiledRoute, input: HandlerInput): StoredResponse {
  const { response } = route;
  const payload =
    response.body !== undefined
      ? response.body
      : {
          ok: true,
          route: route.label,
          method: input.method,
          path: input.path,
          params: input.params,
          query: Object.fromEntries(input.query),
          execution: input.execution,
          body: echo(input.req, input.body),
        };
  return {
    status: response.status ?? 200,
    headers: { 'Content-Type': 'application/json', ...response.headers },
    body: Buffer.from(JSON.stringify(payload)),
  };
}

function echo(req: IncomingMessage, body: Buffer): unknown {
  if (body.length === 0) return undefined;
  const text = body.toString('utf8');
  if (!/json/i.test(req.headers['content-type'] ?? '')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * One request and its response: aborts its signal when the response closes (finished, or the
 * client went away) or the server closes, and runs cleanups once, even when registered late.
 */
class Exchange {
  readonly signal: AbortSignal;
  #closed = false;
  readonly #cleanups: (() => void)[] = [];

  constructor(res: ServerResponse, serverSignal: AbortSignal) {
    const closed = new AbortController();
    this.signal = AbortSignal.any([closed.signal, serverSignal]);
    res.once('close', () => {
      this.#closed = true;
      closed.abort();
      for (const cleanup of this.#cleanups.splice(0)) cleanup();
    });
  }

  /** Runs `cleanup` when the response closes; at once if it already has. */
  onClose(cleanup: () => void): void {
    if (this.#closed) cleanup();
    else this.#cleanups.push(cleanup);
  }

  /** Sleeps `ms` on `clock`; false when the exchange ended first (nothing more should be sent). */
  async wait(clock: Clock, ms: number): Promise<boolean> {
    if (this.signal.aborted) return false;
    if (ms <= 0) return true;
    try {
      await clock.sleep(ms, this.signal);
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * The request body, or `undefined` when it is over {@link MAX_BODY_BYTES}. An oversized body is
 * still read (and dropped) up to 16 times that, so the client finishes sending and can read the
 * 413; past that the connection is cut.
 */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 16 * MAX_BODY_BYTES) {
      req.destroy();
      return undefined;
    }
    if (size <= MAX_BODY_BYTES) chunks.push(chunk as Buffer);
  }
  return size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function resetConnection(req: IncomingMessage): void {
  req.socket.resetAndDestroy();
}

function httpDate(clock: Clock): string {
  return new Date(clock.now()).toUTCString();
}

function sendJson(
  res: ServerResponse,
  clock: Clock,
  status: number,
  headers: OutgoingHttpHeaders,
  payload: unknown,
): void {
  const body = Buffer.from(JSON.stringify(payload));
  res.writeHead(status, {
    ...headers,
    Date: httpDate(clock),
    'Content-Type': 'application/json',
    'Content-Length': body.length,
  });
  res.end(body);
}

async function send(
  res: ServerResponse,
  exchange: Exchange,
  clock: Clock,
  status: number,
  headers: OutgoingHttpHeaders,
  body: Buffer,
  slow?: { chunkBytes: number; intervalMs: number },
): Promise<void> {
  res.writeHead(status, { ...headers, Date: httpDate(clock), 'Content-Length': body.length });
  if (slow === undefined || res.req.method === 'HEAD') {
    res.end(body);
    return;
  }
  for (let at = 0; at < body.length; at += slow.chunkBytes) {
    if (at > 0 && !(await exchange.wait(clock, slow.intervalMs))) return;
    res.write(body.subarray(at, at + slow.chunkBytes));
  }
  res.end();
}

function duration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function urlHost(address: string): string {
  if (address === '0.0.0.0') return '127.0.0.1';
  if (address === '::') return '[::1]';
  return address.includes(':') ? `[${address}]` : address;
}

function compileRoutes(
  config: MockServerConfig,
  store: RateLimitStore,
  clock: Clock,
): CompiledRoute[] {
  const edgeConfigs = config.limits ?? [];
  // Edge limits are shared by every route: one limiter each, under the names route 0 gives them.
  const edgeNames = policyNames(edgeConfigs, [], 0);
  const edge = edgeConfigs.map((limit, i) =>
    compileLimit(limit, edgeNames[i] as string, `limits/${edgeNames[i]}`, store, clock),
  );
  return config.routes.map((route, r) => {
    const label = routeLabel(route);
    const names = policyNames(edgeConfigs, route.limits ?? [], r).slice(edge.length);
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

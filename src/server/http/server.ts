/**
 * `createMockServer`: the algorithms behind real HTTP, with the misbehaviour clients must survive.
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type Clock, systemClock } from '../../shared/clock.js';
import { Emitter } from '../../shared/events.js';
import type { Acquisition } from '../algorithms/limiter.js';
import { Dashboard } from '../dashboard/serve.js';
import { MemoryStore } from '../memory-store.js';
import { PROMETHEUS_CONTENT_TYPE } from '../metrics/prometheus.js';
import { METRICS_PATH, ServerMetrics } from '../metrics/server-metrics.js';
import { type Admission, admit, clientKey, type StoreFailure } from './admission.js';
import { BodyBudget, declaresBody, NO_BODY, readBody } from './body.js';
import { discordBody } from './budget-fields.js';
import { type CompiledRoute, compileRoutes } from './compile.js';
import { type FailMode, type MockServerConfig, parseConfig } from './config.js';
import { Connections } from './connections.js';
import { applyFields, type Cors, compileCors } from './cors.js';
import { type CostInput, costInput } from './costs.js';
import { SERVER_DEFAULTS } from './defaults.js';
import {
  Exchange,
  type HeaderFields,
  header,
  httpDate,
  resetConnection,
  send,
  sendJson,
} from './exchange.js';
import { latencyFor } from './faults.js';
import { fingerprint, IdempotencyStore } from './idempotency.js';
import { boundedValue, clientIp } from './keys.js';
import { mostRestrictive, rateLimitFields, retryAfterField } from './rate-limit-headers.js';
import { type ResponseRecipe, respond } from './respond.js';
import { methodMatches } from './routes.js';
import { type MockServerStats, StatsRecorder } from './stats.js';
import { parseTarget } from './target.js';

/** A running mock server, from {@link createMockServer}. */
export interface MockServer {
  /** The base URL, e.g. `http://127.0.0.1:49152`. */
  readonly url: string;
  /** The port it listens on (the one picked, when the config said 0). */
  readonly port: number;
  /**
   * A snapshot of the counters: admitted, rejected, side effects; per route and client key; and
   * what clients make the server hold now (`held`).
   */
  stats(): MockServerStats;
  /** Sets every counter back to zero. Limits keep their state. */
  resetStats(): void;
  /**
   * The metrics as Prometheus text (what `GET /__metrics` answers), or `undefined` when the config
   * did not turn them on (`metrics: true`). See docs/observability.md.
   */
  metrics(): string | undefined;
  /**
   * Listens to an event; returns a function that removes the listener. Listeners run synchronously
   * and cost nothing when there are none.
   * @example
   * server.on('store-error', (e) => console.warn(`${e.route} ${e.policy}: ${e.operation} failed, failing ${e.failMode}`));
   */
  on<E extends keyof MockServerEvents>(event: E, listener: MockServerEvents[E]): () => void;
  /**
   * Stops listening, destroys every open connection, and cancels pending delays. Resolves once the
   * server is closed; calling it again returns the same promise.
   */
  close(): Promise<void>;
}

/** The events of a {@link MockServer}. */
export interface MockServerEvents {
  /**
   * A limit's store failed (a Redis store timed out or is down): one event per failed call. For a
   * take, the route then failed open (decided on the limit's local share) or closed (answered
   * 503), as its `failMode` says; a failed peek only changes what the headers report, and a failed
   * refund leaves its units spent until the store expires them.
   */
  'store-error': (event: StoreErrorEvent) => void;
}

/** What a `store-error` listener receives. */
export interface StoreErrorEvent {
  /** The route's label, as in `stats()`. */
  route: string;
  /** The policy (limit) whose store failed. */
  policy: string;
  /** What was asked of the store. */
  operation: StoreFailure['operation'];
  /** The route's fail mode. */
  failMode: FailMode;
  /** What the store threw (a `StoreUnavailableError` for the Redis store). */
  error: unknown;
}

/**
 * Starts a rate-limited HTTP server on loopback (an ephemeral port unless `config.port` says
 * otherwise). The configuration is validated first; a mistake throws an `InvalidOptionError` naming
 * the field (`invalid option routes[0].limits[0].windowMs: must be a positive integer, got 0`).
 *
 * What a request goes through, in order:
 * 0. with `cors`, a preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) is
 *    answered 204 at once, counted nowhere;
 * 1. the first route whose method and path match (else 404, or 405 with `Allow`). The path is the
 *    target's, in origin-form or absolute-form (`GET http://h/items/1`), normalised (see
 *    `parseTarget`); any other target is a 400, and `OPTIONS *` a 204;
 * 2. each limit's cost, fixed or read from the request (a header, a JSON body field): 400 when the
 *    request's value is not an integer from 1, 413 when it is more than the limit ever holds;
 *    then the server's `limits`, then the route's: admitted only if every one admits it; else 429
 *    with the header fields, `Retry-After` and a JSON body naming the policy and its scope, and
 *    nothing spent in any limit (each admitted take is refunded). When a limit's store fails, the
 *    route's `failMode` decides: a local share of the limit (`'open'`) or 503 (`'closed'`);
 * 3. its turn in any leaky bucket (the response waits);
 * 4. the `unavailable` fault (503), then the `serverError` and `reset` faults `before-handler`;
 * 5. `Idempotency-Key` (on a route that honours it, every answer from step 2 on echoes the key in
 *    the same header, as Stripe does): a replay of the stored response, or 409 while the first is
 *    running, or 422 for the same key with a different request;
 * 6. the handler: `latencyMs` of work (completed even if the client leaves), then the side effect
 *    (counted in `stats()`, its response stored for replay), then the `serverError` and `reset`
 *    faults `after-handler`;
 * 7. the response (slowly, with `slowBody`). Concurrency slots are released when the response
 *    ends or the client goes away, whichever comes first; a connection that closes ends every
 *    request on it, pipelined ones whose responses were still queued included.
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
  const pipeline = new Pipeline(parsed);
  const server = createServer(SERVER_OPTIONS, (req, res) => {
    pipeline.handle(req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else
        sendJson(res, pipeline.clock, 500, [], { error: 'internal_error', message: String(error) });
    });
  });
  server.maxConnections = parsed.maxConnections ?? SERVER_DEFAULTS.maxConnections;
  server.maxHeadersCount = MAX_HEADERS_COUNT;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('connection', (socket: Socket) => pipeline.accept(socket));
  await listen(server, parsed.port ?? SERVER_DEFAULTS.port, parsed.host ?? SERVER_DEFAULTS.host);
  const address = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${urlHost(address.address)}:${address.port}`,
    port: address.port,
    stats: () => pipeline.snapshot(),
    resetStats: () => pipeline.stats.reset(),
    metrics: () => pipeline.metrics?.render(pipeline.clock.now()),
    on: (event, listener) => pipeline.on(event, listener),
    close() {
      closed ??= new Promise<void>((resolve) => {
        pipeline.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

/**
 * Node's bounds on a request's head and timing, pinned so that a process flag
 * (`--max-http-header-size`) or a new Node default does not move them: the request line and header
 * fields within 16 KiB (else 431), within 60 s, the whole request within 300 s (else 408).
 */
const SERVER_OPTIONS = {
  maxHeaderSize: 16 * 1024,
  headersTimeout: 60_000,
  requestTimeout: 300_000,
};

/** Header fields read per request; Node drops the rest. */
const MAX_HEADERS_COUNT = 2000;

/** Milliseconds an idle keep-alive connection stays open. */
const KEEP_ALIVE_TIMEOUT_MS = 5000;

/** One request on its way through the pipeline, with what the stages learn about it. */
interface Call {
  req: IncomingMessage;
  res: ServerResponse;
  exchange: Exchange;
  route: CompiledRoute;
  params: Record<string, string>;
  method: string;
  url: string;
  path: string;
  query: URLSearchParams;
  body: Buffer;
  /** Whether the body is JSON by its `Content-Type`. */
  json: boolean;
  /** The request's key in `stats()`. */
  client: string;
  /** The rate-limit fields of an admitted request, sent with whatever it gets. */
  limitHeaders: HeaderFields;
  /** The request's `Idempotency-Key` on a route that honours it, else `undefined`. */
  idempotencyKey: string | undefined;
  /** What keys and costs read of the request, made on first use (`#input`). */
  input: CostInput | undefined;
}

/** The stages a request goes through, in the order documented on {@link createMockServer}. */
class Pipeline {
  readonly clock: Clock;
  readonly stats = new StatsRecorder();
  readonly #routes: CompiledRoute[];
  readonly #trustProxy: boolean | number;
  /** The idempotency header's name, lower case (as looked up) and as configured (as echoed). */
  readonly #idempotencyHeader: string;
  readonly #idempotencyField: string;
  readonly #idempotency: IdempotencyStore<ResponseRecipe>;
  readonly #closing = new AbortController();
  readonly #connections = new Connections();
  readonly #bodies: BodyBudget;
  readonly #maxPipelined: number;
  /** The memory stores the limits use, for `held.limiterKeys`. */
  readonly #memoryStores: MemoryStore[];
  readonly #startedAt: number;
  /** A listener's own mistake must not turn a request into a 500 or reject a release: a warning. */
  readonly #events = new Emitter<{ 'store-error': StoreErrorEvent }>((error, name) =>
    process.emitWarning(`mock server: a '${String(name)}' listener threw: ${String(error)}`),
  );
  readonly #cors: Cors | undefined;
  /** The metrics, when the config turns them on (`metrics: true`, or `dashboard: true`). */
  readonly metrics: ServerMetrics | undefined;
  /** The live dashboard, with `dashboard: true` (src/server/dashboard). */
  readonly #dashboard: Dashboard | undefined;

  constructor(config: MockServerConfig) {
    this.clock = config.clock ?? systemClock;
    const store = config.store ?? new MemoryStore();
    const localStore = new MemoryStore();
    this.#routes = compileRoutes(config, store, this.clock, localStore);
    this.#memoryStores = store instanceof MemoryStore ? [store, localStore] : [localStore];
    this.#trustProxy = config.trustProxy ?? SERVER_DEFAULTS.trustProxy;
    this.#idempotencyField = config.idempotency?.header ?? SERVER_DEFAULTS.idempotency.header;
    this.#idempotencyHeader = this.#idempotencyField.toLowerCase();
    this.#idempotency = new IdempotencyStore({
      ttlMs: config.idempotency?.ttlMs ?? SERVER_DEFAULTS.idempotency.ttlMs,
      maxEntries: config.idempotency?.maxEntries ?? SERVER_DEFAULTS.idempotency.maxEntries,
      maxBytes: config.idempotency?.maxBytes ?? SERVER_DEFAULTS.idempotency.maxBytes,
    });
    this.#bodies = new BodyBudget(
      config.maxBufferedBodyBytes ?? SERVER_DEFAULTS.maxBufferedBodyBytes,
    );
    this.#maxPipelined = config.maxPipelinedRequests ?? SERVER_DEFAULTS.maxPipelinedRequests;
    for (const route of this.#routes) this.stats.declare(route.label);
    this.#startedAt = this.clock.now();
    this.#cors = compileCors(config, this.#idempotencyField);
    this.metrics = config.metrics || config.dashboard ? new ServerMetrics() : undefined;
    this.#dashboard =
      config.dashboard && this.metrics
        ? new Dashboard({
            routes: this.#routes,
            recorder: this.stats,
            stats: () => this.snapshot(),
            metrics: this.metrics,
            clock: this.clock,
            closing: this.#closing.signal,
          })
        : undefined;
  }

  /** The counters, and what clients make the server hold now. */
  snapshot(): MockServerStats {
    return this.stats.snapshot({
      connections: this.#connections.size,
      requests: this.#connections.requests,
      bodyBytes: this.#bodies.held,
      limiterKeys: this.#memoryStores.reduce((sum, store) => sum + store.size, 0),
      idempotencyKeys: this.#idempotency.size,
      idempotencyBytes: this.#idempotency.bytes,
    });
  }

  /** Tracks a new connection. */
  accept(socket: Socket): void {
    this.#connections.accept(socket);
  }

  on<E extends keyof MockServerEvents>(event: E, listener: MockServerEvents[E]): () => void {
    if (event !== 'store-error') throw new TypeError(`unknown event ${JSON.stringify(event)}`);
    return this.#events.on(event, listener);
  }

  /** Cancels every pending wait: leaky-bucket turns, handler work, slow bodies. */
  close(): void {
    this.#closing.abort();
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const exchange = new Exchange(req, res, this.#closing.signal, this.#connections);
    // Every answer carries the CORS fields, the server's own errors included.
    if (this.#cors !== undefined) applyFields(res, this.#cors.fields);
    if (exchange.pipelined > this.#maxPipelined) {
      sendJson(res, this.clock, 503, ['Connection', 'close', 'Retry-After', '1'], {
        error: 'too_many_pipelined_requests',
        message: `More than ${this.#maxPipelined} requests in flight on one connection; the connection closes after this answer.`,
      });
      return;
    }
    if (this.metrics !== undefined && req.method === 'GET' && req.url === METRICS_PATH) {
      const text = this.metrics.render(this.clock.now());
      res.writeHead(200, ['Content-Type', PROMETHEUS_CONTENT_TYPE, 'Date', httpDate(this.clock)]);
      res.end(text);
      return;
    }
    if (this.#dashboard?.serve(req, res)) return;
    const preflight = this.#cors?.preflight(req);
    if (preflight !== undefined) {
      res.writeHead(204, [...preflight, 'Date', httpDate(this.clock)]).end();
      return;
    }
    const call = await this.#route(req, res, exchange);
    if (call === undefined) return;
    this.#echoKey(call);
    const admission = await this.#admit(call);
    if (admission === undefined) return;
    if (call.route.leaky && !(await this.#waitTurn(call, admission))) return;
    if (this.#failBeforeHandler(call)) return;
    const claimKey = this.#claim(call);
    if (claimKey === false) return;
    await this.#runHandler(call, claimKey);
  }

  /** Finds the route (or answers 404 / 405 / 413) and reads the body. */
  async #route(
    req: IncomingMessage,
    res: ServerResponse,
    exchange: Exchange,
  ): Promise<Call | undefined> {
    const method = (req.method ?? 'GET').toUpperCase();
    const target = parseTarget(req.url ?? '/');
    if (target.form !== 'path') {
      if (target.form === 'asterisk' && method === 'OPTIONS') {
        res.writeHead(204, ['Date', httpDate(this.clock)]).end();
      } else {
        sendJson(res, this.clock, 400, [], {
          error: 'bad_request_target',
          message: 'The request target must be a path (/items/1) or an absolute http(s) URL.',
        });
      }
      return undefined;
    }
    const { path } = target;
    // The target in origin-form, whatever form it came in: what a replay must repeat.
    const url = target.query === '' ? path : `${path}?${target.query}`;
    const allowed = new Set<string>();
    for (const route of this.#routes) {
      const params = route.match(path);
      if (params === undefined) continue;
      if (!methodMatches(route.method, method)) {
        if (route.method !== undefined) allowed.add(route.method);
        continue;
      }
      const read = declaresBody(req) ? await readBody(req, this.#bodies) : NO_BODY;
      if (read.kind === 'aborted') return undefined;
      if (read.kind === 'too-large') {
        sendJson(res, this.clock, 413, ['Connection', 'close'], { error: 'payload_too_large' });
        return undefined;
      }
      if (read.kind === 'busy') {
        sendJson(res, this.clock, 503, ['Connection', 'close', 'Retry-After', '1'], {
          error: 'server_busy',
          message: 'The server holds as many request bodies as it may; retry shortly.',
        });
        return undefined;
      }
      const { body } = read;
      if (read !== NO_BODY) exchange.onClose(read.release);
      return {
        req,
        res,
        exchange,
        route,
        params,
        method,
        url,
        path,
        query: new URLSearchParams(target.query),
        body,
        json: body.length > 0 && /json/i.test(header(req, 'content-type') ?? ''),
        client: '',
        limitHeaders: [],
        idempotencyKey: undefined,
        input: undefined,
      };
    }
    if (allowed.size > 0) {
      const headers = ['Allow', [...allowed].join(', ')];
      sendJson(res, this.clock, 405, headers, { error: 'method_not_allowed' });
    } else sendJson(res, this.clock, 404, [], { error: 'not_found', path });
    return undefined;
  }

  /**
   * On a route that honours `Idempotency-Key`, reads the request's key and echoes it on every
   * answer, as Stripe does: what tells a client that this server deduplicates by the key. A route
   * that ignores the key (`idempotency: false`) says nothing of it.
   */
  #echoKey(call: Call): void {
    if (!call.route.idempotency) return;
    const key = header(call.req, this.#idempotencyHeader);
    if (key === undefined) return;
    call.idempotencyKey = key;
    try {
      call.res.setHeader(this.#idempotencyField, key);
    } catch {
      // A value Node would not write back (its parser let it in): the answer goes without the echo.
    }
  }

  /**
   * Runs the limits; answers 429 when one rejects. For an admitted request, holds its concurrency
   * slots until the response closes.
   */
  async #admit(call: Call): Promise<Admission | undefined> {
    const { req, route } = call;
    const now = this.clock.now();
    const ip = clientIp(req, this.#trustProxy);
    // A route whose keys read nothing of the request (no `{ param }`, no `{ json }`) is spared
    // the context; the body is parsed once at most, for the keys and the costs alike.
    const context = route.keysReadRequest
      ? { params: call.params, json: () => this.#input(call).json() }
      : undefined;
    const keys = route.limits.map((limit) => limit.keyOf(req, ip, context));
    call.client = clientKey(keys, ip);
    const costs = this.#costs(call);
    if (costs === undefined) return undefined;
    const started = this.metrics === undefined ? 0 : performance.now();
    const admission = await admit(route, keys, costs, now);
    if (this.metrics !== undefined) {
      const elapsed = performance.now() - started;
      this.metrics.decided(route, keys, costs, call.client, admission, elapsed, now);
    }
    if (admission.failures.length > 0) {
      this.#storeFailed(call, admission.failures);
      if (admission.failedClosed) {
        this.#failClosed(call, admission);
        return undefined;
      }
      if (admission.failures.some((failure) => failure.operation === 'take')) {
        this.stats.count(route.label, call.client, 'degraded');
      }
    }
    if (!admission.allowed) {
      this.stats.count(route.label, call.client, 'rejected');
      this.#reject(call, admission, costs, now);
      return undefined;
    }
    this.stats.count(route.label, call.client, 'admitted');
    if (route.concurrency) {
      for (const [i, acquisition] of admission.acquisitions.entries()) {
        if (route.limits[i]?.concurrency)
          call.exchange.onClose(() => this.#release(call, i, acquisition));
      }
    }
    call.limitHeaders = rateLimitFields(route.headers, admission.reports, false, now);
    return admission;
  }

  /**
   * What the request spends in each of its route's limits. A cost the request carries that is not
   * an integer from 1 is a 400 (`invalid_cost`); one above what its limit can ever hold is a 413
   * (`cost_exceeds_limit`): not a 429, which a client would retry for ever. Either way nothing is
   * spent, and `undefined` says the request was answered.
   */
  #costs(call: Call): number[] | undefined {
    const { route } = call;
    const costs: number[] = [];
    for (const limit of route.limits) {
      if (!limit.cost.fromRequest) {
        costs.push(limit.cost.fallback);
        continue;
      }
      const read = limit.cost.read(this.#input(call));
      if (!read.ok) {
        sendJson(call.res, this.clock, 400, [], {
          error: 'invalid_cost',
          message: `The request's cost for policy "${limit.name}" (${read.source}) must be an integer from 1; got ${read.value}.`,
          policy: limit.name,
          source: read.source,
        });
        return undefined;
      }
      const capacity = limit.limiter.limit;
      if (read.cost > capacity) {
        sendJson(call.res, this.clock, 413, [], {
          error: 'cost_exceeds_limit',
          message: `The request costs ${read.cost} ${limit.unit} but policy "${limit.name}" (${limit.description}) never holds more than ${capacity}: it can never be admitted; make it smaller.`,
          policy: limit.name,
          unit: limit.unit,
          limit: capacity,
          cost: read.cost,
        });
        return undefined;
      }
      costs.push(read.cost);
    }
    return costs;
  }

  /** What keys and costs read of the request: its header fields and its body, parsed lazily. */
  #input(call: Call): CostInput {
    call.input ??= costInput((name) => header(call.req, name), call.body, call.json);
    return call.input;
  }

  /**
   * The 503 of a route failing closed. Not 429: the client exceeded nothing, and a 429 (with its
   * `remaining: 0`) would teach it a limit that does not exist. `Retry-After: 1` asks for a short
   * wait, as long as a store outage is expected to last at least.
   */
  #failClosed(call: Call, admission: Admission): void {
    const { route } = call;
    this.stats.count(route.label, call.client, 'failedClosed');
    const failed = route.limits[admission.failures[0]?.limit ?? 0];
    sendJson(call.res, this.clock, 503, ['Retry-After', '1'], {
      error: 'limiter_unavailable',
      message: `The rate limiter cannot decide: the store of policy "${failed?.name}" is unavailable. Retry shortly.`,
      policy: failed?.name,
    });
  }

  /** Gives back an admitted take of limit `i` (a concurrency slot, a leaky-bucket turn). */
  #release(call: Call, i: number, acquisition: Acquisition): void {
    acquisition.refund().catch((error: unknown) => {
      this.#storeFailed(call, [{ limit: i, operation: 'refund', error }]);
    });
  }

  /** Counts failed store calls and tells the `store-error` listeners. */
  #storeFailed(call: Call, failures: readonly StoreFailure[]): void {
    const { route } = call;
    for (const failure of failures) {
      this.stats.count(route.label, call.client, 'storeErrors');
      if (!this.#events.has('store-error')) continue;
      const event: StoreErrorEvent = {
        route: route.label,
        policy: route.limits[failure.limit]?.name ?? '',
        operation: failure.operation,
        failMode: route.failMode,
        error: failure.error,
      };
      this.#events.emit('store-error', event);
    }
  }

  /** The 429: header fields, `Retry-After`, and a body naming the policy but not the key. */
  #reject(call: Call, admission: Admission, costs: readonly number[], now: number): void {
    const { route } = call;
    const top = mostRestrictive(admission.reports, true);
    const index = admission.reports.indexOf(top);
    const limit = route.limits[index];
    const headers = rateLimitFields(route.headers, admission.reports, true, now);
    const retryAfter = retryAfterField(route.retryAfter, top.retryAfterMs, now);
    if (retryAfter !== undefined) headers.push('Retry-After', retryAfter);
    if (route.headers === 'discord') {
      sendJson(call.res, this.clock, route.rejectStatus, headers, discordBody(top));
      return;
    }
    const seconds = Math.ceil(top.retryAfterMs / 1000);
    sendJson(call.res, this.clock, route.rejectStatus, headers, {
      error: 'rate_limited',
      message: `Too many requests: policy "${top.name}" (${limit?.description}, per ${limit?.scope}) has no room for this request; retry in ${seconds} s.`,
      policy: top.name,
      scope: limit?.scope,
      limit: top.limit,
      remaining: top.remaining,
      unit: top.unit,
      cost: costs[index],
      retryAfterMs: top.retryAfterMs,
    });
  }

  /** Waits for the request's turn in its leaky buckets; gives the turn back if the client leaves. */
  async #waitTurn(call: Call, admission: Admission): Promise<boolean> {
    const delayMs = Math.max(0, ...admission.results.map((r) => r.delayMs ?? 0));
    if (await call.exchange.wait(this.clock, delayMs)) return true;
    for (const [i, acquisition] of admission.acquisitions.entries()) {
      if (call.route.limits[i]?.leaky) this.#release(call, i, acquisition);
    }
    return false;
  }

  /** The `unavailable` fault and the `reset` fault before the handler; true when one fired. */
  #failBeforeHandler(call: Call): boolean {
    const { route } = call;
    const sinceStart = this.clock.now() - this.#startedAt;
    const unavailable = route.faults.unavailable;
    if (unavailable?.trigger.fires(sinceStart, this.clock)) {
      this.stats.count(route.label, call.client, 'unavailable');
      const headers = [...call.limitHeaders];
      if (unavailable.retryAfterSeconds !== undefined) {
        headers.push('Retry-After', String(unavailable.retryAfterSeconds));
      }
      sendJson(call.res, this.clock, 503, headers, { error: 'unavailable', route: route.label });
      return true;
    }
    if (this.#serverError(call, 'before-handler', sinceStart)) return true;
    const reset = route.faults.reset;
    if (reset?.when === 'before-handler' && reset.trigger.fires(sinceStart, this.clock)) {
      this.stats.count(route.label, call.client, 'resets');
      resetConnection(call.req);
      return true;
    }
    return false;
  }

  /**
   * The `serverError` fault at `when`: a plain 5xx (the rate-limit fields of the admitted request,
   * no `Retry-After`). True when it fired.
   */
  #serverError(call: Call, when: 'before-handler' | 'after-handler', sinceStart: number): boolean {
    const fault = call.route.faults.serverError;
    if (fault?.when !== when || !fault.trigger.fires(sinceStart, this.clock)) return false;
    this.stats.count(call.route.label, call.client, 'serverErrors');
    sendJson(call.res, this.clock, fault.status, call.limitHeaders, {
      error: 'server_error',
      route: call.route.label,
    });
    return true;
  }

  /**
   * The `Idempotency-Key` check: replays a stored response, or refuses a key in use or reused.
   * Returns the claimed store key (`undefined` without an idempotency key), or `false` when it
   * answered.
   */
  #claim(call: Call): string | undefined | false {
    const { route } = call;
    const key = call.idempotencyKey;
    if (key === undefined) return undefined;
    const claimKey = `${route.label}\n${boundedValue(key)}`;
    const print = fingerprint(call.method, call.url, call.body);
    const claim = this.#idempotency.begin(claimKey, print, this.clock.now());
    if (claim.kind === 'new') return claimKey;
    if (claim.kind === 'replay') {
      this.stats.count(route.label, call.client, 'replays');
      const { execution, json } = claim.response;
      const { status, headers, body } = respond(route, call, execution, json);
      const replayed = [...headers, ...call.limitHeaders, 'Idempotent-Replayed', 'true'];
      send(call.res, call.exchange, this.clock, status, replayed, body);
      return false;
    }
    this.stats.count(route.label, call.client, 'idempotencyConflicts');
    const inUse = claim.kind === 'in-progress';
    sendJson(call.res, this.clock, inUse ? 409 : 422, call.limitHeaders, {
      error: inUse ? 'idempotency_key_in_use' : 'idempotency_key_reused',
      message: inUse
        ? 'A request with this Idempotency-Key is still being processed.'
        : 'This Idempotency-Key was used with a different request.',
    });
    return false;
  }

  /**
   * The handler: `latencyMs` of work (finished even if the client leaves; only the server closing
   * stops it), the side effect, the `reset` fault after it, and the response.
   */
  async #runHandler(call: Call, claimKey: string | undefined): Promise<void> {
    const { route } = call;
    const latency = latencyFor(route.faults.latency, this.clock);
    if (latency > 0) {
      try {
        await this.clock.sleep(latency, this.#closing.signal);
      } catch {
        if (claimKey !== undefined) this.#idempotency.abandon(claimKey);
        return;
      }
    }
    const execution = this.stats.count(route.label, call.client, 'sideEffects');
    const response = respond(route, call, execution, call.json);
    if (claimKey !== undefined) {
      this.#idempotency.complete(claimKey, { execution, json: call.json }, this.clock.now());
    }
    const sinceStart = this.clock.now() - this.#startedAt;
    if (this.#serverError(call, 'after-handler', sinceStart)) return;
    const reset = route.faults.reset;
    if (reset?.when === 'after-handler' && reset.trigger.fires(sinceStart, this.clock)) {
      this.stats.count(route.label, call.client, 'resets');
      resetConnection(call.req);
      return;
    }
    const headers = [...response.headers, ...call.limitHeaders];
    const { slowBody } = route.faults;
    await send(
      call.res,
      call.exchange,
      this.clock,
      response.status,
      headers,
      response.body,
      slowBody,
    );
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function urlHost(address: string): string {
  if (address === '0.0.0.0') return '127.0.0.1';
  if (address === '::') return '[::1]';
  return address.includes(':') ? `[${address}]` : address;
}

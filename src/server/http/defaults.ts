/**
 * Every default of the mock server's configuration, in one place: the value a field takes when it
 * is left out (see the doc comments in `config.ts` for what each means). Read by the code that
 * applies them (`server.ts`, `compile.ts`, `respond.ts`, `faults.ts`) and by the test that holds
 * docs/options.md to them. Times are in milliseconds, sizes in bytes.
 *
 * @module
 */

/** Defaults of `MockServerConfig` fields (and of its `idempotency` settings). */
export const SERVER_DEFAULTS = Object.freeze({
  /** TCP port; 0 picks a free one. */
  port: 0,
  host: '127.0.0.1',
  trustProxy: false,
  /** Connections open at once. */
  maxConnections: 1024,
  /** Requests in flight on one connection. */
  maxPipelinedRequests: 16,
  /** Request-body bytes held at once, over every request (64 MiB). */
  maxBufferedBodyBytes: 64 * 1024 * 1024,
  idempotency: Object.freeze({
    header: 'Idempotency-Key',
    /** How long a stored response is replayed, ms (24 hours). */
    ttlMs: 86_400_000,
    /** Keys kept. */
    maxEntries: 10_000,
    /** Bytes the store holds (4 MiB). */
    maxBytes: 4 * 1024 * 1024,
  }),
  /** CORS settings when `cors` is on (`cors` itself is off by default). */
  cors: Object.freeze({
    origin: '*',
    /** Every field the server sends is exposed. */
    exposeHeaders: true,
    /** Seconds a browser may cache a preflight's answer. */
    maxAgeSeconds: 600,
  }),
});

/** Defaults of a route's fields (`RouteConfig`). */
export const ROUTE_DEFAULTS = Object.freeze({
  /** Units each request spends in every limit. */
  cost: 1,
  headers: 'ietf' as const,
  retryAfter: 'seconds' as const,
  /** The status of a refused request. */
  rejectStatus: 429 as const,
  response: Object.freeze({ status: 200 }),
  idempotency: true,
  failMode: 'closed' as const,
  /** Share of each limit enforced alone while the store fails, with `failMode: 'open'`. */
  failOpenShare: 0.25,
});

/** Defaults of a route's `faults` (`FaultsConfig`, `FaultTrigger`). */
export const FAULT_DEFAULTS = Object.freeze({
  /** Chance of firing on a request that meets the other conditions. */
  probability: 1,
  /** Milliseconds after the server's start before a fault fires. */
  afterMs: 0,
  slowBody: Object.freeze({ chunkBytes: 1 }),
});

/** Defaults of a limit's fields (`LimitConfig`) besides its algorithm's parameters. */
export const LIMIT_DEFAULTS = Object.freeze({
  key: 'ip' as const,
  /** Whether the `ietf` family writes the partition key `pk` of a request's budget. */
  partitionKey: false,
});

/**
 * The mock server's configuration: its types (what users write), its zod schema (what is checked),
 * and the checks zod cannot express. The same shape is the CLI's JSON file.
 *
 * @module
 */
import { validateHeaderValue } from 'node:http';
import { z } from 'zod';
import type { Clock } from '../../shared/clock.js';
import { InvalidOptionError } from '../../shared/errors.js';
import type { Same } from '../../shared/option-checks.js';
import { concurrencyLimitShape } from '../algorithms/concurrency-limit.js';
import { fixedWindowShape } from '../algorithms/fixed-window.js';
import { gcraShape } from '../algorithms/gcra.js';
import { leakyBucketShape } from '../algorithms/leaky-bucket.js';
import { slidingLogShape } from '../algorithms/sliding-log.js';
import { slidingWindowCounterShape } from '../algorithms/sliding-window-counter.js';
import { tokenBucketShape } from '../algorithms/token-bucket.js';
import {
  clockSchema,
  nonNegativeInteger,
  parseOptions,
  positiveInteger,
  probability,
  storeSchema,
} from '../options.js';
import type { RateLimitStore } from '../store.js';
import { ROUTE_DEFAULTS } from './defaults.js';

/**
 * Which rate-limit header fields a route sends. `github` and `discord` name the budget a route
 * spends (GitHub's `x-ratelimit-resource`, Discord's `X-RateLimit-Bucket`): see
 * docs/mock-server.md, "Many budgets per host".
 */
export type HeaderFamily =
  | 'ietf'
  | 'draft-7'
  | 'draft-6'
  | 'x-ratelimit'
  | 'openai'
  | 'github'
  | 'discord'
  | 'none';

/** How `Retry-After` is written on a 429: delay-seconds, an HTTP-date, or not at all. */
export type RetryAfterFormat = 'seconds' | 'http-date' | 'none';

/**
 * One part of a rate-limit key: the client's IP address, one bucket for everybody, the value of
 * a request header (an API key), of a path parameter of the route (`{ param: 'channel' }` on
 * `/channels/:channel/messages`: one budget per channel, as Discord keys its buckets), or of a
 * field of the JSON body (`{ json: 'model' }`: one budget per LLM model, as OpenAI keys its
 * limits; a name or a dotted path as {@link CostFrom.json} takes). Requests without the header,
 * the parameter or the field (a body that is not JSON, a field that is neither a string nor a
 * number) share one bucket. Every value longer than 128 characters is keyed by its SHA-256.
 */
export type KeyPart = 'ip' | 'global' | { header: string } | { param: string } | { json: string };

/** A key: one part, or several (a composite key, e.g. IP and API key together). */
export type KeyConfig = KeyPart | KeyPart[];

/**
 * Where a limit reads the cost of each request: a request header whose value is the cost in decimal
 * digits (`x-token-estimate: 1200`), a number in the JSON body (`max_tokens`, or a dotted path such
 * as `usage.total_tokens` or `messages.0.tokens`), or both (the header first). A request carrying
 * neither pays `default`.
 *
 * What a request may send is bounded: a header value of at most 15 digits; a JSON path of at most
 * 8 segments of 1 to 64 characters, read from a body the server reads anyway (at most 1 MiB). A
 * value that is present but not an integer from 1 (`0`, `-5`, `1.5`, `"12"`, `null`, `12abc`) is
 * refused with 400 `invalid_cost`; a cost above what the limit can ever hold (its `limit`,
 * `capacity` or `burst + 1`) with 413 `cost_exceeds_limit`, never with a 429 a client would retry.
 * A body that is not JSON (by its `Content-Type`) or does not parse has no field: the request pays
 * `default`.
 */
export interface CostFrom {
  /** A request header carrying the cost, e.g. `'x-token-estimate'`. */
  header?: string;
  /** A field of the JSON body carrying the cost: a name or a dotted path, e.g. `'max_tokens'`. */
  json?: string;
  /**
   * The cost of a request that carries neither.
   * @default the route's `cost` (1)
   */
  default?: number;
}

/** The most segments a {@link CostFrom.json} path has (`a.b.c` has 3). */
export const MAX_COST_PATH_SEGMENTS = 8;

/** What every limit accepts besides its algorithm's parameters. */
export interface LimitCommon {
  /**
   * Who shares a budget.
   * @default 'ip'
   */
  key?: KeyConfig;
  /**
   * The policy's name in headers, stats and error bodies. Unique among the limits of a route.
   * @default for a route's own limit, the route's label and the algorithm (`GET /search
   * fixed-window`), so that two routes' limits are two policies to a client; for a server-wide
   * limit (shared by every route), the algorithm's name. A number is added when one route has
   * two of one algorithm (`GET /search fixed-window-2`).
   */
  name?: string;
  /**
   * Where this limit keeps its state.
   * @default the server's `store`
   */
  store?: RateLimitStore;
  /**
   * What this limit counts, for the header fields: `'requests'`, `'tokens'`, or another unit
   * (lower-case letters, digits and `-`, at most 32). The IETF family writes a unit other than
   * requests as `qu="tokens"`; the `openai` family names its fields after it
   * (`x-ratelimit-remaining-tokens`). Not for a concurrency limit, which counts requests in flight.
   * @default 'requests'
   */
  unit?: string;
  /**
   * Units each request spends in this limit: a number, or read from the request
   * ({@link CostFrom}: `{ json: 'max_tokens', header: 'x-token-estimate' }`).
   * @default the route's `cost`
   */
  cost?: number | CostFrom;
  /**
   * The budget's name in the fields that name one: GitHub's `x-ratelimit-resource` (`core`,
   * `search`) on a route with `headers: 'github'`, Discord's `X-RateLimit-Bucket` with
   * `headers: 'discord'`. 1 to 64 printable ASCII characters, no spaces.
   * @default `github`: the policy's name; `discord`: an opaque hash of it (32 hexadecimal digits,
   *   the same for every key of the limit, as Discord's bucket is the same for every channel)
   */
  resource?: string;
  /**
   * With the `ietf` family, write the draft's partition key (`pk`, an RFC 9651 byte sequence) on
   * this policy's items: the first 12 bytes of a SHA-256 of the policy's name and the request's key,
   * so that each budget of the limit (each channel, model or API key it is keyed by) has its own
   * `pk` and the key itself is never sent.
   * @default false
   */
  partitionKey?: boolean;
}

/** One limit: an algorithm with its parameters (as its class takes them), a key and a name. */
export type LimitConfig = LimitCommon &
  (
    | { algorithm: 'fixed-window'; limit: number; windowMs: number }
    | { algorithm: 'sliding-log'; limit: number; windowMs: number }
    | { algorithm: 'sliding-window-counter'; limit: number; windowMs: number }
    | { algorithm: 'token-bucket'; capacity: number; refillPerSecond: number }
    | { algorithm: 'gcra'; rate: number; burst: number }
    | { algorithm: 'leaky-bucket'; rate: number; capacity: number }
    | { algorithm: 'concurrency'; limit: number; retryAfterMs?: number }
  );

/**
 * When a fault fires. All conditions must hold; with none given, it fires on every request.
 * Times count from the server's start, on its clock.
 */
export interface FaultTrigger {
  /**
   * Chance of firing on each request that meets the other conditions, from 0 to 1.
   * @default 1
   */
  probability?: number;
  /** Fire at most this many times in the server's life (`1`: only the first request). */
  times?: number;
  /**
   * Start firing this many milliseconds after the server started.
   * @default 0
   */
  afterMs?: number;
  /** Stop firing this many milliseconds after `afterMs`. Default: never stop. */
  forMs?: number;
}

/** Misbehaviour a route can be made to show, for testing clients. */
export interface FaultsConfig {
  /**
   * Milliseconds the handler works before its side effect runs: a number, or a uniform range. A
   * request repeating the `Idempotency-Key` meanwhile gets 409. The work completes even if the
   * client goes away.
   */
  latencyMs?: number | { min: number; max: number };
  /**
   * Answer 503 Service Unavailable (before the side effect runs), with
   * `Retry-After: retryAfterSeconds` when that is given.
   */
  unavailable?: FaultTrigger & { retryAfterSeconds?: number };
  /**
   * Reset the connection with no response: `before-handler` (nothing ran) or `after-handler` (the
   * side effect ran and its response is stored for idempotent replay, but never sent).
   * Replays of a stored response are never reset.
   */
  reset?: FaultTrigger & { when: 'before-handler' | 'after-handler' };
  /**
   * Answer a plain 5xx (`status`, no `Retry-After`): `before-handler` (nothing ran), or
   * `after-handler` (the side effect ran and its response is stored for idempotent replay, but the
   * client gets the error, as from a server that failed while answering). Replays of a stored
   * response never get it.
   */
  serverError?: FaultTrigger & {
    status: 500 | 502 | 503 | 504;
    when: 'before-handler' | 'after-handler';
  };
  /** Send the response body `chunkBytes` at a time, `intervalMs` apart. */
  slowBody?: { chunkBytes?: number; intervalMs: number };
}

/** What a route answers when everything goes well. */
export interface ResponseConfig {
  /**
   * The status code.
   * @default 200
   */
  status?: number;
  /**
   * A JSON body. Default: an echo of the request, with the number of the side effect
   * (`{ ok, route, method, path, params, query, execution, body }`).
   */
  body?: unknown;
  /**
   * Extra response header fields. Values must be valid header values (no CR, LF or other control
   * characters, latin1 only) and names may not be `Content-Length`, `Transfer-Encoding`,
   * `Connection` or `Date`, which the server writes: `createMockServer` refuses them.
   */
  headers?: Record<string, string>;
}

/** One route: which requests it matches, what they cost, how they are limited and answered. */
export interface RouteConfig {
  /**
   * HTTP method, any case; a `GET` route also answers `HEAD`.
   * @default any method
   */
  method?: string;
  /** `'/exact'`, `'/items/:id'` (a parameter per segment), `'/files/*'` (a prefix) or `'*'`. */
  path: string;
  /**
   * Units each request spends in every limit that has no `cost` of its own (weighted requests:
   * `/search` 3, `/report` 50).
   * @default 1
   */
  cost?: number;
  /**
   * The route's limits, checked after the server's `limits`. A request is admitted only if all
   * admit it; a rejected request spends nothing in any of them.
   * @default []
   */
  limits?: LimitConfig[];
  /**
   * Rate-limit header fields on the route's responses.
   * @default 'ietf'
   */
  headers?: HeaderFamily;
  /**
   * `Retry-After` on 429 responses.
   * @default 'seconds'
   */
  retryAfter?: RetryAfterFormat;
  /**
   * The status of a request a limit refuses: 429, or 403 as GitHub answers a spent primary limit
   * (with `x-ratelimit-remaining: 0`). Either way with the header fields, `Retry-After` and a JSON
   * body.
   * @default 429
   */
  rejectStatus?: 429 | 403;
  /** The answer. */
  response?: ResponseConfig;
  /** Injected misbehaviour. */
  faults?: FaultsConfig;
  /**
   * Honour `Idempotency-Key` on this route.
   * @default true
   */
  idempotency?: boolean;
  /**
   * The route's label in stats.
   * @default `${METHOD} ${path}` (`*` for any method)
   */
  name?: string;
  /**
   * What the route does when a limit's store fails (a Redis store that times out or is down):
   * - `'closed'`: answers 503 with `Retry-After: 1`. Not 429: the client did not exceed anything,
   *   and a 429 would teach it a limit that does not exist.
   * - `'open'`: decides that limit on a local copy of it, in this server's memory, scaled to
   *   `failOpenShare`; never on no limit at all.
   *
   * Either way `stats()` counts it (`degraded`, `failedClosed`) and `on('store-error')` hears it.
   * @default 'closed'
   */
  failMode?: FailMode;
  /**
   * With `failMode: 'open'`, the share of each limit a server enforces alone while its store
   * fails, from 0 (exclusive) to 1: about one over the number of servers sharing the store.
   * Counts round down, to at least the route's cost (`limit: 10` at `0.25` is 2; rates scale
   * exactly).
   * @default 0.25
   */
  failOpenShare?: number;
}

/** What a route does when a limit's store fails: see {@link RouteConfig.failMode}. */
export type FailMode = 'open' | 'closed';

/** Settings of the `Idempotency-Key` store. */
export interface IdempotencyConfig {
  /**
   * The request header carrying the key.
   * @default 'Idempotency-Key'
   */
  header?: string;
  /**
   * How long a stored response is replayed, in milliseconds.
   * @default 86_400_000 (24 hours)
   */
  ttlMs?: number;
  /**
   * The most keys kept; the oldest go first.
   * @default 10_000
   */
  maxEntries?: number;
  /**
   * The most bytes the store holds, the oldest keys going first. Each key counts its own length,
   * its request's fingerprint (43) and 256 for the rest. Responses are not stored: a replay
   * rebuilds the response from the replayed request (the fingerprint proves it is the same) and
   * the number of the side effect, so a 1 MiB body costs a replay nothing. Keys longer than 128
   * characters are kept as their SHA-256.
   * @default 4_194_304 (4 MiB)
   */
  maxBytes?: number;
}

/**
 * CORS, for pages on other origins (a browser client): see {@link MockServerConfig.cors}.
 */
export interface CorsConfig {
  /**
   * `Access-Control-Allow-Origin`: `'*'` (any page, without credentials) or one origin
   * (`'http://localhost:5173'`).
   * @default '*'
   */
  origin?: string;
  /**
   * Which response fields a page may read (`Access-Control-Expose-Headers`): `true` for every one
   * the server sends (the RateLimit families, `Retry-After`, `Idempotent-Replayed`, `Date` and the
   * routes' own `response.headers`), `false` for none (the page then sees only status codes and
   * the CORS-safelisted fields), or exactly the names listed (`['Retry-After']`).
   * @default true
   */
  exposeHeaders?: boolean | string[];
  /**
   * Seconds a browser may cache a preflight's answer (`Access-Control-Max-Age`).
   * @default 600
   */
  maxAgeSeconds?: number;
}

/** The configuration of {@link createMockServer}, and of the CLI's JSON file. */
export interface MockServerConfig {
  /**
   * TCP port; 0 picks a free one.
   * @default 0
   */
  port?: number;
  /**
   * Interface to listen on.
   * @default '127.0.0.1'
   */
  host?: string;
  /**
   * Whether to believe `X-Forwarded-For` for the client's IP: `false` (the socket's peer),
   * `true` (its first address) or the number of proxies in front of the server (the address that
   * many hops before the peer). Never enable it unless a proxy you control sets the header.
   * @default false
   */
  trustProxy?: boolean | number;
  /** Limits applied to every route before the route's own (an edge limit per IP, say). */
  limits?: LimitConfig[];
  /** The routes, matched in order; the first that matches answers. */
  routes: RouteConfig[];
  /**
   * The most connections open at once. Past it, a new connection is closed as soon as it opens.
   * @default 1024
   */
  maxConnections?: number;
  /**
   * The most requests in flight on one connection: a client pipelining requests (sending the next
   * before the previous answers came back) gets 503 with `Connection: close` for the one past it.
   * @default 16
   */
  maxPipelinedRequests?: number;
  /**
   * The most request-body bytes held at once, over every request (each body is also at most
   * 1 MiB, else 413). A request whose body does not fit gets 503 with `Retry-After: 1` and
   * `Connection: close`.
   * @default 67_108_864 (64 MiB)
   */
  maxBufferedBodyBytes?: number;
  /** The `Idempotency-Key` store. */
  idempotency?: IdempotencyConfig;
  /**
   * Answer CORS: every response carries `Access-Control-Allow-Origin` and lists the fields a page
   * may read in `Access-Control-Expose-Headers`; a preflight (`OPTIONS` with `Origin` and
   * `Access-Control-Request-Method`) gets 204 at once, allowing the method asked, the
   * `Idempotency-Key` header and the headers asked (at most 64), counted in no limit and no route.
   * `true` is `{}`: any origin, every field exposed.
   * @default false
   */
  cors?: boolean | CorsConfig;
  /**
   * Keep metrics (decisions by route and policy, decision latency, store health, Retry-After sent,
   * keys nearly spent, the heaviest keys) and answer `GET /__metrics` with them as Prometheus text,
   * before any route. See docs/observability.md.
   * @default false
   */
  metrics?: boolean;
  /**
   * Serve a live dashboard at `GET /__dashboard` (its JSON at `/__dashboard/data`), before any
   * route: per route, admitted and rejected over the last 5 minutes, the limits, top keys, the
   * Retry-After sent, store health. Turns `metrics` on too. See docs/mock-server.md.
   * @default false
   */
  dashboard?: boolean;
  /**
   * Where limits keep their state unless a limit names its own (code only, not in JSON).
   * @default a new MemoryStore
   */
  store?: RateLimitStore;
  /**
   * Time and chance for the limits, the faults and the `Date` header (code only, not in JSON).
   * @default systemClock
   */
  clock?: Clock;
}

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const headerName = z
  .string({ error: 'must be a header name' })
  .regex(HEADER_NAME, { error: 'must be a header name' });

/** Fields the server writes itself: a second copy would break the response's framing. */
const SET_BY_SERVER = new Set(['content-length', 'transfer-encoding', 'connection', 'date']);

/** Whether Node would refuse `value` in a header field (CR, LF, other controls, past latin1). */
function isHeaderValue(value: string): boolean {
  try {
    validateHeaderValue('x', value);
    return true;
  } catch {
    return false;
  }
}

/**
 * A route's response header fields: names to values. Checked entry by entry from the object's own
 * keys (zod's record would drop a `__proto__` key) into a null-prototype object. A value Node would
 * refuse is refused here, at start-up, rather than with a 500 on every request.
 */
const responseHeaders = z
  .custom<Record<string, string>>(
    (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
    { error: 'must be an object of header names to values' },
  )
  .superRefine((headers, ctx) => {
    for (const [name, value] of Object.entries(headers)) {
      if (!HEADER_NAME.test(name)) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'is not a header name',
          input: name,
        });
      } else if (typeof value !== 'string') {
        ctx.addIssue({ code: 'custom', path: [name], message: 'must be a string', input: value });
      } else if (SET_BY_SERVER.has(name.toLowerCase())) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'is set by the server (Content-Length, Transfer-Encoding, Connection, Date)',
          input: value,
        });
      } else if (!isHeaderValue(value)) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message:
            'must be a header value (no CR, LF or other control characters; latin1 characters only)',
          input: value,
        });
      }
    }
  })
  .transform((headers): Record<string, string> => Object.assign(Object.create(null), headers));

const COST_PATH = new RegExp(`^[^.\\s]{1,64}(\\.[^.\\s]{1,64}){0,${MAX_COST_PATH_SEGMENTS - 1}}$`);
const jsonPath = z.string({ error: 'must be a string' }).regex(COST_PATH, {
  error: `must be a field name or a dotted path of at most ${MAX_COST_PATH_SEGMENTS} segments of 1 to 64 characters, without spaces`,
});

const keyPart = z.union(
  [
    z.literal('ip'),
    z.literal('global'),
    z.strictObject({ header: headerName }),
    z.strictObject({
      param: z
        .string({ error: 'must be a path parameter name' })
        .regex(/^[^/\s]{1,64}$/, { error: 'must be a path parameter name' }),
    }),
    z.strictObject({ json: jsonPath }),
  ],
  {
    error: "must be 'ip', 'global', { header: name }, { param: name } or { json: path }",
  },
);
const keySchema = z.union([keyPart, z.array(keyPart).min(1, { error: 'must not be empty' })], {
  error: "must be 'ip', 'global', { header }, { param }, { json } or an array of those",
});
const costFromSchema = z
  .strictObject({
    header: headerName.optional(),
    json: jsonPath.optional(),
    default: positiveInteger.optional(),
  })
  .refine((from) => from.header !== undefined || from.json !== undefined, {
    error: 'must name a header, a json field, or both',
  });

const limitCommon = {
  key: keySchema.optional(),
  unit: z
    .string({ error: 'must be a string' })
    .regex(/^[a-z][a-z0-9-]{0,31}$/, {
      error: "must be lower-case letters, digits and '-', starting with a letter, at most 32",
    })
    .optional(),
  cost: z
    .union([positiveInteger, costFromSchema], {
      error: 'must be a positive integer or { header?, json?, default? }',
    })
    .optional(),
  name: z
    .string({ error: 'must be a string' })
    .regex(/^[\x20-\x7e]+$/, { error: 'must be printable ASCII' })
    .optional(),
  store: storeSchema.optional(),
  resource: z
    .string({ error: 'must be a string' })
    .regex(/^[\x21-\x7e]{1,64}$/, {
      error: 'must be 1 to 64 printable ASCII characters without spaces',
    })
    .optional(),
  partitionKey: z.boolean({ error: 'must be true or false' }).optional(),
};

/**
 * Each algorithm's own parameters, by name, as its constructor takes them: read from the shapes
 * the schema checks, so that the command line's help and its checks cannot drift from them.
 */
export const ALGORITHM_PARAMETERS: Readonly<Record<LimitConfig['algorithm'], readonly string[]>> =
  Object.freeze({
    'fixed-window': Object.keys(fixedWindowShape),
    'sliding-log': Object.keys(slidingLogShape),
    'sliding-window-counter': Object.keys(slidingWindowCounterShape),
    'token-bucket': Object.keys(tokenBucketShape),
    gcra: Object.keys(gcraShape),
    'leaky-bucket': Object.keys(leakyBucketShape),
    concurrency: Object.keys(concurrencyLimitShape),
  });

/** What every limit takes besides its algorithm's parameters (`store` is for code only). */
export const LIMIT_COMMON_PARAMETERS: readonly string[] = Object.keys(limitCommon);

const limitSchema = z.discriminatedUnion('algorithm', [
  z.strictObject({ algorithm: z.literal('fixed-window'), ...fixedWindowShape, ...limitCommon }),
  z.strictObject({ algorithm: z.literal('sliding-log'), ...slidingLogShape, ...limitCommon }),
  z.strictObject({
    algorithm: z.literal('sliding-window-counter'),
    ...slidingWindowCounterShape,
    ...limitCommon,
  }),
  z.strictObject({ algorithm: z.literal('token-bucket'), ...tokenBucketShape, ...limitCommon }),
  z.strictObject({ algorithm: z.literal('gcra'), ...gcraShape, ...limitCommon }),
  z.strictObject({ algorithm: z.literal('leaky-bucket'), ...leakyBucketShape, ...limitCommon }),
  z.strictObject({ algorithm: z.literal('concurrency'), ...concurrencyLimitShape, ...limitCommon }),
]);

const trigger = {
  probability: probability.optional(),
  times: positiveInteger.optional(),
  afterMs: nonNegativeInteger.optional(),
  forMs: positiveInteger.optional(),
};

const faultsSchema = z.strictObject({
  latencyMs: z
    .union([
      nonNegativeInteger,
      z.strictObject({ min: nonNegativeInteger, max: nonNegativeInteger }),
    ])
    .optional(),
  unavailable: z
    .strictObject({ ...trigger, retryAfterSeconds: nonNegativeInteger.optional() })
    .optional(),
  reset: z
    .strictObject({
      ...trigger,
      when: z.enum(['before-handler', 'after-handler'], {
        error: "must be 'before-handler' or 'after-handler'",
      }),
    })
    .optional(),
  serverError: z
    .strictObject({
      ...trigger,
      status: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)], {
        error: 'must be 500, 502, 503 or 504',
      }),
      when: z.enum(['before-handler', 'after-handler'], {
        error: "must be 'before-handler' or 'after-handler'",
      }),
    })
    .optional(),
  slowBody: z
    .strictObject({ chunkBytes: positiveInteger.optional(), intervalMs: nonNegativeInteger })
    .optional(),
});

const routeSchema = z.strictObject({
  method: z
    .string({ error: 'must be a string' })
    .regex(HEADER_NAME, { error: 'must be an HTTP method' })
    .optional(),
  path: z
    .string({ error: 'must be a string' })
    .regex(/^(\*|\/\S*)$/, { error: "must start with '/' (or be '*')" }),
  cost: positiveInteger.optional(),
  limits: z.array(limitSchema, { error: 'must be an array' }).optional(),
  headers: z
    .enum(['ietf', 'draft-7', 'draft-6', 'x-ratelimit', 'openai', 'github', 'discord', 'none'], {
      error:
        "must be 'ietf', 'draft-7', 'draft-6', 'x-ratelimit', 'openai', 'github', 'discord' or 'none'",
    })
    .optional(),
  retryAfter: z
    .enum(['seconds', 'http-date', 'none'], { error: "must be 'seconds', 'http-date' or 'none'" })
    .optional(),
  rejectStatus: z
    .union([z.literal(429), z.literal(403)], { error: 'must be 429 or 403' })
    .optional(),
  response: z
    .strictObject({
      status: z
        .number({ error: 'must be a status code from 200 to 599' })
        .int({ error: 'must be a status code from 200 to 599' })
        .min(200, { error: 'must be a status code from 200 to 599' })
        .max(599, { error: 'must be a status code from 200 to 599' })
        .optional(),
      body: z.unknown().optional(),
      headers: responseHeaders.optional(),
    })
    .optional(),
  faults: faultsSchema.optional(),
  idempotency: z.boolean({ error: 'must be true or false' }).optional(),
  name: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).optional(),
  failMode: z.enum(['open', 'closed'], { error: "must be 'open' or 'closed'" }).optional(),
  failOpenShare: z
    .number({ error: 'must be a number above 0, up to 1' })
    .gt(0, { error: 'must be a number above 0, up to 1' })
    .max(1, { error: 'must be a number above 0, up to 1' })
    .optional(),
});

const configSchema = z.strictObject({
  port: z
    .number({ error: 'must be an integer from 0 to 65535' })
    .int({ error: 'must be an integer from 0 to 65535' })
    .min(0, { error: 'must be an integer from 0 to 65535' })
    .max(65535, { error: 'must be an integer from 0 to 65535' })
    .optional(),
  host: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).optional(),
  trustProxy: z
    .union([z.boolean(), nonNegativeInteger], {
      error: 'must be true, false or a number of proxies',
    })
    .optional(),
  limits: z.array(limitSchema, { error: 'must be an array' }).optional(),
  routes: z
    .array(routeSchema, { error: 'must be an array of routes' })
    .min(1, { error: 'must hold at least one route' }),
  maxConnections: positiveInteger.optional(),
  maxPipelinedRequests: positiveInteger.optional(),
  maxBufferedBodyBytes: positiveInteger.optional(),
  idempotency: z
    .strictObject({
      header: headerName.optional(),
      ttlMs: positiveInteger.optional(),
      maxEntries: positiveInteger.optional(),
      maxBytes: positiveInteger.optional(),
    })
    .optional(),
  metrics: z.boolean({ error: 'must be true or false' }).optional(),
  dashboard: z.boolean({ error: 'must be true or false' }).optional(),
  cors: z
    .union(
      [
        z.boolean(),
        z.strictObject({
          origin: z
            .string({ error: "must be '*' or an origin (scheme://host[:port])" })
            .regex(/^(\*|[a-z][a-z0-9+.-]*:\/\/[^\s/?#]+)$/i, {
              error: "must be '*' or an origin (scheme://host[:port])",
            })
            .optional(),
          exposeHeaders: z
            .union([z.boolean(), z.array(headerName)], {
              error: 'must be true, false or an array of header names',
            })
            .optional(),
          maxAgeSeconds: nonNegativeInteger.optional(),
        }),
      ],
      { error: 'must be true, false or { origin?, exposeHeaders?, maxAgeSeconds? }' },
    )
    .optional(),
  store: storeSchema.optional(),
  clock: clockSchema.optional(),
});

// The schemas and the documented types must describe the same thing: each pair must be assignable
// both ways and have the same keys (which catches an optional field added on one side only).
const schemasMatchTypes: [
  Same<z.infer<typeof configSchema>, MockServerConfig>,
  Same<z.infer<typeof routeSchema>, RouteConfig>,
  Same<z.infer<typeof faultsSchema>, FaultsConfig>,
  Same<NonNullable<z.infer<typeof routeSchema>['response']>, ResponseConfig>,
  Same<NonNullable<z.infer<typeof configSchema>['idempotency']>, IdempotencyConfig>,
  Same<z.infer<typeof limitSchema>, LimitConfig>,
  Same<z.infer<typeof costFromSchema>, CostFrom>,
  Same<Exclude<NonNullable<z.infer<typeof configSchema>['cors']>, boolean>, CorsConfig>,
] = [true, true, true, true, true, true, true, true];
void schemasMatchTypes;

/** The capacity of a limit: the most units a request may cost under it. */
export function limitCapacity(limit: LimitConfig): number {
  switch (limit.algorithm) {
    case 'token-bucket':
      return limit.capacity;
    case 'gcra':
      return limit.burst + 1;
    case 'leaky-bucket':
      return limit.capacity;
    default:
      return limit.limit;
  }
}

/**
 * What a request spends in `limit` on `route` when it says nothing of its cost: the limit's own
 * cost (a number, or its `default`), else the route's `cost`, else 1.
 */
export function staticCost(limit: LimitConfig, route: RouteConfig): number {
  const own = limit.cost;
  if (typeof own === 'number') return own;
  return own?.default ?? route.cost ?? ROUTE_DEFAULTS.cost;
}

/**
 * The policy names of the limits that apply to a route: the server's `limits` then the route's,
 * each its `name`, or else its algorithm's name, prefixed for a route's own limit with the route's
 * label (`GET /search fixed-window`), numbered (`token-bucket-2`) past any name taken. The server's
 * limits get the same names on every route; two routes' own limits never share a default name, so
 * clients that key what they learn by policy name keep them apart. Throws when two limits of one
 * route end up with one name.
 *
 * @param route the route's index, for the error.
 * @param label the route's label ({@link routeLabel}); omitted for the server's limits alone.
 */
export function policyNames(
  edge: readonly LimitConfig[],
  own: readonly LimitConfig[],
  route: number,
  label?: string,
): string[] {
  const owners = new Map<string, string>();
  const name = (
    list: readonly LimitConfig[],
    path: (i: number) => string,
    prefix = '',
  ): string[] => {
    list.forEach((limit, i) => {
      if (limit.name === undefined) return;
      const earlier = owners.get(limit.name);
      if (earlier !== undefined) {
        throw new InvalidOptionError(
          `${path(i)}.name`,
          `is ${JSON.stringify(limit.name)}, already the name of ${earlier} on routes[${route}]`,
        );
      }
      owners.set(limit.name, path(i));
    });
    return list.map((limit, i) => {
      if (limit.name !== undefined) return limit.name;
      const base = `${prefix}${limit.algorithm}`;
      let chosen = base;
      for (let n = 2; owners.has(chosen); n++) chosen = `${base}-${n}`;
      owners.set(chosen, path(i));
      return chosen;
    });
  };
  const edgeNames = name(edge, (i) => `limits[${i}]`);
  // Names go into header fields as structured-field strings: printable ASCII only.
  const prefix = label === undefined ? '' : `${label.replace(/[^\x20-\x7e]/g, '?')} `;
  return [...edgeNames, ...name(own, (i) => `routes[${route}].limits[${i}]`, prefix)];
}

/** A route's label in stats and in its limits' namespaces: its `name`, else `METHOD path`. */
export function routeLabel(route: RouteConfig): string {
  return route.name ?? `${route.method?.toUpperCase() ?? '*'} ${route.path}`;
}

/**
 * Validates a configuration: the schema, then what a schema cannot see (a cost no limit can ever
 * admit, two limits of a route with one name, two routes with one label, a latency range upside
 * down). Throws an {@link InvalidOptionError} naming the field.
 */
export function parseConfig(input: unknown): MockServerConfig {
  const config = parseOptions(configSchema, input);
  const edge = config.limits ?? [];
  const labels = new Map<string, number>();
  config.routes.forEach((route, r) => {
    const label = routeLabel(route);
    const earlier = labels.get(label);
    if (earlier !== undefined) {
      throw new InvalidOptionError(
        `routes[${r}]`,
        `is labelled ${JSON.stringify(label)} like routes[${earlier}]; give one a distinct name`,
      );
    }
    labels.set(label, r);
    const own = route.limits ?? [];
    for (const [i, limit] of [...edge, ...own].entries()) {
      const path = i < edge.length ? `limits[${i}]` : `routes[${r}].limits[${i - edge.length}]`;
      const cost = staticCost(limit, route);
      const capacity = limitCapacity(limit);
      if (cost > capacity) {
        const field =
          typeof limit.cost === 'number'
            ? `${path}.cost`
            : limit.cost?.default !== undefined
              ? `${path}.cost.default`
              : `routes[${r}].cost`;
        throw new InvalidOptionError(
          field,
          `is ${cost}, more than the ${capacity} units ${path} can ever hold: every request would be rejected`,
        );
      }
      if (limit.algorithm === 'concurrency' && limit.unit !== undefined) {
        throw new InvalidOptionError(
          `${path}.unit`,
          `is ${JSON.stringify(limit.unit)}, but a concurrency limit counts requests in flight ("concurrent-requests")`,
        );
      }
    }
    checkParams(route, r);
    policyNames(edge, own, r, label);
    const latency = route.faults?.latencyMs;
    if (typeof latency === 'object' && latency.min > latency.max) {
      throw new InvalidOptionError(
        `routes[${r}].faults.latencyMs`,
        `has min ${latency.min} above max ${latency.max}`,
      );
    }
  });
  return config;
}

/**
 * A route's own limit keyed by a path parameter must name one of the route's (`{ param: 'channel' }`
 * on `/channels/:channel/messages`): any other name would key every request alike, silently. A
 * server-wide limit may name one that some routes lack; there it is empty.
 */
function checkParams(route: RouteConfig, r: number): void {
  const names = new Set(
    route.path
      .split('/')
      .filter((segment) => segment.startsWith(':') && segment.length > 1)
      .map((segment) => segment.slice(1)),
  );
  for (const [i, limit] of (route.limits ?? []).entries()) {
    const parts = Array.isArray(limit.key) ? limit.key : limit.key === undefined ? [] : [limit.key];
    for (const [j, part] of parts.entries()) {
      if (typeof part !== 'object' || !('param' in part) || names.has(part.param)) continue;
      const at = Array.isArray(limit.key) ? `.key[${j}]` : '.key';
      throw new InvalidOptionError(
        `routes[${r}].limits[${i}]${at}.param`,
        `is ${JSON.stringify(part.param)}, not a parameter of the path ${JSON.stringify(route.path)}`,
      );
    }
  }
}

/**
 * CORS for the mock server: what lets a page on another origin call it, and read what it says
 * about its limits. A browser shows a cross-origin script only the CORS-safelisted response
 * fields (`Content-Type`, `Content-Length`...) and those the server lists in
 * `Access-Control-Expose-Headers`; everything else, `RateLimit` and `Retry-After` included, is
 * hidden from it. A request with an `Idempotency-Key` (or a JSON body) is first asked about in a
 * preflight `OPTIONS`, which this answers without touching any limit.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CorsConfig, MockServerConfig } from './config.js';
import { ROUTE_DEFAULTS, SERVER_DEFAULTS } from './defaults.js';
import { header } from './exchange.js';
import { fieldNames } from './rate-limit-headers.js';

/**
 * The response fields every server may send besides the safelisted ones and the rate-limit
 * fields: `Retry-After`, `Idempotent-Replayed` and `Date` (which a client needs to read an
 * HTTP-date `Retry-After` against the server's clock).
 */
export const SERVER_FIELDS: readonly string[] = ['Retry-After', 'Idempotent-Replayed', 'Date'];

/**
 * Header names echoed from one preflight's `Access-Control-Request-Headers` (besides the
 * idempotency header, always allowed); the rest are dropped, as are names that are not tokens.
 */
export const MAX_PREFLIGHT_HEADERS = 64;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The CORS answers of one server, worked out once from its configuration. */
export interface Cors {
  /** Fields every response carries (`Access-Control-Allow-Origin`, the exposed list). */
  readonly fields: readonly string[];
  /** The preflight's answer when `req` is one, else `undefined`. */
  preflight(req: IncomingMessage): string[] | undefined;
}

/**
 * Builds the CORS answers of a configuration, or `undefined` when `cors` is off. Exposed fields:
 * with `exposeHeaders: true` (the default) every field the server may send: each route's
 * rate-limit fields (its header family, for the units its limits count in, as the header writer
 * emits them), {@link SERVER_FIELDS}, the idempotency header (echoed by a route that honours keys)
 * and every route's own `response.headers` names; with `false` none; with a list, exactly that
 * list.
 */
export function compileCors(config: MockServerConfig, idempotencyHeader: string): Cors | undefined {
  const cors = config.cors;
  if (cors === undefined || cors === false) return undefined;
  const options: CorsConfig = cors === true ? {} : cors;
  const defaults = SERVER_DEFAULTS.cors;
  const origin = options.origin ?? defaults.origin;
  const exposed = exposedFields(
    config,
    options.exposeHeaders ?? defaults.exposeHeaders,
    idempotencyHeader,
  );
  const fields = ['Access-Control-Allow-Origin', origin];
  if (origin !== '*') fields.push('Vary', 'Origin');
  if (exposed.length > 0) fields.push('Access-Control-Expose-Headers', exposed.join(', '));
  const maxAge = String(options.maxAgeSeconds ?? defaults.maxAgeSeconds);
  return {
    fields,
    preflight(req) {
      if (req.method !== 'OPTIONS') return undefined;
      const method = header(req, 'access-control-request-method');
      if (method === undefined || header(req, 'origin') === undefined) return undefined;
      const allowed = new Map<string, string>([
        [idempotencyHeader.toLowerCase(), idempotencyHeader],
      ]);
      const requested = header(req, 'access-control-request-headers') ?? '';
      let echoed = 0;
      for (const raw of requested.split(',')) {
        if (echoed === MAX_PREFLIGHT_HEADERS) break;
        const name = raw.trim();
        if (!TOKEN.test(name)) continue;
        echoed++;
        if (!allowed.has(name.toLowerCase())) allowed.set(name.toLowerCase(), name);
      }
      const answer = [
        ...fields,
        'Access-Control-Allow-Methods',
        TOKEN.test(method.trim()) ? method.trim() : 'GET',
        'Access-Control-Allow-Headers',
        [...allowed.values()].join(', '),
        'Access-Control-Max-Age',
        maxAge,
      ];
      answer.push('Vary', 'Access-Control-Request-Method, Access-Control-Request-Headers');
      return answer;
    },
  };
}

/** Sets `fields` on `res` before it is written: the pipeline's `writeHead` keeps them. */
export function applyFields(res: ServerResponse, fields: readonly string[]): void {
  for (let i = 0; i < fields.length; i += 2) {
    res.appendHeader(fields[i] as string, fields[i + 1] as string);
  }
}

function exposedFields(
  config: MockServerConfig,
  expose: boolean | readonly string[],
  idempotencyHeader: string,
): string[] {
  if (expose === false) return [];
  if (expose !== true) return [...new Set(expose)];
  // By lower-case name (header names are case-insensitive), in a Map: route headers are data.
  const names = new Map<string, string>();
  const add = (name: string) => {
    if (!names.has(name.toLowerCase())) names.set(name.toLowerCase(), name);
  };
  for (const route of config.routes) {
    const policies = [...(config.limits ?? []), ...(route.limits ?? [])].map((limit) =>
      limit.algorithm === 'concurrency'
        ? { unit: 'concurrent-requests', concurrency: true }
        : { unit: limit.unit ?? 'requests', concurrency: false },
    );
    for (const name of fieldNames(route.headers ?? ROUTE_DEFAULTS.headers, policies)) add(name);
  }
  for (const name of SERVER_FIELDS) add(name);
  if (config.routes.some((route) => route.idempotency ?? ROUTE_DEFAULTS.idempotency)) {
    add(idempotencyHeader);
  }
  for (const route of config.routes) {
    for (const name of Object.keys(route.response?.headers ?? {})) add(name);
  }
  return [...names.values()];
}

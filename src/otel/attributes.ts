/**
 * The attributes of the client's metrics: OpenTelemetry's semantic-convention names where one
 * exists (`server.address`, `server.port`, `http.request.method`, `http.response.status_code`,
 * `error.type`), the rest under `limited_client.*`. Bounded cardinality: never a path, a query, a
 * key or a token; a method outside HTTP's registered set is `_OTHER`, as the conventions say.
 *
 * @module
 */
import type { Attributes } from '@opentelemetry/api';

/** The methods the semantic conventions list; any other is reported as `_OTHER`. */
const KNOWN_METHODS = new Set([
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'QUERY',
  'TRACE',
]);

/** Most origins whose attributes are cached; past it the cache starts again (never unbounded). */
export const MAX_CACHED_ORIGINS = 1024;

/** `http.request.method` as the conventions want it: a known method, or `_OTHER`. */
export function methodOf(method: string): string {
  return KNOWN_METHODS.has(method) ? method : '_OTHER';
}

/**
 * `error.type` for an error: a limited-client error's stable `code`, else a network error's
 * `code` (`ECONNREFUSED`, `UND_ERR_SOCKET`...) or its cause's, else its class name, else `_OTHER`.
 * Each is a short identifier chosen by code, not by outside data; capped at 64 characters.
 */
export function errorTypeOf(error: unknown): string {
  const code = codeOf(error) ?? codeOf((error as { cause?: unknown } | undefined)?.cause);
  if (code !== undefined) return code;
  if (error instanceof Error && error.name) return error.name.slice(0, 64);
  return '_OTHER';
}

function codeOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const code = (value as { code?: unknown }).code;
  return typeof code === 'string' && code.length > 0 ? code.slice(0, 64) : undefined;
}

/**
 * The attributes of an origin (`server.address`, and `server.port` when the origin names one),
 * cached per origin: the pipeline's origins are already bounded (`maxHosts`), and this cache is
 * bounded again by {@link MAX_CACHED_ORIGINS}.
 */
export class OriginAttributes {
  readonly #cache = new Map<string, Readonly<Attributes>>();

  /** Origins cached now (at most {@link MAX_CACHED_ORIGINS}). */
  get size(): number {
    return this.#cache.size;
  }

  of(origin: string): Readonly<Attributes> {
    let attributes = this.#cache.get(origin);
    if (attributes === undefined) {
      attributes = parseOrigin(origin);
      if (this.#cache.size >= MAX_CACHED_ORIGINS) this.#cache.clear();
      this.#cache.set(origin, attributes);
    }
    return attributes;
  }
}

function parseOrigin(origin: string): Readonly<Attributes> {
  try {
    const url = new URL(origin);
    const address = url.hostname.replace(/^\[|\]$/g, '');
    return url.port === ''
      ? Object.freeze({ 'server.address': address })
      : Object.freeze({ 'server.address': address, 'server.port': Number(url.port) });
  } catch {
    return Object.freeze({ 'server.address': '_OTHER' });
  }
}

/**
 * A request's headers, from undici's shapes to fetch's, as the pipeline reads them (to find or add
 * an idempotency key, to merge the client-wide headers).
 *
 * undici takes request headers as an object (`{ name: value | value[] }`), a flat array
 * (`[name, value, name, value...]`) or an iterable of pairs (a `Headers`, a `Map`). Names and
 * values are the caller's: they are passed to `Headers` (which checks them) or looked up, never
 * used as a new object's keys.
 *
 * @module
 */
import type { Dispatcher } from 'undici';

type UndiciHeaders = Dispatcher.DispatchOptions['headers'];
type Value = string | string[] | number | undefined | null;

/**
 * A request's headers as `HeadersInit`, for the pipeline: the same object when undici's shape is
 * one fetch reads the same way (an object without unset values, a `Headers`), else pairs.
 * `undefined` for none.
 * @throws TypeError for a flat array of odd length (undici refuses it too).
 */
export function requestHeadersInit(headers: UndiciHeaders): HeadersInit | undefined {
  if (headers === undefined || headers === null) return undefined;
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return headers;
  if (Array.isArray(headers)) {
    if (headers.length % 2 !== 0) {
      throw new TypeError('headers: a flat array of names and values must have an even length');
    }
    const pairs: [string, string][] = [];
    for (let i = 0; i < headers.length; i += 2) add(pairs, headers[i], headers[i + 1]);
    return pairs;
  }
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    const pairs: [string, string][] = [];
    for (const pair of headers as Iterable<[string, Value]>) add(pairs, pair[0], pair[1]);
    return pairs;
  }
  const record = headers as Record<string, Value>;
  for (const name of Object.keys(record)) {
    const value = record[name];
    if (typeof value !== 'string') return pairsOf(record);
  }
  return record as Record<string, string>;
}

function pairsOf(record: Record<string, Value>): [string, string][] {
  const pairs: [string, string][] = [];
  for (const name of Object.keys(record)) add(pairs, name, record[name]);
  return pairs;
}

/** Adds a header's values; an unset value (undefined, null) is no header, as in undici. */
function add(pairs: [string, string][], name: unknown, value: unknown): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) for (const v of value) pairs.push([String(name), String(v)]);
  else pairs.push([String(name), String(value)]);
}

/** The value of header `name` (lower case) in undici's request headers, or `undefined`. */
export function requestHeader(headers: UndiciHeaders, name: string): string | undefined {
  const init = requestHeadersInit(headers);
  if (init === undefined) return undefined;
  if (init instanceof Headers) return init.get(name) ?? undefined;
  if (Array.isArray(init)) {
    for (const [key, value] of init) if (key.toLowerCase() === name) return value;
    return undefined;
  }
  for (const key of Object.keys(init)) if (key.toLowerCase() === name) return init[key];
  return undefined;
}

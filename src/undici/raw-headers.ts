/**
 * undici's raw header list (`[name, value, name, value...]`, as its HTTP parser gives them to a
 * handler of the legacy API), read without making undici's header object first.
 *
 * An intercepted call of undici 7's `request`, `stream` or `pipeline` has a handler of the legacy
 * API under its wrapper (see `call.ts`): its attempts take their answer as that list too, and the
 * answer the call ends with goes to the caller as it came. In between, the pipeline reads only its
 * rate-limit fields ({@link RawFields}); the whole header object, or a `Headers`, is made only for
 * a hook that asks (`attempt-response.ts`). undici's converters would turn the list into an object
 * (every name and value decoded) and back into a list of new buffers (every name and value
 * encoded again) for each response: most of what a composed interceptor costs.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import { RELEVANT_INITIALS } from '../headers/field-map.js';

/** A header name or value in undici's raw list: bytes, or a string (a mock's, a test's). */
type RawItem = Buffer | string;

/** undici's raw header list: names and values in turn; a value may be a list (a repeated field). */
export type RawHeaders = readonly (RawItem | readonly RawItem[])[];

/** A name or value as text: bytes read as Latin-1, as undici reads them. */
function text(item: RawItem | readonly RawItem[]): string {
  if (typeof item === 'string') return item;
  if (Array.isArray(item)) return item.map((v) => text(v)).join(', ');
  return (item as Buffer).toString('latin1');
}

/** The char codes (lower case, and upper case) a relevant field name may start with. */
const INITIALS = new Set(
  [...RELEVANT_INITIALS].flatMap((c) => [c.charCodeAt(0), c.toUpperCase().charCodeAt(0)]),
);

/** Whether a name may be one the rate-limit parser reads, from its first character alone. */
function mayBeRelevant(name: RawItem | readonly RawItem[]): boolean {
  if (typeof name === 'string') return INITIALS.has(name.charCodeAt(0));
  if (Array.isArray(name) || name.length === 0) return false;
  return INITIALS.has((name as Buffer)[0] as number);
}

/**
 * The raw list as the rate-limit parser reads a `Headers` (its `forEach` and `get`): only the
 * fields whose name may be relevant are decoded, the others are skipped at their first byte.
 */
export class RawFields {
  readonly #raw: RawHeaders;
  constructor(raw: RawHeaders) {
    this.#raw = raw;
  }

  /** Calls `callback(value, name)` for each field that may be relevant (name as it came). */
  forEach(callback: (value: string, name: string) => void, thisArg?: unknown): void {
    const raw = this.#raw;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const name = raw[i] as RawItem;
      if (!mayBeRelevant(name)) continue;
      callback.call(thisArg, text(raw[i + 1] as RawItem), text(name));
    }
  }

  /** The value of field `name` (any case), repeated fields joined with `", "`; `null` if absent. */
  get(name: string): string | null {
    const wanted = name.toLowerCase();
    let found: string | null = null;
    this.forEach((value, key) => {
      if (key.toLowerCase() === wanted) found = found === null ? value : `${found}, ${value}`;
    });
    return found;
  }
}

/**
 * Every field of the raw list, lower-cased names to values (a repeated field as an array), as
 * undici's header object has them; without a prototype (the names are the server's).
 */
export function headersOf(raw: RawHeaders): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = Object.create(null);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = text(raw[i] as RawItem).toLowerCase();
    const item = raw[i + 1] as RawItem | readonly RawItem[];
    const values = Array.isArray(item) ? item.map((v) => text(v)) : [text(item as RawItem)];
    const previous = headers[name];
    if (previous === undefined)
      headers[name] = values.length === 1 ? (values[0] as string) : values;
    else if (typeof previous === 'string') headers[name] = [previous, ...values];
    else previous.push(...values);
  }
  return headers as IncomingHttpHeaders;
}

/** Appends every field of the raw list to `real`; a field `Headers` refuses is left out. */
export function appendRaw(real: Headers, raw: RawHeaders): void {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = text(raw[i] as RawItem);
    const item = raw[i + 1] as RawItem | readonly RawItem[];
    const values = Array.isArray(item) ? item.map((v) => text(v)) : [text(item as RawItem)];
    for (const value of values) {
      try {
        real.append(name, value);
      } catch {
        // A field fetch's Headers does not take: the pipeline does without it.
      }
    }
  }
}

/**
 * Reads the header fields the parsers care about out of a `Headers` object or a plain object
 * (Node's `IncomingHttpHeaders`, a test's literal), once, into a map of lower-cased names.
 *
 * @module
 */

/** A plain-object header map: names in any case; repeated fields as arrays. */
export type HeaderRecord = Readonly<
  Record<string, string | readonly string[] | number | null | undefined>
>;

/** What the parsers accept: a fetch `Headers` (or anything with its `forEach`), or a plain object. */
export type HeadersInput = Headers | HeaderRecord;

/** The field names the parsers read (any case); a prefix, or a whole name where it ends in `$`. */
export const RELEVANT =
  /^(?:ratelimit|x-ratelimit|x-rate-limit|retry-after|anthropic-ratelimit|x-ms-r|x-hubspot-ratelimit-|x-shopify-shop-api-call-limit$|sforce-limit-info$|date$)/i;

/**
 * The first letters (lower case) of every name {@link RELEVANT} matches: a reader of raw header
 * bytes (the undici interceptor's) skips any other name without decoding it. A test checks it
 * against the pattern.
 */
export const RELEVANT_INITIALS = 'rxasd';

/** Lower-cased field name to value; repeated fields joined with `", "` as `Headers.get()` does. */
export type FieldMap = Map<string, string>;

/** What one read collects: the relevant fields but `Date`, and `Date` apart. */
interface Collected {
  fields: FieldMap | undefined;
  date: string | undefined;
}

/**
 * Adds one field to `this` when it is relevant. A `forEach` callback taking the collection as its
 * `this`, so that reading a `Headers` makes no closure; the map is made at the first relevant field
 * other than `Date`, so that a response without any (most responses) makes none either.
 */
function collect(this: Collected, value: unknown, name: unknown): void {
  // Matched in any case first: most fields fail at their first letter and are never lower-cased.
  if (typeof value !== 'string' || typeof name !== 'string' || !RELEVANT.test(name)) return;
  const key = name.toLowerCase();
  if (key === 'date') {
    this.date = this.date === undefined ? value : `${this.date}, ${value}`;
    return;
  }
  this.fields ??= new Map();
  const previous = this.fields.get(key);
  this.fields.set(key, previous === undefined ? value : `${previous}, ${value}`);
}

/**
 * Where a `Headers` that has not been filled yet keeps the plain header object it will be filled
 * from, or a reader of undici's raw list with a `Headers`' `forEach` (the undici interceptor's
 * attempts: see `undici/attempt-response.ts`). Read instead of the `Headers`, so that nothing fills
 * it just to parse it; the same fields either way.
 */
export const RAW_FIELDS: unique symbol = Symbol('limited-client.raw-fields');

function isHeadersLike(input: object): input is Headers {
  return (
    typeof (input as Headers).forEach === 'function' && typeof (input as Headers).get === 'function'
  );
}

/**
 * Collects the rate-limit related fields of `input`, `Date` with them; `undefined` when it has none
 * but `Date` (which alone says nothing about limits). Values that are not strings or finite numbers
 * (objects, symbols, functions) are ignored.
 */
export function readFields(input: HeadersInput | null | undefined): FieldMap | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const raw = (input as { [RAW_FIELDS]?: HeadersInput })[RAW_FIELDS];
  if (raw !== undefined) input = raw;
  const found: Collected = { fields: undefined, date: undefined };
  if (isHeadersLike(input)) {
    input.forEach(collect as (value: string, name: string) => void, found);
  } else {
    for (const name of Object.keys(input)) {
      let value: unknown = (input as Record<string, unknown>)[name];
      if (typeof value === 'number' && Number.isFinite(value)) value = String(value);
      else if (Array.isArray(value)) {
        const parts = value.filter((v): v is string => typeof v === 'string');
        value = parts.length > 0 ? parts.join(', ') : undefined;
      }
      collect.call(found, value, name);
    }
  }
  if (found.fields !== undefined && found.date !== undefined) found.fields.set('date', found.date);
  return found.fields;
}

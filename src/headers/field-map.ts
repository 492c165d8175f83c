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

const RELEVANT =
  /^(?:ratelimit|x-ratelimit|x-rate-limit|retry-after|anthropic-ratelimit|x-ms-r|x-hubspot-ratelimit-|x-shopify-shop-api-call-limit$|sforce-limit-info$|date$)/;

/** Lower-cased field name to value; repeated fields joined with `", "` as `Headers.get()` does. */
export type FieldMap = Map<string, string>;

/**
 * Whether `name` starts with a letter a relevant name starts with (r, x, a, s, d, either case): a
 * filter before {@link RELEVANT}, which skips most ordinary fields (`content-type`, `connection`,
 * `etag`...) on one comparison, without lower-casing them.
 */
function mayBeRelevant(name: string): boolean {
  const c = name.charCodeAt(0) | 0x20;
  return c === 0x72 || c === 0x78 || c === 0x61 || c === 0x73 || c === 0x64;
}

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
  if (typeof value !== 'string' || typeof name !== 'string' || !mayBeRelevant(name)) return;
  const key = name.toLowerCase();
  if (!RELEVANT.test(key)) return;
  if (key === 'date') {
    this.date = this.date === undefined ? value : `${this.date}, ${value}`;
    return;
  }
  this.fields ??= new Map();
  const previous = this.fields.get(key);
  this.fields.set(key, previous === undefined ? value : `${previous}, ${value}`);
}

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
  const found: Collected = { fields: undefined, date: undefined };
  if (isHeadersLike(input)) {
    input.forEach(collect as (value: string, name: string) => void, found);
  } else {
    for (const name of Object.keys(input)) {
      const value: unknown = (input as Record<string, unknown>)[name];
      if (typeof value === 'string') collect.call(found, value, name);
      else if (typeof value === 'number' && Number.isFinite(value)) {
        collect.call(found, String(value), name);
      } else if (Array.isArray(value)) {
        const parts = value.filter((v): v is string => typeof v === 'string');
        if (parts.length > 0) collect.call(found, parts.join(', '), name);
      }
    }
  }
  if (found.fields !== undefined && found.date !== undefined) found.fields.set('date', found.date);
  return found.fields;
}

/**
 * What a request spends in a limit: a fixed number, or a number the request carries in a header
 * field or in its JSON body (an LLM API's `max_tokens`), with a default when it carries none.
 *
 * @module
 */
import type { CostFrom } from './config.js';

/** What a cost reader sees: the request's header fields, and its body parsed at most once. */
export interface CostInput {
  /** A request header's value (repeated fields joined with `, `), `name` in lower case. */
  header(name: string): string | undefined;
  /** The body as JSON, or {@link NO_JSON} when it is not JSON or does not parse. */
  json(): unknown;
}

/** What {@link CostInput.json} returns for a body that is absent, not JSON, or malformed. */
export const NO_JSON: unique symbol = Symbol('no JSON body');

/** The outcome of reading a cost: a number of units, or the bad value a request sent. */
export type CostRead =
  | { ok: true; cost: number }
  | {
      ok: false;
      /** Where it was read: `header x-token-estimate` or `json max_tokens`. */
      source: string;
      /** The value, described within {@link MAX_DESCRIBED_CHARS} characters. */
      value: string;
    };

/** A limit's cost as the server computes it per request. */
export interface CompiledCost {
  /** The cost when the request says nothing (the fixed cost, or the reader's default). */
  fallback: number;
  /** Whether the cost depends on the request at all. */
  fromRequest: boolean;
  /** Reads a request's cost. */
  read(input: CostInput): CostRead;
}

/** A bad value is quoted in an error body up to this many characters. */
export const MAX_DESCRIBED_CHARS = 64;

/** A header's cost: 1 to 15 decimal digits (under 2^53), optional whitespace around them. */
const HEADER_COST = /^[ \t]*(\d{1,15})[ \t]*$/;

/**
 * Compiles a limit's `cost`: a number, a {@link CostFrom}, or `undefined` for `fallback` (the
 * route's cost). A request's value must be an integer from 1; the header is read before the body.
 */
export function compileCost(cost: number | CostFrom | undefined, fallback: number): CompiledCost {
  if (cost === undefined || typeof cost === 'number') {
    const fixed: CostRead = { ok: true, cost: cost ?? fallback };
    return { fallback: fixed.cost, fromRequest: false, read: () => fixed };
  }
  const byDefault: CostRead = { ok: true, cost: cost.default ?? fallback };
  const header = cost.header?.toLowerCase();
  const path = cost.json?.split('.');
  return {
    fallback: byDefault.cost,
    fromRequest: true,
    read(input) {
      if (header !== undefined) {
        const value = input.header(header);
        if (value !== undefined) return headerCost(value, header);
      }
      if (path !== undefined) {
        const value = jsonField(input.json(), path);
        if (value !== undefined) return jsonCost(value, cost.json as string);
      }
      return byDefault;
    },
  };
}

function headerCost(value: string, name: string): CostRead {
  const m = HEADER_COST.exec(value);
  const n = m ? Number(m[1]) : 0;
  if (n >= 1) return { ok: true, cost: n };
  return { ok: false, source: `header ${name}`, value: clip(JSON.stringify(value)) };
}

function jsonCost(value: unknown, path: string): CostRead {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) {
    return { ok: true, cost: value };
  }
  return { ok: false, source: `json ${path}`, value: describe(value) };
}

/**
 * The value at `path` in a parsed JSON body, or `undefined` when any step is missing: an own
 * property of an object, or an index (decimal digits) of an array. Own properties only, so
 * `constructor` or `__proto__` finds only what the body itself holds.
 */
export function jsonField(body: unknown, path: readonly string[]): unknown {
  let at = body;
  for (const segment of path) {
    if (Array.isArray(at)) {
      if (!/^\d+$/.test(segment)) return undefined;
      at = at[Number(segment)];
    } else if (typeof at === 'object' && at !== null && Object.hasOwn(at, segment)) {
      at = (at as Record<string, unknown>)[segment];
    } else return undefined;
    if (at === undefined) return undefined;
  }
  return at;
}

/** A JSON value described for an error body, without copying a large one. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number') return String(value);
  return clip(JSON.stringify(value));
}

function clip(text: string): string {
  return text.length <= MAX_DESCRIBED_CHARS ? text : `${text.slice(0, MAX_DESCRIBED_CHARS - 1)}…`;
}

/**
 * A {@link CostInput} over a request's header reader and body. The body is parsed on the first
 * `json()` call only, and only when `isJson` (its `Content-Type` says JSON); a body that does not
 * parse is {@link NO_JSON}.
 */
export function costInput(
  header: (name: string) => string | undefined,
  body: Buffer,
  isJson: boolean,
): CostInput {
  let parsed: unknown = isJson ? undefined : NO_JSON;
  return {
    header,
    json() {
      if (parsed === undefined) {
        try {
          parsed = JSON.parse(body.toString('utf8')) as unknown;
        } catch {
          parsed = NO_JSON;
        }
      }
      return parsed;
    },
  };
}

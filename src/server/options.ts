/**
 * Option validation shared by the algorithm constructors and the mock server's configuration: the
 * zod building blocks, and the one place a zod error becomes an {@link InvalidOptionError} naming
 * the option, the problem and the value.
 *
 * @module
 */
import { z } from 'zod';
import type { Clock } from '../clock.js';
import { InvalidOptionError } from '../errors.js';
import type { RateLimitStore } from './store.js';

const POSITIVE_INTEGER = 'must be a positive integer';
const NON_NEGATIVE_INTEGER = 'must be a non-negative integer';
const POSITIVE_NUMBER = 'must be a positive, finite number';

/** An integer from 1 to `Number.MAX_SAFE_INTEGER`: a count, a capacity. */
export const positiveInteger = z
  .number({ error: POSITIVE_INTEGER })
  .int({ error: POSITIVE_INTEGER })
  .min(1, { error: POSITIVE_INTEGER });

/** An integer from 0 to `Number.MAX_SAFE_INTEGER`. */
export const nonNegativeInteger = z
  .number({ error: NON_NEGATIVE_INTEGER })
  .int({ error: NON_NEGATIVE_INTEGER })
  .min(0, { error: NON_NEGATIVE_INTEGER });

/** A positive, finite number: a rate per second, which may be fractional (`0.5` is one per 2 s). */
export const positiveNumber = z
  .number({ error: POSITIVE_NUMBER })
  .positive({ error: POSITIVE_NUMBER });

/** A duration in whole milliseconds, at least 1. */
export const durationMs = positiveInteger;

/** A probability from 0 to 1. */
export const probability = z
  .number({ error: 'must be a number from 0 to 1' })
  .min(0, { error: 'must be a number from 0 to 1' })
  .max(1, { error: 'must be a number from 0 to 1' });

function isClock(value: unknown): value is Clock {
  const c = value as Clock | null;
  return (
    typeof c === 'object' &&
    c !== null &&
    typeof c.now === 'function' &&
    typeof c.sleep === 'function' &&
    typeof c.random === 'function'
  );
}

function isStore(value: unknown): value is RateLimitStore {
  const s = value as RateLimitStore | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.take === 'function' &&
    typeof s.peek === 'function' &&
    typeof s.refund === 'function'
  );
}

/** A {@link Clock}: an object with `now`, `sleep` and `random`. */
export const clockSchema = z.custom<Clock>(isClock, {
  error: 'must be a Clock (an object with now(), sleep() and random())',
});

/** A {@link RateLimitStore}: an object with `take`, `peek` and `refund`. */
export const storeSchema = z.custom<RateLimitStore>(isStore, {
  error: 'must be a RateLimitStore (an object with take(), peek() and refund())',
});

/** Formats a zod issue path as a dotted option path: `routes[0].limits[1].windowMs`. */
export function optionPath(prefix: string, path: readonly PropertyKey[]): string {
  let out = prefix;
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(options)' : out;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string')
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return `a ${typeof value}`;
}

/**
 * Validates `input` against `schema` and returns the parsed value, or throws an
 * {@link InvalidOptionError} for the first problem: `invalid option routes[0].cost: must be a
 * positive integer, got 0`.
 *
 * @param prefix prepended to the option path (`'routes[2]'`), or `''`.
 */
export function parseOptions<T>(schema: z.ZodType<T>, input: unknown, prefix = ''): T {
  const parsed = schema.safeParse(input, { reportInput: true });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0] as z.core.$ZodIssue;
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    throw new InvalidOptionError(
      optionPath(prefix, [...issue.path, key]),
      'is not a known option (check its spelling)',
    );
  }
  if (issue.code === 'invalid_union' && 'discriminator' in issue) {
    const options = (issue as { options?: unknown[] }).options ?? [];
    const value = (issue.input as Record<string, unknown> | undefined)?.[
      String((issue as { discriminator?: string }).discriminator)
    ];
    throw new InvalidOptionError(
      optionPath(prefix, issue.path),
      `must be one of ${options.map((o) => JSON.stringify(o)).join(', ')}, got ${describe(value)}`,
    );
  }
  const message = issue.message.startsWith('Invalid input') ? 'has the wrong type' : issue.message;
  throw new InvalidOptionError(
    optionPath(prefix, issue.path),
    `${message}, got ${describe(issue.input)}`,
  );
}

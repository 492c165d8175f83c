/**
 * Option validation shared by the algorithm constructors and the mock server's configuration: the
 * zod building blocks, and `parseOptions`, where a zod error becomes an {@link InvalidOptionError}
 * naming the option, the problem and the value (worded as the client's, by `option-checks.ts`).
 *
 * @module
 */
import { z } from 'zod';
import { CLOCK_PROBLEM, type Clock, isClock } from '../shared/clock.js';
import type { InvalidOptionError } from '../shared/errors.js';
import { optionError } from '../shared/option-checks.js';
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
export const clockSchema = z.custom<Clock>(isClock, { error: CLOCK_PROBLEM });

/** A {@link RateLimitStore}: an object with `take`, `peek` and `refund`. */
export const storeSchema = z.custom<RateLimitStore>(isStore, {
  error: 'must be a RateLimitStore (an object with take(), peek() and refund())',
});

/**
 * Validates `input` against `schema` and returns the parsed value, or throws an
 * {@link InvalidOptionError} for an unknown key if there is one, else the first problem (see `option-checks.ts` for the format):
 * `invalid option routes[0].cost: must be a positive integer, got 0`.
 *
 * @param prefix prepended to the option path (`'routes[2]'`), or `''`.
 */
export function parseOptions<T>(schema: z.ZodType<T>, input: unknown, prefix = ''): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  // A misspelt name first (`burts`), rather than the parameter it was meant to be (`burst`:
  // "got nothing"), which says nothing of the typo.
  const { issues } = parsed.error;
  const unknown = issues.find((issue) => issue.code === 'unrecognized_keys');
  throw optionError(unknown ? [unknown] : issues, input, prefix);
}

/**
 * Delays between attempts, as pure functions of the attempt number and a random number in [0, 1).
 * Nothing here reads a clock or calls `Math.random()`: the caller passes the chance in, so tests
 * can pin it and a fleet's spread can be reproduced.
 *
 * @module
 */

/**
 * The exponential ceiling `min(capMs, baseMs * 2^retry)`, in milliseconds.
 *
 * @param retry how many retries were already made for this request: 0 before the first retry.
 * @param baseMs the ceiling before the first retry, in milliseconds.
 * @param capMs the largest ceiling, in milliseconds.
 */
export function backoffCeiling(retry: number, baseMs: number, capMs: number): number {
  // 2^1024 overflows to Infinity; min() with the cap keeps the result finite.
  return Math.min(capMs, baseMs * 2 ** Math.max(0, retry));
}

/**
 * Exponential backoff with full jitter: a delay drawn uniformly from
 * `[0, min(capMs, baseMs * 2^retry)]`. Spreads the retries of many clients over the whole interval,
 * which is what keeps a fleet from retrying in lockstep (the "Full Jitter" of the AWS Architecture
 * Blog's "Exponential Backoff And Jitter"). The mean is half the ceiling.
 *
 * @param retry retries already made: 0 before the first retry.
 * @param random a number in [0, 1), e.g. `clock.random()`.
 * @returns milliseconds, an integer.
 * @example fullJitter(2, 100, 10_000, Math.random()) // somewhere in [0, 400]
 */
export function fullJitter(retry: number, baseMs: number, capMs: number, random: number): number {
  return Math.floor(random * (backoffCeiling(retry, baseMs, capMs) + 1));
}

/** How much a server-given wait is stretched at random. */
export interface WaitJitter {
  /** Largest extra wait, as a fraction of the server's wait. @default 0.05 */
  ratio: number;
  /** Largest extra wait, in milliseconds. @default 1000 */
  maxMs: number;
}

/**
 * A wait the server asked for (`Retry-After`, a rate-limit reset), plus a small positive jitter so
 * that clients told the same instant do not all wake at it. Never earlier than asked: the result is
 * in `[waitMs, waitMs + min(maxMs, ratio * waitMs)]`.
 *
 * @param waitMs what the server asked for, in milliseconds (negative counts as 0).
 * @param random a number in [0, 1).
 * @returns milliseconds, an integer, never below `ceil(waitMs)`.
 */
export function serverWait(waitMs: number, random: number, jitter: WaitJitter): number {
  const base = Math.ceil(Math.max(0, waitMs));
  return base + Math.floor(random * Math.min(jitter.maxMs, jitter.ratio * base));
}

/**
 * The states the limiter functions write as one string (`'<a> <b> ...'`, see `lua/common.ts`),
 * read back in Node from a reply's fields as the algorithms' own state objects, so that the
 * algorithms' TypeScript computes the delays of a result from exactly the numbers the Lua decided
 * on; and the receipt and delay of an admitted take, derived as `consume()` derives them.
 *
 * @module
 */
import type { AlgorithmName } from '../server/types.js';

/**
 * How to read one algorithm's state out of a reply's fields read as numbers (`'1 <seconds>
 * <micros> <state...> [<receipt>]'`, see `lua/common.ts` and `reply-fields.ts`).
 */
export interface StateCodec {
  /** How many fields the state has. */
  readonly size: number;
  /** The state of the fields from `at` on (`size` of them, numbers the Lua wrote). */
  decode(fields: readonly number[], at: number): unknown;
  /**
   * The receipt of an admitted take, from the state after it or from the field after the state
   * (for the algorithms whose Lua sends one: `SENDS_RECEIPT`); absent when the algorithm has none.
   */
  receipt?(state: never, fields: readonly number[], after: number): number;
  /** The delay of an admitted take in milliseconds (`consume()`'s), from its receipt and time. */
  delay?(receipt: number, now: number): number;
}

const tat: StateCodec['decode'] = (f, at) => ({ tat: f[at] });
const sent = (_state: never, f: readonly number[], after: number) => f[after] as number;

/**
 * The codec of each algorithm whose function replies with its state (for the concurrency limit,
 * its units in flight); the sliding log replies with the whole result.
 */
export const STATE_CODECS: Partial<Record<AlgorithmName, StateCodec>> = {
  'fixed-window': {
    size: 2,
    decode: (f, at) => ({ start: f[at], count: f[at + 1] }),
    receipt: (s: { start: number }) => s.start,
  },
  'sliding-window-counter': {
    size: 3,
    decode: (f, at) => ({ start: f[at], current: f[at + 1], previous: f[at + 2] }),
    receipt: (s: { start: number }) => s.start,
  },
  'token-bucket': {
    size: 2,
    decode: (f, at) => ({ tokens: f[at], since: f[at + 1] }),
  },
  gcra: { size: 1, decode: tat, receipt: sent },
  // The units in flight (of the live leases); the receipt is the take's lease.
  concurrency: { size: 1, decode: (f, at) => ({ inFlight: f[at] }), receipt: sent },
  // consume() of leaky-bucket.ts: the delay is ceil(start - now), the start being the receipt.
  'leaky-bucket': {
    size: 1,
    decode: tat,
    receipt: sent,
    delay: (start, now) => Math.ceil(start - now),
  },
};

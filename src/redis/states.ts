/**
 * The states the limiter functions write as one string (`'<a> <b> ...'`, see `lua/common.ts`),
 * read back in Node as the algorithms' own state objects, so that the algorithms' TypeScript
 * computes the delays of a result from exactly the numbers the Lua decided on.
 *
 * @module
 */
import type { AlgorithmName } from '../server/types.js';

/** Reads the numbers of a state string; `undefined` unless there are exactly `count`. */
function numbers(text: string, count: number): number[] | undefined {
  const values: number[] = [];
  let from = 0;
  for (let i = 0; i < count; i++) {
    const space = i === count - 1 ? text.length : text.indexOf(' ', from);
    if (space < 0) return undefined;
    const value = Number(text.slice(from, space));
    if (!Number.isFinite(value) || space === from) return undefined;
    values.push(value);
    from = space + 1;
  }
  return from === text.length + 1 ? values : undefined;
}

/** Decodes a state string into the algorithm's state (`undefined` for a fresh key). */
type Decoder = (text: string) => unknown;

/**
 * The decoder of each algorithm whose function replies with its state; the others (sliding log,
 * concurrency) reply with the whole result.
 */
export const STATE_DECODERS: Partial<Record<AlgorithmName, Decoder>> = {
  'fixed-window': (text) => {
    const v = numbers(text, 2);
    return v && { start: v[0], count: v[1] };
  },
  'sliding-window-counter': (text) => {
    const v = numbers(text, 3);
    return v && { start: v[0], current: v[1], previous: v[2] };
  },
  'token-bucket': (text) => {
    const v = numbers(text, 2);
    return v && { tokens: v[0], since: v[1] };
  },
  gcra: (text) => {
    const v = numbers(text, 1);
    return v && { tat: v[0] };
  },
  'leaky-bucket': (text) => {
    const v = numbers(text, 1);
    return v && { tat: v[0] };
  },
};

/**
 * Space-saving (Metwally, Agrawal, El Abbadi, 2005): the heaviest keys of a stream in bounded
 * memory. At most `capacity` keys are kept; a new key past that takes the place of the lightest,
 * inheriting its count as its `error`. For a stream of total weight N, every key kept has
 * `count - error <= true weight <= count`, the lightest count is at most N / capacity, and every
 * key whose true weight exceeds N / capacity is kept. Keys live in a `Map`, never in a plain object.
 *
 * @module
 */

/** One key the sketch keeps: its estimated weight (`count`) and how much of it may be inherited. */
export interface HeavyHitter<K> {
  key: K;
  /** An over-estimate of the key's weight: the true weight is in `[count - error, count]`. */
  count: number;
  /** The most `count` over-estimates by. */
  error: number;
}

/** The most keys a sketch may keep (its memory is O(capacity)). */
export const MAX_SKETCH_CAPACITY = 100_000;

/** See the module comment. A binary min-heap by count, with each key's place in a `Map`. */
export class SpaceSaving<K> {
  readonly capacity: number;
  /** Total weight offered (N). */
  total = 0;
  readonly #keys: K[] = [];
  readonly #counts: number[] = [];
  readonly #errors: number[] = [];
  readonly #index = new Map<K, number>();

  /** @param capacity keys kept, an integer from 1 to {@link MAX_SKETCH_CAPACITY}. */
  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1 || capacity > MAX_SKETCH_CAPACITY) {
      throw new RangeError(
        `capacity must be an integer from 1 to ${MAX_SKETCH_CAPACITY}; got ${capacity}`,
      );
    }
    this.capacity = capacity;
  }

  /** Keys kept now (at most `capacity`). */
  get size(): number {
    return this.#keys.length;
  }

  /** Adds `weight` (a finite number above 0; anything else is ignored) to `key`. */
  offer(key: K, weight = 1): void {
    if (!(weight > 0) || !Number.isFinite(weight)) return;
    this.total += weight;
    const at = this.#index.get(key);
    if (at !== undefined) {
      this.#counts[at] = (this.#counts[at] as number) + weight;
      this.#down(at);
      return;
    }
    if (this.#keys.length < this.capacity) {
      const i = this.#keys.length;
      this.#keys.push(key);
      this.#counts.push(weight);
      this.#errors.push(0);
      this.#index.set(key, i);
      this.#up(i);
      return;
    }
    // The lightest key makes room; the newcomer inherits its count as its possible error.
    const min = this.#counts[0] as number;
    this.#index.delete(this.#keys[0] as K);
    this.#keys[0] = key;
    this.#counts[0] = min + weight;
    this.#errors[0] = min;
    this.#index.set(key, 0);
    this.#down(0);
  }

  /** The `n` heaviest keys kept, heaviest first. */
  top(n: number): HeavyHitter<K>[] {
    const all: HeavyHitter<K>[] = this.#keys.map((key, i) => ({
      key,
      count: this.#counts[i] as number,
      error: this.#errors[i] as number,
    }));
    return all.sort((a, b) => b.count - a.count).slice(0, Math.max(0, n));
  }

  /** Forgets every key. */
  clear(): void {
    this.total = 0;
    this.#keys.length = 0;
    this.#counts.length = 0;
    this.#errors.length = 0;
    this.#index.clear();
  }

  #swap(i: number, j: number): void {
    const keys = this.#keys;
    const counts = this.#counts;
    const errors = this.#errors;
    [keys[i], keys[j]] = [keys[j] as K, keys[i] as K];
    [counts[i], counts[j]] = [counts[j] as number, counts[i] as number];
    [errors[i], errors[j]] = [errors[j] as number, errors[i] as number];
    this.#index.set(keys[i] as K, i);
    this.#index.set(keys[j] as K, j);
  }

  #up(i: number): void {
    const counts = this.#counts;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((counts[parent] as number) <= (counts[i] as number)) return;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(i: number): void {
    const counts = this.#counts;
    const n = counts.length;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) return;
      const right = left + 1;
      const child =
        right < n && (counts[right] as number) < (counts[left] as number) ? right : left;
      if ((counts[i] as number) <= (counts[child] as number)) return;
      this.#swap(i, child);
      i = child;
    }
  }
}

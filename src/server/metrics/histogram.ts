/**
 * A histogram of fixed buckets (Prometheus's shape: cumulative counts per upper bound, a sum and a
 * count), in constant memory whatever is recorded.
 *
 * @module
 */

/** See the module comment. */
export class Histogram {
  readonly bounds: readonly number[];
  /** Per bound, the values recorded at most that bound and above the previous one; then the rest. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  /** @param bounds upper bounds, ascending. */
  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  /** Records `value` (a non-finite value is ignored). */
  record(value: number): void {
    if (!Number.isFinite(value)) return;
    let i = 0;
    while (i < this.bounds.length && value > (this.bounds[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += value;
    this.count++;
  }

  /** The cumulative count at each bound, as Prometheus's `_bucket{le=...}` series. */
  cumulative(): number[] {
    let running = 0;
    return this.bounds.map((_, i) => {
      running += this.counts[i] as number;
      return running;
    });
  }
}

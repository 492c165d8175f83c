/**
 * The dashboard's chart data: per route, the requests admitted and rejected in each second of the
 * last five minutes, from the route counters that `stats()` reads, sampled once a second (and at
 * each read of the dashboard's JSON). What a bucket holds is what the counters grew by between two
 * samples, so the buckets of a route add up to its counters' growth since the dashboard started,
 * bucket by bucket as long as the samples come on time.
 *
 * @module
 */

/** Milliseconds per bucket of the chart. */
export const DASHBOARD_BUCKET_MS = 1000;
/** Buckets kept per route (five minutes of one-second buckets); older ones are dropped. */
export const DASHBOARD_BUCKETS = 300;

/** One route's counters at a sample. */
export interface RouteTotal {
  route: string;
  admitted: number;
  rejected: number;
}

/** One route's series: requests per bucket, oldest first, the last bucket the current one. */
export interface RouteSeries {
  route: string;
  admitted: number[];
  rejected: number[];
}

/** The chart's data, as the dashboard's JSON carries it. */
export interface TimelineView {
  /** Milliseconds per bucket. */
  bucketMs: number;
  /** Epoch milliseconds at which the last (current) bucket ends; bucket `i` ends `bucketMs` earlier per step back. */
  end: number;
  routes: RouteSeries[];
}

/** See the module comment. Memory: routes x {@link DASHBOARD_BUCKETS} x 2 numbers. */
export class Timeline {
  readonly #bucketMs: number;
  readonly #buckets: number;
  /** The counters at the last sample, by route (a `Map`: labels come from the configuration). */
  readonly #last = new Map<string, RouteTotal>();
  readonly #series = new Map<string, RouteSeries>();
  /** The current bucket's number (epoch ms / bucketMs), from the first sample on. */
  #bucket: number | undefined;
  /** Buckets every series holds. */
  #length = 0;

  /**
   * @param bucketMs milliseconds per bucket, at least 1.
   * @param buckets buckets kept per route, at least 1.
   */
  constructor(bucketMs = DASHBOARD_BUCKET_MS, buckets = DASHBOARD_BUCKETS) {
    this.#bucketMs = Math.max(1, bucketMs);
    this.#buckets = Math.max(1, Math.floor(buckets));
  }

  /** Adds what each route's counters grew by since the last sample to the bucket of `now` (ms). */
  sample(totals: readonly RouteTotal[], now: number): void {
    this.#advance(Math.floor(now / this.#bucketMs));
    for (const total of totals) {
      const series = this.#seriesOf(total.route);
      const last = this.#last.get(total.route);
      // Counters that went down were reset (`resetStats()`): what they hold now is all new.
      const admitted =
        last && total.admitted >= last.admitted ? total.admitted - last.admitted : total.admitted;
      const rejected =
        last && total.rejected >= last.rejected ? total.rejected - last.rejected : total.rejected;
      const i = series.admitted.length - 1;
      series.admitted[i] = (series.admitted[i] ?? 0) + admitted;
      series.rejected[i] = (series.rejected[i] ?? 0) + rejected;
      this.#last.set(total.route, { ...total });
    }
  }

  /** Every route's series, copied. */
  view(): TimelineView {
    const bucket = this.#bucket ?? 0;
    return {
      bucketMs: this.#bucketMs,
      end: (bucket + 1) * this.#bucketMs,
      routes: [...this.#series.values()].map((s) => ({
        route: s.route,
        admitted: [...s.admitted],
        rejected: [...s.rejected],
      })),
    };
  }

  /** Moves to `bucket`: empty buckets for the time that passed, the oldest dropped past the cap. */
  #advance(bucket: number): void {
    if (this.#bucket === undefined) {
      this.#bucket = bucket;
      this.#length = 1;
      for (const s of this.#series.values()) this.#pad(s);
      return;
    }
    // The same bucket, or a clock that stepped back: keep adding to the current one.
    if (bucket <= this.#bucket) return;
    const steps = Math.min(bucket - this.#bucket, this.#buckets);
    this.#bucket = bucket;
    this.#length = Math.min(this.#length + steps, this.#buckets);
    for (const s of this.#series.values()) {
      for (let k = 0; k < steps; k++) {
        s.admitted.push(0);
        s.rejected.push(0);
      }
      this.#trim(s);
    }
  }

  #seriesOf(route: string): RouteSeries {
    let s = this.#series.get(route);
    if (s === undefined) {
      s = { route, admitted: [], rejected: [] };
      this.#pad(s);
      this.#series.set(route, s);
    }
    return s;
  }

  /** A new series starts with as many empty buckets as the others hold. */
  #pad(s: RouteSeries): void {
    while (s.admitted.length < this.#length) {
      s.admitted.push(0);
      s.rejected.push(0);
    }
  }

  #trim(s: RouteSeries): void {
    const extra = s.admitted.length - this.#buckets;
    if (extra > 0) {
      s.admitted.splice(0, extra);
      s.rejected.splice(0, extra);
    }
  }
}

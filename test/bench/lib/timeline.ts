/**
 * Records when each attempt reached the server and how it was answered, then bins the record for
 * charts. Times are milliseconds on one monotonic clock (`performance.now()`).
 */

/** One attempt as the client saw it. */
export interface Attempt {
  /** When the attempt was sent, ms since the timeline started. */
  at: number;
  /** HTTP status, or 0 for a network error. */
  status: number;
}

/** Counts of one bin. */
export interface Bin {
  ok: number;
  rejected: number;
  failed: number;
}

export class Timeline {
  readonly attempts: Attempt[] = [];
  private readonly start = performance.now();

  /** Milliseconds since the timeline started. */
  elapsed(): number {
    return performance.now() - this.start;
  }

  record(status: number, at = this.elapsed()): void {
    this.attempts.push({ at, status });
  }

  /** Attempts that got a 429. */
  get rejected(): number {
    return this.attempts.filter((a) => a.status === 429).length;
  }

  /** Attempts per `binMs` bin, split into 2xx/3xx, 429 and anything else. */
  bins(binMs: number, untilMs?: number): Bin[] {
    const last = untilMs ?? Math.max(0, ...this.attempts.map((a) => a.at));
    const bins: Bin[] = Array.from({ length: Math.floor(last / binMs) + 1 }, () => ({
      ok: 0,
      rejected: 0,
      failed: 0,
    }));
    for (const { at, status } of this.attempts) {
      const bin = bins[Math.min(bins.length - 1, Math.floor(at / binMs))] as Bin;
      if (status === 429) bin.rejected++;
      else if (status >= 200 && status < 400) bin.ok++;
      else bin.failed++;
    }
    return bins;
  }
}

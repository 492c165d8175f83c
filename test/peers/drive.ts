/**
 * Runs a batch of logical calls the way an application does: `requests` calls, at most
 * `concurrency` in flight, each call resolving to its final HTTP status (0 when the client refused
 * to send or got no response). Used by the peer tests and by the "wild" benchmark.
 */

/** What a batch of calls came to, as the caller saw it. */
export interface BatchResult {
  /** Calls that ended on a 2xx. */
  ok: number;
  /** Calls that ended otherwise, by final status (0: refused or no response). */
  failed: Map<number, number>;
  /** From the first call to the last settlement, in milliseconds of real time. */
  elapsedMs: number;
}

/** Runs `call(0)` ... `call(requests - 1)`, `concurrency` at a time; `call` must not reject. */
export async function runBatch(
  requests: number,
  concurrency: number,
  call: (index: number) => Promise<number>,
): Promise<BatchResult> {
  let next = 0;
  let ok = 0;
  const failed = new Map<number, number>();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, requests) }, async () => {
      while (next < requests) {
        const status = await call(next++);
        if (status >= 200 && status < 300) ok++;
        else failed.set(status, (failed.get(status) ?? 0) + 1);
      }
    }),
  );
  return { ok, failed, elapsedMs: performance.now() - start };
}

/** Calls that did not end on a 2xx. */
export function failedCount(result: BatchResult): number {
  let n = 0;
  for (const count of result.failed.values()) n += count;
  return n;
}

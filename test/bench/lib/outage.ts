/**
 * The outage scenario of the benchmarks: GETs at a steady rate to a mock server whose route
 * answers 503 for a while, and what a client made of it. Used by `bench.ts` (one outage length,
 * every contender) and `outage-sweep.ts` (one client, many lengths).
 */

/** The part of a mock server the scenario reads. */
export interface OutageServer {
  url: string;
  stats(): { admitted: number; rejected: number };
  close(): Promise<void>;
}

/** One run of the scenario. */
export interface OutagePlan {
  /** Starts a mock server whose `/data/:id` answers 503 from `afterMs` for `forMs`. */
  start(fault: { afterMs: number; forMs: number }): Promise<OutageServer>;
  /** One GET through the client under test: its final status, 0 when it rejected. */
  get(url: string): Promise<number>;
  /** Requests per second. */
  rate: number;
  /** Healthy time before the outage, after it, and the outage, in milliseconds. */
  beforeMs: number;
  outageMs: number;
  afterMs: number;
  /** Named in the error when the calls have not all settled 120 s after the last one started. */
  label: string;
}

/** How long the calls may take to settle after the last one started, in milliseconds. */
const SETTLE_MS = 120_000;

/** What the client made of the outage. */
export interface OutageFigures {
  /** Calls started while the server failed. */
  startedDuringOutage: number;
  /** Attempts the server received during the outage, per call started in it. */
  attemptsPerRequestDuringOutage: number;
  /** Milliseconds from the outage's end to the first success of a call started after it. */
  recoveryMs: number | null;
  /** Calls started after the outage that did not end on a 200. */
  failedAfterOutage: number;
}

/** Runs the scenario once; the server is closed when it returns (the client is the caller's). */
export async function runOutage(plan: OutagePlan): Promise<OutageFigures> {
  const { beforeMs, outageMs, afterMs, rate } = plan;
  const server = await plan.start({ afterMs: beforeMs, forMs: outageMs });
  const attemptsSoFar = () => {
    const s = server.stats();
    return s.admitted + s.rejected;
  };
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  let atOutageStart = 0;
  let atOutageEnd = 0;
  const marks = [
    setTimeout(() => {
      atOutageStart = attemptsSoFar();
    }, beforeMs),
    setTimeout(() => {
      atOutageEnd = attemptsSoFar();
    }, beforeMs + outageMs),
  ];
  const calls: { startedAt: number; settledAt: number; ok: boolean }[] = [];
  const pending: Promise<void>[] = [];
  try {
    for (let i = 0; now() < beforeMs + outageMs + afterMs; i++) {
      const startedAt = now();
      pending.push(
        plan.get(`${server.url}/data/${i}`).then((status) => {
          calls.push({ startedAt, settledAt: now(), ok: status === 200 });
        }),
      );
      const wait = (i + 1) * (1000 / rate) - now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    let deadline: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(pending),
      new Promise<never>((_, reject) => {
        deadline = setTimeout(
          () => reject(new Error(`${plan.label}: calls unsettled after ${SETTLE_MS} ms`)),
          SETTLE_MS,
        );
      }),
    ]).finally(() => clearTimeout(deadline));
  } finally {
    for (const mark of marks) clearTimeout(mark);
    await server.close();
  }
  const end = beforeMs + outageMs;
  const during = calls.filter((c) => c.startedAt >= beforeMs && c.startedAt < end).length;
  const after = calls.filter((c) => c.startedAt >= end);
  const firstOk = Math.min(...after.filter((c) => c.ok).map((c) => c.settledAt));
  return {
    startedDuringOutage: during,
    attemptsPerRequestDuringOutage: (atOutageEnd - atOutageStart) / Math.max(1, during),
    recoveryMs: Number.isFinite(firstOk) ? Math.round(firstOk - end) : null,
    failedAfterOutage: after.filter((c) => !c.ok).length,
  };
}

/**
 * Admission under several limits: all or nothing.
 *
 * @module
 */
import type { Acquisition } from '../algorithms/limiter.js';
import type { TakeResult } from '../types.js';
import type { CompiledLimit, CompiledRoute } from './compile.js';
import type { PolicyReport } from './rate-limit-headers.js';

/** The outcome of {@link admit}. */
export interface Admission {
  /** Whether every limit admitted the request. */
  allowed: boolean;
  /** When admitted: one per limit, in the route's order, to release concurrency slots with. */
  acquisitions: Acquisition[];
  /** One per limit: the take's result, or for a rejected request, each limit as it now stands. */
  results: TakeResult[];
  /** `results` as the header fields describe them. */
  reports: PolicyReport[];
}

/**
 * Takes `route.cost` from each limit in order. When one rejects, the takes already made are
 * refunded (last first), so a rejected request spends nothing anywhere, and every limit is then
 * described as it stands (`peek`). Another request can briefly see a refunded unit as spent: the
 * error is toward rejecting, never toward admitting too much.
 */
export async function admit(route: CompiledRoute, keys: string[], now: number): Promise<Admission> {
  const acquisitions: Acquisition[] = [];
  const results: TakeResult[] = [];
  const options = { cost: route.cost, now };
  let rejected = -1;
  for (const [i, limit] of route.limits.entries()) {
    const acquisition = await limit.limiter.acquire(keys[i] as string, options);
    results.push(acquisition.result);
    if (!acquisition.result.allowed) {
      rejected = i;
      break;
    }
    acquisitions.push(acquisition);
  }
  if (rejected >= 0) {
    for (const acquisition of [...acquisitions].reverse()) await acquisition.refund();
    for (const [i, limit] of route.limits.entries()) {
      if (i !== rejected) results[i] = await limit.limiter.peek(keys[i] as string, options);
    }
  }
  const reports = route.limits.map((limit, i) => report(limit, results[i] as TakeResult));
  return { allowed: rejected < 0, acquisitions, results, reports };
}

function report(limit: CompiledLimit, result: TakeResult): PolicyReport {
  const out: PolicyReport = {
    name: limit.name,
    limit: result.limit,
    remaining: result.remaining,
    resetMs: result.resetMs,
    retryAfterMs: result.retryAfterMs,
    concurrency: limit.concurrency,
  };
  if (limit.windowMs !== undefined) out.windowMs = limit.windowMs;
  return out;
}

/** The stats key of a request: its limits' keys, without `global` unless that is all there is. */
export function clientKey(keys: string[], ip: string): string {
  if (keys.length === 0) return `ip:${ip}`;
  const distinct = [...new Set(keys)];
  const specific = distinct.filter((k) => k !== 'global');
  return (specific.length > 0 ? specific : distinct).join(' ');
}

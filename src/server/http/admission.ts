/**
 * Admission under several limits: all or nothing.
 *
 * @module
 */
import type { Acquisition } from '../algorithms/limiter.js';
import type { TakeResult } from '../types.js';
import type { CompiledLimit, CompiledRoute } from './compile.js';
import type { PolicyField, PolicyReport } from './rate-limit-headers.js';

/** A store call that failed while a request was being decided. */
export interface StoreFailure {
  /** The limit's index in the route's limits. */
  limit: number;
  /** What was asked of its store. */
  operation: 'take' | 'peek' | 'refund';
  /** What the store threw. */
  error: unknown;
}

/** The outcome of {@link admit}. */
export interface Admission {
  /** Whether every limit admitted the request. */
  allowed: boolean;
  /**
   * A store failed on a route that fails closed: the request is refused (503) without a decision.
   * `results` and `reports` are then empty.
   */
  failedClosed: boolean;
  /** When admitted: one per limit, in the route's order, to release concurrency slots with. */
  acquisitions: Acquisition[];
  /** One per limit: the take's result, or for a rejected request, each limit as it now stands. */
  results: TakeResult[];
  /** `results` as the header fields describe them. */
  reports: PolicyReport[];
  /**
   * Every store call that failed on the way. On a route failing open, each failed take was
   * decided by the limit's local copy instead (and a failed peek described by it).
   */
  failures: StoreFailure[];
}

/**
 * Takes `costs[i]` from limit `i`, in order (each from 1 to the limit's capacity: the server
 * answers 400 or 413 before admission otherwise). When one rejects, the takes already made are
 * refunded (last first), so a rejected request spends nothing anywhere, and every limit is then
 * described as it stands (`peek`). Another request can briefly see a refunded unit as spent: the
 * error is toward rejecting, never toward admitting too much.
 *
 * A limit whose store fails is decided by the route's `failMode`: `'open'` takes from the limit's
 * local copy (`failOpenShare` of it; a cost above the share is charged as the whole share)
 * instead; `'closed'` gives back what was taken and refuses the request. A take that failed is
 * not given back: the store contract says it was not applied (`RedisStore` refuses a take that
 * reaches Redis after its deadline, and gives back one whose answer comes after its timeout), so it
 * holds nothing. A refund that fails is recorded and
 * otherwise ignored: its units stay spent until the store expires them (a concurrency slot on
 * Redis, when its lease does), an error toward rejecting.
 */
export async function admit(
  route: CompiledRoute,
  keys: readonly string[],
  costs: readonly number[],
  now: number,
): Promise<Admission> {
  const { limits } = route;
  const acquisitions: Acquisition[] = [];
  const results: TakeResult[] = [];
  // The declared quota of the limiter that decided: a local copy declares its own share.
  const fields: PolicyField[] = limits.map((limit) => limit.field);
  const failures: StoreFailure[] = [];
  let rejected = -1;
  for (let i = 0; i < limits.length; i++) {
    const limit = limits[i] as CompiledLimit;
    const key = keys[i] as string;
    const options = { cost: costs[i] as number, now };
    let acquisition: Acquisition;
    try {
      acquisition =
        limit.limiter.acquireNow(key, options) ?? (await limit.limiter.acquire(key, options));
    } catch (error) {
      failures.push({ limit: i, operation: 'take', error });
      if (route.failMode === 'closed') {
        await giveBack(acquisitions, failures);
        return {
          allowed: false,
          failedClosed: true,
          acquisitions: [],
          results: [],
          reports: [],
          failures,
        };
      }
      const local = limit.local(route.failOpenShare);
      fields[i] = limit.localField(route.failOpenShare);
      acquisition = await local.acquire(key, localOptions(local, options));
    }
    results.push(acquisition.result);
    if (!acquisition.result.allowed) {
      rejected = i;
      break;
    }
    acquisitions.push(acquisition);
  }
  if (rejected >= 0) {
    await giveBack(acquisitions, failures);
    for (let i = 0; i < limits.length; i++) {
      if (i === rejected) continue;
      const limit = limits[i] as CompiledLimit;
      const key = keys[i] as string;
      const options = { cost: costs[i] as number, now };
      try {
        results[i] = await limit.limiter.peek(key, options);
      } catch (error) {
        failures.push({ limit: i, operation: 'peek', error });
        const local = limit.local(route.failOpenShare);
        fields[i] = limit.localField(route.failOpenShare);
        results[i] = await local.peek(key, localOptions(local, options));
      }
    }
  }
  const reports: PolicyReport[] = [];
  for (let i = 0; i < limits.length; i++) {
    const limit = limits[i] as CompiledLimit;
    const described = report(limit, results[i] as TakeResult, fields[i] as PolicyField);
    if (route.headers === 'github') described.resource = limit.resource;
    else if (route.headers === 'discord') {
      described.resource = limit.bucket;
      described.serverWide = limit.serverWide;
    } else if (limit.partitionOf !== undefined && route.headers === 'ietf') {
      described.partition = limit.partitionOf(keys[i] as string);
    }
    reports.push(described);
  }
  return { allowed: rejected < 0, failedClosed: false, acquisitions, results, reports, failures };
}

/**
 * A request's take on a limit's local copy: a cost read from the request may exceed the copy's
 * share of the limit, and is then charged the whole share (admitted only when the copy is at rest),
 * an error toward admitting bounded by the share.
 */
function localOptions(
  local: { limit: number },
  options: { cost: number; now: number },
): { cost: number; now: number } {
  return options.cost <= local.limit ? options : { ...options, cost: local.limit };
}

/** Refunds `acquisitions`, last first, recording the refunds that fail. */
async function giveBack(acquisitions: Acquisition[], failures: StoreFailure[]): Promise<void> {
  for (let i = acquisitions.length - 1; i >= 0; i--) {
    try {
      await (acquisitions[i] as Acquisition).refund();
    } catch (error) {
      failures.push({ limit: i, operation: 'refund', error });
    }
  }
}

function report(limit: CompiledLimit, result: TakeResult, field: PolicyField): PolicyReport {
  return {
    name: limit.name,
    limit: result.limit,
    remaining: result.remaining,
    resetMs: result.resetMs,
    retryAfterMs: result.retryAfterMs,
    concurrency: limit.concurrency,
    unit: limit.unit,
    field,
  };
}

/** The stats key of a request: its limits' keys, without `global` unless that is all there is. */
export function clientKey(keys: string[], ip: string): string {
  if (keys.length === 0) return `ip:${ip}`;
  if (keys.length === 1) return keys[0] as string;
  const distinct = [...new Set(keys)];
  const specific = distinct.filter((k) => k !== 'global');
  return (specific.length > 0 ? specific : distinct).join(' ');
}

/**
 * One declared policy as the client keeps it, and the check every declared quota makes of it: is
 * there room for a request, or a reset to wait for, or a probe to send. Shared by the declared
 * quota (`quota.ts`, a host's list of policies) and the timed quota (`timed.ts`, one policy).
 *
 * @module
 */
import { GO, type Verdict } from './contract.js';
import type { FillWindowFields } from './fill-window.js';
import { type LateResetFields, lateResetAt } from './late-reset.js';
import { isPaced, paceSpent, type RefillFields, refilledAt, trialWait } from './refill.js';

/**
 * What the client knows about one of the server's policies (and how it refills: `refill.ts`, or
 * without a window, whether its reset runs late: `late-reset.ts`).
 */
export interface LearnedPolicy extends RefillFields, LateResetFields, FillWindowFields {
  /** The policy's key: its name, or `#w<windowMs>` for an unnamed one. */
  key: string;
  /** The server's name for the policy, when it has one. */
  name?: string;
  /** Quota per window (IETF `q`). */
  limit?: number;
  /** Window length, in milliseconds. */
  windowMs?: number;
  /** Unit of the quota (`requests` unless the server says otherwise). */
  unit?: string;
  /** Units that may still be sent before `resetAt` (may go negative: the client is over). */
  remaining?: number;
  /** The server's `remaining` in the report applied last (`quota.ts`: answers overtaken). */
  reported?: number;
  /** Epoch milliseconds at which the server makes more quota available. */
  resetAt?: number;
  /** Requests sent past the reset without a fresh report yet. */
  probes: number;
  /** When the last of those probes is taken as lost, epoch milliseconds. */
  probesUntil?: number;
  /** The server's reset, when it is further than `maxHoldMs` and `resetAt` was capped to that. */
  serverResetAt?: number;
}

/** The IETF unit of a concurrency limit: slots come back when requests end, not with time. */
export const CONCURRENT = 'concurrent-requests';

/**
 * Whether a request that `need`s so many of `p`'s units may go as far as `p` is concerned: room,
 * or the reset to wait for, or (spent, reset passed) a probe when none is out and no other answer
 * is pending. `need` undefined: the request does not say what it costs in `p`'s unit (tokens, for
 * a call that gave a number): it waits only while `p` is spent. A need above `p`'s whole limit can
 * never be met while that limit holds: refused (`cost-too-high`) until the policy's reset; past it
 * the limit is taken as unknown and the request goes as the one probe (a server that raised its
 * limit answers it). `requests`: requests in flight. Shared with the timed quota, whose one policy
 * reads the same.
 */
export function checkPolicy(
  p: LearnedPolicy,
  need: number | undefined,
  now: number,
  requests: number,
): Verdict {
  if (p.remaining === undefined) return GO;
  const policy = p.name ?? p.key;
  if (need !== undefined && p.limit !== undefined && need > p.limit && p.unit !== CONCURRENT) {
    if (p.resetAt !== undefined && now < p.resetAt) {
      return { ok: false, waitMs: undefined, reason: 'cost-too-high', policy };
    }
    // A limit past its reset is no longer known (the server may have raised it): one probe finds
    // out, rather than refusing every call until the host is forgotten.
    if (p.probes > 0 || requests > 0)
      return { ok: false, waitMs: undefined, reason: 'probe', policy };
    return GO;
  }
  if (need === undefined ? p.remaining > 0 : p.remaining >= need) {
    const trial = trialWait(p, need ?? 1, now);
    return trial > 0 ? { ok: false, waitMs: trial, reason: 'learned-limit', policy } : GO;
  }
  if (p.unit === CONCURRENT && requests > 0) {
    // Slots come back when requests in flight end, not with time.
    return { ok: false, waitMs: undefined, reason: 'learned-limit', policy };
  }
  // The declared rate may say units are back before the whole-second reset (`refill.ts`), or
  // without one, the windows seen may say the reset runs late (`late-reset.ts`).
  const refilled = refilledAt(p, need ?? 1) ?? lateResetAt(p);
  // A reset capped at `maxHoldMs` stays the server's word (the caller may refuse to wait it),
  // unless the model says sooner.
  const capped = p.serverResetAt !== undefined && p.resetAt !== undefined;
  if (refilled !== undefined && (!capped || refilled < (p.resetAt as number))) {
    if (now < refilled)
      return { ok: false, waitMs: refilled - now, reason: 'learned-limit', policy };
  } else if (p.resetAt !== undefined && now < p.resetAt) {
    const wait: Verdict = { ok: false, waitMs: p.resetAt - now, reason: 'learned-limit', policy };
    if (p.serverResetAt !== undefined) wait.serverWaitMs = p.serverResetAt - now;
    return wait;
  }
  // A gradual policy is paced: its units come back one by one, whatever is in flight.
  if (isPaced(p)) return GO;
  if (p.probes > 0 || requests > 0) {
    // One probe, sent when no other answer is pending (a pending answer may already tell).
    return { ok: false, waitMs: undefined, reason: 'probe', policy };
  }
  return GO;
}

/**
 * Spends `need` of `p`'s units (nothing when unknown), or counts a probe; whether it probes. `at`:
 * when it is sent, for a paced policy (`refill.ts`), which spends past its estimate instead.
 */
export function spendOrProbe(
  p: LearnedPolicy,
  need: number | undefined,
  expires: number | undefined,
  at?: number,
): boolean {
  if (p.remaining === undefined) return false;
  if (need === undefined ? p.remaining > 0 : p.remaining >= need) {
    p.remaining -= need ?? 0;
    return false;
  }
  if (at !== undefined && need !== undefined && isPaced(p)) {
    p.remaining -= need;
    paceSpent(p, need, at);
    return false;
  }
  p.probes++;
  if (expires !== undefined) p.probesUntil = Math.max(p.probesUntil ?? 0, expires);
  return true;
}

/** Forgets probes out past their time: they no longer hold the policy. */
export function expireProbes(p: LearnedPolicy, now: number): void {
  if (p.probes > 0 && (p.probesUntil === undefined || p.probesUntil <= now)) {
    p.probes = 0;
    delete p.probesUntil;
  }
}

/**
 * The hold after a pushback. A pushback that says when to come back holds the whole host until the
 * server's time (`Retry-After`, else the reset of an exhausted policy; `fallbackHoldMs` for a spent
 * policy that gives no reset), plus a small positive jitter drawn once per hold, so that a fleet told
 * the same instant does not wake at it. Never earlier than the server asked. A pushback with no
 * timing at all (nginx's 429 or 503) holds nothing: the adaptive pace (`pace.ts`) slows down.
 *
 * A hold is recorded for at most `maxHoldMs`, however long the server asked for: past it one probe
 * goes (and the hold is armed again while it is out), so a wrong `Retry-After` (a timestamp sent as
 * seconds) cannot keep the host shut for a year. The server's own end is kept apart (`base`), so a
 * request that cannot wait that long is still refused at once. An answer that is not a pushback, to
 * a request sent after the hold began, ends it: the server accepts again.
 *
 * Publishes the hold's end to the view (`holdUntil`).
 *
 * @module
 */
import type { RateLimitInfo } from '../../headers/types.js';
import { serverWait, type WaitJitter } from '../retry/backoff.js';
import { GO, type RuleModule } from './contract.js';

/** A hold on the host. */
export interface HoldState {
  /** Epoch milliseconds before which nothing is sent, jitter included. */
  until: number;
  /** The server's own end of the hold, before jitter, when it was capped (past `until`). */
  base?: number;
  /** The sequence number when the hold was set: an answer to a later request may end it. */
  seq?: number;
}

/** Configuration of the hold. */
export interface HoldConfig {
  /** Jitter added to every server-given wait. */
  jitter: WaitJitter;
  /** Hold after a pushback whose spent policy gives no reset, in milliseconds. @default 1000 */
  fallbackHoldMs: number;
  /** Longest hold recorded, in milliseconds; past it one probe goes. `undefined`: no cap. */
  maxHoldMs?: number;
}

/**
 * A server wait shorter than this, in milliseconds, is "come back now" (`Retry-After: 0`, `0.001`,
 * a date already past): it would be over before a retry could reach any host but this machine's,
 * so it times nothing. Such a refusal goes through the pace, the breaker and the retry budget like
 * one that gives no time at all.
 */
export const COME_BACK_NOW_MS = 10;

/**
 * The answer's `Retry-After` in milliseconds when it says to wait at all: at least
 * {@link COME_BACK_NOW_MS}; shorter is "come back now", no timing.
 */
export function timedWait(info: RateLimitInfo | undefined): number | undefined {
  const after = info?.retryAfterMs;
  return after !== undefined && after >= COME_BACK_NOW_MS ? after : undefined;
}

/** Whether the answer carries a `Retry-After` that says "come back now" (see {@link COME_BACK_NOW_MS}). */
export function comesBackNow(info: RateLimitInfo | undefined): boolean {
  const after = info?.retryAfterMs;
  return after !== undefined && after < COME_BACK_NOW_MS;
}

/**
 * The server's timing for a pushback, in milliseconds: `Retry-After`, else the reset of an
 * exhausted policy. "Come back now" (`Retry-After: 0` or under {@link COME_BACK_NOW_MS}, a date or
 * a reset already past) is no timing: the server refused now, so now is not when to come back
 * (koa-ratelimit truncates its `Retry-After` to whole seconds and sends 0 in a window's last
 * second, with the exact reset beside it; a window that outlives the reset it announced answers 0
 * again and again). Then the reset is read instead, else the fallback hold for a spent policy; a
 * bare "come back now" holds nothing: the adaptive pace (`pace.ts`) slows down, as for a refusal
 * without any timing.
 */
export function pushbackWait(info: RateLimitInfo | undefined): number | undefined {
  const after = timedWait(info);
  if (after !== undefined) return after;
  const reset = info?.remaining === 0 ? info.resetMs : undefined;
  return reset !== undefined && reset > 0 ? reset : undefined;
}

/** See the module comment. */
export const hold = {
  key: 'hold',
  title: 'hold',
  reasons: [{ reason: 'retry-after', serverTimed: true }],
  configure: (host) => host.learn,
  retryAt: (view) => view.holdUntil,
  kinds: ['attempt'],
  fresh: () => undefined,
  prune(state, _now, _config, view) {
    view.holdUntil = state.until;
    return state;
  },
  check(state, { now }) {
    if (state.until <= now) return GO;
    // Past `until`, a capped hold (`base` still ahead) lets one request through: `commit` makes
    // it the probe and arms the hold again while it is out.
    const serverWaitMs = Math.max(0, (state.base ?? state.until) - now);
    return { ok: false, waitMs: state.until - now, reason: 'retry-after', serverWaitMs };
  },
  commit(state, { now }, _ticket, config, view) {
    // This request is the probe of a capped hold that lapsed (a replayed one was somebody else's).
    if (!view.replaying && state?.base !== undefined && state.base > now && state.until <= now) {
      state.until = now + Math.min(state.base - now, config.maxHoldMs ?? Number.POSITIVE_INFINITY);
      view.holdUntil = state.until;
    }
    return state;
  },
  settle(current, answer, config, view) {
    const { status, now, info } = answer;
    let state = current;
    if (status !== undefined && !view.pushback) {
      // The server accepts again a request sent after the hold began: whatever is left of its
      // wait (a capped hold whose probe this was) is over.
      if (state?.base !== undefined && answer.ticket.seq > (state.seq ?? 0)) {
        state = { until: Math.min(state.until, now) };
      }
    } else if (view.pushback) {
      // The server's time; a spent policy that gives none, a short wait. A refusal with no timing
      // at all holds nothing: the adaptive pace slows down instead.
      const wait =
        pushbackWait(info) ?? (info?.remaining === 0 ? config.fallbackHoldMs : undefined);
      if (wait !== undefined) {
        const held = Math.min(wait, config.maxHoldMs ?? Number.POSITIVE_INFINITY);
        const until = now + serverWait(held, answer.random, config.jitter);
        if (until > (state?.until ?? 0)) state = { until, base: now + wait, seq: view.seq };
      }
    }
    view.holdUntil = state?.until ?? 0;
    return state;
  },
  // A hold whose server end has passed too is over.
  expiresAt: (state) => Math.max(state.until, state.base ?? 0),
} satisfies RuleModule<HoldState, HoldConfig>;

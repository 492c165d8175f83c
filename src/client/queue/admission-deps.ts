/**
 * The contract between a host's admission queue (`admission.ts`) and the rest of the client: what
 * the queue needs from its host (the store's admit and give-back, the cap, the events), and what
 * a request asks it for.
 *
 * @module
 */
import type { Clock } from '../../shared/clock.js';
import type { RequestContext } from '../../shared/errors.js';
import type { Cost } from '../call/cost.js';
import type { MaybePromise } from '../host/store.js';
import type { Ticket, WaitReason } from '../rules/contract.js';
import type { AdmitResult, RuleSet } from '../rules/host-rules.js';
import type { Slots } from './host-slots.js';

/** What the queue needs from its host. */
export interface AdmissionDeps {
  clock: Clock;
  /** Attempts in flight at once, at most, over every line of the host (see {@link Slots}). */
  slots: Slots;
  /** Waiting requests at once, at most, over every line of the host. */
  maxQueue: number;
  /** Longest wait in line, in milliseconds. */
  queueTimeoutMs: number;
  /** Asks the shared state to admit (and record) one attempt at `now`. */
  tryAdmit(
    cost: Cost,
    firstAttempt: boolean,
    now: number,
    flightTtlMs: number | undefined,
  ): MaybePromise<AdmitResult>;
  /**
   * Gives back an admission that was not used (the request left in the meantime). Must not
   * reject; the queue goes on whatever it does.
   */
  giveBack(ticket: Ticket, ctx: RequestContext): MaybePromise<void> | undefined;
  /** A request joined the line. */
  onQueued(ctx: RequestContext, queueLength: number): void;
  /** A request waits, for `reason`; called once per request and reason. */
  onHeld(
    ctx: RequestContext,
    reason: WaitReason,
    waitMs: number | undefined,
    policy?: string,
  ): void;
  /** Counts a waiting request (so the process stays up); returns the function that ends it. */
  keepAlive(): () => void;
  /**
   * The `held` event's bit of each wait reason of the host's rules, and the reasons whose waits the
   * server sets (see `RuleSet` in `rules/host-rules.ts`).
   */
  reasons: Pick<RuleSet, 'heldBits' | 'serverWaits'>;
}

/** What a request asks the queue for. */
export interface AdmissionRequest {
  /** What the attempt costs, per unit. */
  cost: Cost;
  firstAttempt: boolean;
  /**
   * Goes ahead of first attempts (behind the requests with priority already waiting); without it,
   * at the back of the line.
   */
  priority: boolean;
  /** Leaves the line when it aborts. */
  signal: AbortSignal | undefined;
  /** A wait for the server's limit longer than this is refused with `RateLimitError`. */
  maxWaitMs: number;
  ctx: RequestContext;
  /** The clock's time when the request asks, epoch milliseconds (read once by the caller). */
  now?: number;
  /** How long the attempt may stay unanswered before it counts as lost, in milliseconds. */
  flightTtlMs?: number;
}

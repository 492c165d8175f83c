/**
 * Public types of what `stats()` returns: the client's counters, per host, per scope and per
 * learned policy (re-exported by `types.ts` with the client's other public types).
 *
 * @module
 */
import type { CircuitState } from '../rules/breaker.js';

/** What the client knows of one of the server's policies, for `stats()`. */
export interface PolicyStats {
  /** The policy's name (`#w60000` for an unnamed one with a 60 s window). */
  name: string;
  limit?: number;
  windowMs?: number;
  /** Units the client may still send before the reset (its estimate). */
  remaining?: number;
  /** Milliseconds until the server makes more quota available. */
  resetInMs?: number;
}

/** Counts and state of one host. Counters run from the host's first request (or re-creation). */
export interface HostStats {
  origin: string;
  /** The partition these stats are of, when not the host's own (see the `partition` option). */
  partition?: string;
  /** Logical requests started (a request and its retries count once). */
  requests: number;
  /** Attempts sent. */
  attempts: number;
  /** Responses received, whatever their status. */
  responses: number;
  /**
   * Pushbacks received: 429s, and 503s with `Retry-After` (the answers the `rate-limited` event
   * reports).
   */
  rateLimited: number;
  /** Retries made. */
  retries: number;
  /** Requests that waited in the queue. */
  queued: number;
  /** Waits for a limit (learned, held, cold start, client rate). */
  held: number;
  /** Retries refused by the budget. */
  budgetExhausted: number;
  /** Calls refused by the circuit breaker. */
  circuitOpen: number;
  /** Requests that gave up (see the `give-up` event). */
  gaveUp: number;
  /** Store failures that requests survived (see the `store-error` event). */
  storeErrors: number;
  /**
   * Attempts holding a slot now: sent and not answered, or answered with a body still open (see
   * docs/client.md, "When a slot comes back").
   */
  inFlight: number;
  /** Requests waiting in the queue now. */
  queueLength: number;
  /** The circuit breaker's state (`closed` when it is off). */
  circuit: CircuitState;
  /** Epoch milliseconds until which the host is held, 0 when it is not. */
  holdUntil: number;
  /** `cold`: no answer yet; `blind`: answers without rate-limit headers; `declared`. */
  mode: 'cold' | 'blind' | 'declared' | 'off';
  /** The server's policies as the client sees them. */
  policies: PolicyStats[];
  /**
   * The adaptive pace, in requests per second, while the client paces the host after a refusal its
   * headers did not explain (see `rules/pace.ts`); `undefined` when it does not.
   */
  paceRate: number | undefined;
  /** Retries the budget would allow now (`Infinity` when it is off). */
  budgetAvailable: number;
  /**
   * The budgets the host's answers named apart (GitHub's resources, Discord's buckets per
   * channel, IETF partition keys), each with its own state; empty for a host with one budget.
   * The fields above are the host's own: routes of no known scope. See docs/how-it-works.md
   * ("Many budgets per host").
   */
  scopes: ScopeStats[];
}

/** The state of one budget of a host that its answers named (see {@link HostStats.scopes}). */
export interface ScopeStats {
  /**
   * The scope's name: the dialect and the server's name for it (`github:search`,
   * `discord:<bucket>@channels/<id>`, `pk:<partition key>`).
   */
  name: string;
  /** Epoch milliseconds until which the scope is held, 0 when it is not. */
  holdUntil: number;
  /** As {@link HostStats.mode}, for the scope. */
  mode: 'cold' | 'blind' | 'declared' | 'off';
  /** The scope's policies as the client sees them. */
  policies: PolicyStats[];
  /** As {@link HostStats.paceRate}, for the scope. */
  paceRate: number | undefined;
  /** Retries the scope's budget would allow now (`Infinity` when it is off). */
  budgetAvailable: number;
}

/** `stats()` of a client: its hosts, and totals over every host it has seen (evicted ones too). */
export interface ClientStats {
  /** By origin, and by `${origin}#${partition}` for a partition (see the `partition` option). */
  hosts: Record<string, HostStats>;
  totals: Omit<
    HostStats,
    | 'origin'
    | 'partition'
    | 'circuit'
    | 'holdUntil'
    | 'mode'
    | 'policies'
    | 'paceRate'
    | 'budgetAvailable'
    | 'inFlight'
    | 'queueLength'
    | 'scopes'
  >;
}

/**
 * The circuit breaker of one host. Closed, it counts outcomes over a sliding window; it opens when
 * the failure ratio over at least `minRequests` outcomes reaches `failureRatio`, or after
 * `consecutiveFailures` failures in a row. Open, it refuses every call until its cool-down has
 * passed; then it half-opens and lets `halfOpenProbes` requests through: if they all succeed it
 * closes, and the first failure opens it again for twice as long (up to `maxCoolDownMs`). The
 * cool-down starts over at `coolDownMs` when the breaker closes: a short outage is probed early and
 * left quickly, a long one is probed less and less often (a probe per cool-down, 1, 2, 4... 30 s
 * apart by default). A `coolDownMs` of 0 probes at once, every time.
 *
 * What counts as a failure is the caller's call (the answer's `health`): the pipeline counts
 * transient network errors, attempt timeouts and 500, 502, 503, 504 as failures; any other response
 * as a success (a 429 is the server protecting itself); any other error (an abort, a request fetch
 * refused to send, a permanent DNS failure) as no verdict at all, which gives a probe slot back.
 *
 * Pure functions over plain JSON state with time passed in, as the rules of `registry.ts`, but not
 * one of them, for three reasons. Its state is per process: each process judges the host by what it
 * sees, so it is not shared through the store (the rules' state is one host state, one store
 * transaction per step). It answers before the queue: an open circuit fails the call at once
 * instead of a place in line behind the host's concurrency cap, and a call that waited in line
 * looks again (the circuit may have opened meanwhile). And it judges the answer's health, which
 * the pipeline knows only after the rules have settled it (an abort, a network error, the attempt
 * timeout). {@link CircuitBreaker} holds one state and reports transitions; the call's run asks it
 * at those three points (`call-run.ts`).
 *
 * @module
 */
import { clear, count, newCounts, type SlidingCounts, total } from './sliding-counts.js';

/** Where the breaker stands. */
export type CircuitState = 'closed' | 'open' | 'half-open';

/** Breaker parameters. */
export interface BreakerConfig {
  /** Failure share over the window that opens the breaker, in (0, 1]. @default 0.5 */
  failureRatio: number;
  /** Fewest outcomes in the window before the ratio is judged. @default 10 */
  minRequests: number;
  /** Length of the sliding window, in milliseconds. @default 10_000 */
  windowMs: number;
  /** Failures in a row that open the breaker whatever the ratio. @default 5 */
  consecutiveFailures: number;
  /** How long the breaker stays open before its first probe, in milliseconds. @default 1_000 */
  coolDownMs: number;
  /** Longest cool-down, in milliseconds (never below `coolDownMs`). @default 30_000 */
  maxCoolDownMs: number;
  /** Probes let through when half-open; all must succeed to close. @default 1 */
  halfOpenProbes: number;
}

const SERIES = ['successes', 'failures'] as const;

/** The breaker's state. */
export interface BreakerState {
  state: CircuitState;
  /** When it last opened, epoch milliseconds. */
  openedAt: number;
  /** The cool-down it is in (or would start with), in milliseconds. */
  coolDownMs: number;
  /** Failures in a row, while closed. */
  consecutive: number;
  /** Probes out, and probes that succeeded, while half-open. */
  probes: number;
  probeSuccesses: number;
  /** Outcomes over the window, while closed. */
  outcomes: SlidingCounts<(typeof SERIES)[number]>;
}

/** The answer of {@link CircuitBreaker.acquire}. */
export type BreakerPermit = { allowed: true; probe: boolean } | { allowed: false; retryAt: number };

const CLOSED: BreakerPermit = Object.freeze({ allowed: true, probe: false });
const PROBE: BreakerPermit = Object.freeze({ allowed: true, probe: true });

/** A closed breaker. */
export function newBreaker(config: BreakerConfig): BreakerState {
  return {
    state: 'closed',
    openedAt: 0,
    coolDownMs: config.coolDownMs,
    consecutive: 0,
    probes: 0,
    probeSuccesses: 0,
    outcomes: newCounts(SERIES, config.windowMs, 0),
  };
}

/**
 * The state at `now`: an open breaker whose cool-down has passed half-opens, and so does one
 * opened after `now` (the clock stepped back: how long it has been open is unknown, and a probe
 * tells more than waiting out the step would).
 */
export function breakerAt(b: BreakerState, now: number): CircuitState {
  if (b.state === 'open' && (now >= b.openedAt + b.coolDownMs || now < b.openedAt)) {
    b.state = 'half-open';
    b.probes = 0;
    b.probeSuccesses = 0;
  }
  return b.state;
}

/** The cool-down after a failed probe: twice the current one, within the bounds. */
function nextCoolDownMs(b: BreakerState, config: BreakerConfig): number {
  return Math.min(Math.max(config.coolDownMs, config.maxCoolDownMs), b.coolDownMs * 2);
}

/**
 * When a refused call may try again, epoch milliseconds: the end of the cool-down while open;
 * while probes decide, the cool-down a failed probe would start, from now, at worst; `now` when
 * closed.
 */
export function breakerRetryAt(b: BreakerState, now: number, config: BreakerConfig): number {
  const state = breakerAt(b, now);
  if (state === 'open') return b.openedAt + b.coolDownMs;
  return state === 'half-open' ? now + nextCoolDownMs(b, config) : now;
}

function open(b: BreakerState, now: number): void {
  b.state = 'open';
  b.openedAt = now;
  b.probes = 0;
  b.probeSuccesses = 0;
}

/** Records an outcome: `failure`, or a success; `probe` when the request was a probe. */
function record(b: BreakerState, failure: boolean, probe: boolean, now: number, c: BreakerConfig) {
  if (probe) {
    if (b.state !== 'half-open') return;
    if (failure) {
      b.coolDownMs = nextCoolDownMs(b, c);
      open(b, now);
      return;
    }
    b.probes = Math.max(0, b.probes - 1);
    if (++b.probeSuccesses >= c.halfOpenProbes) {
      // Closed, with a clean slate and the first cool-down.
      b.state = 'closed';
      b.coolDownMs = c.coolDownMs;
      b.consecutive = 0;
      clear(b.outcomes, SERIES);
    }
    return;
  }
  // Late outcomes of requests sent before it opened change nothing.
  if (b.state !== 'closed') return;
  count(b.outcomes, SERIES, failure ? 'failures' : 'successes', c.windowMs, now);
  if (!failure) {
    b.consecutive = 0;
    return;
  }
  b.consecutive++;
  const failed = total(b.outcomes, 'failures');
  const all = failed + total(b.outcomes, 'successes');
  const tripped = all >= c.minRequests && failed / all >= c.failureRatio;
  if (b.consecutive >= c.consecutiveFailures || tripped) open(b, now);
}

/** Asks to send at `now`: allowed (a probe when half-open), or refused until `retryAt`. */
export function acquire(b: BreakerState, now: number, config: BreakerConfig): BreakerPermit {
  const state = breakerAt(b, now);
  if (state === 'closed') return CLOSED;
  if (state === 'half-open' && b.probes < config.halfOpenProbes) {
    b.probes++;
    return PROBE;
  }
  return { allowed: false, retryAt: breakerRetryAt(b, now, config) };
}

/** Takes an outcome in: `health` as `answer.ts` says, `undefined` for no verdict (a probe back). */
export function settleBreaker(
  b: BreakerState,
  health: 'ok' | 'failure' | undefined,
  probe: boolean,
  now: number,
  config: BreakerConfig,
): void {
  if (health !== undefined) record(b, health === 'failure', probe, now, config);
  else if (probe && b.state === 'half-open') b.probes = Math.max(0, b.probes - 1);
}

/** One breaker's state and parameters, reporting every transition to `onChange`. */
export class CircuitBreaker {
  readonly #b: BreakerState;

  readonly #config: BreakerConfig;
  readonly #onChange: ((from: CircuitState, to: CircuitState, now: number) => void) | undefined;

  /**
   * @param config the parameters, already validated.
   * @param onChange called on every transition, with the time it happened.
   */
  constructor(
    config: BreakerConfig,
    onChange?: (from: CircuitState, to: CircuitState, now: number) => void,
  ) {
    this.#config = config;
    this.#onChange = onChange;
    this.#b = newBreaker(config);
  }

  /** The cool-down it is in (open or half-open), or would start with if it opened now. */
  get currentCoolDownMs(): number {
    return this.#b.coolDownMs;
  }

  /** True while closed (no time needed: only an open breaker changes state with time). */
  get closed(): boolean {
    return this.#b.state === 'closed';
  }

  /** The state at `now` (an open breaker whose cool-down has passed reads as half-open). */
  stateAt(now: number): CircuitState {
    return this.#reported(this.#b.state, now, breakerAt(this.#b, now));
  }

  /** See {@link acquire}. */
  acquire(now: number): BreakerPermit {
    return this.#reported(this.#b.state, now, acquire(this.#b, now, this.#config));
  }

  /**
   * After a wait in line: `undefined` when the request goes as it was admitted (a probe already,
   * or the circuit still closed at `now`), else a new permit (the circuit opened meanwhile: it may
   * still go as a probe).
   */
  recheck(now: number, probe: boolean): BreakerPermit | undefined {
    if (probe || this.#b.state === 'closed' || this.stateAt(now) === 'closed') return undefined;
    return this.acquire(now);
  }

  /** While open at `now`: when a refused call may try again, epoch milliseconds; else `undefined`. */
  openUntil(now: number): number | undefined {
    return this.stateAt(now) === 'open' ? this.retryAt(now) : undefined;
  }

  /** When a refused call may try again, in epoch milliseconds (see {@link breakerRetryAt}). */
  retryAt(now: number): number {
    return this.#reported(this.#b.state, now, breakerRetryAt(this.#b, now, this.#config));
  }

  /** Records an outcome of a request admitted by {@link acquire} (see {@link settleBreaker}). */
  record(health: 'ok' | 'failure' | undefined, now: number, probe: boolean): void {
    this.#reported(this.#b.state, now, settleBreaker(this.#b, health, probe, now, this.#config));
  }

  /** Records a success. */
  success(now: number, probe: boolean): void {
    this.record('ok', now, probe);
  }

  /** Records a failure. */
  failure(now: number, probe: boolean): void {
    this.record('failure', now, probe);
  }

  /** Gives a probe slot back (no verdict: no transition, so no time needed). */
  release(probe: boolean, now = 0): void {
    this.record(undefined, now, probe);
  }

  /**
   * Reports the transition from `from` to the state now, if any, and returns `result`: `from` is
   * read before the step passed as `result` runs ([hot-path.md](../../../docs/hot-path.md)).
   */
  #reported<T>(from: CircuitState, now: number, result: T): T {
    if (this.#b.state !== from) this.#onChange?.(from, this.#b.state, now);
    return result;
  }
}

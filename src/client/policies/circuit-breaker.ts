/**
 * The circuit breaker of one host. Closed, it counts outcomes over a sliding window; it opens when
 * the failure ratio over at least `minRequests` requests reaches `failureRatio`, or after
 * `consecutiveFailures` failures in a row. Open, it refuses every call until its cool-down has
 * passed; then it half-opens and lets `halfOpenProbes` requests through: if they all succeed it
 * closes, and the first failure opens it again for twice as long (up to `maxCoolDownMs`). The
 * cool-down starts over at `coolDownMs` when the breaker closes: a short outage is probed early
 * and left quickly, a long one is probed less and less often (a probe per cool-down, 1, 2, 4...
 * 30 s apart by default). A `coolDownMs` of 0 probes at once, every time.
 *
 * What counts as a failure is the caller's call. The pipeline counts transient network errors,
 * attempt timeouts and 500, 502, 503, 504; any other response is a success (a 429 is the server
 * protecting itself), and any other error (an abort, a request fetch refused to send, a permanent
 * DNS failure) is no verdict at all: a probe slot is given back with {@link CircuitBreaker.release}.
 * Time is passed in; the breaker reads no clock. Its state is per process: each process judges the
 * host by what it sees.
 *
 * @module
 */

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
  /**
   * Longest cool-down, in milliseconds: each failed probe doubles the cool-down up to this (never
   * below `coolDownMs`). @default 30_000
   */
  maxCoolDownMs: number;
  /** Probes let through when half-open; all must succeed to close. @default 1 */
  halfOpenProbes: number;
}

/** The answer of {@link CircuitBreaker.acquire}. */
export type BreakerPermit = { allowed: true; probe: boolean } | { allowed: false; retryAt: number };

const SLOTS = 10;
const CLOSED: BreakerPermit = Object.freeze({ allowed: true, probe: false });
const PROBE: BreakerPermit = Object.freeze({ allowed: true, probe: true });

/** A circuit breaker; see the module comment. */
export class CircuitBreaker {
  private state: CircuitState = 'closed';
  private openedAt = 0;
  /** The current cool-down, in milliseconds. */
  private coolDownMs: number;
  private consecutive = 0;
  private probes = 0;
  private probeSuccesses = 0;
  private slot = 0;
  private readonly successes = new Array<number>(SLOTS).fill(0);
  private readonly failures = new Array<number>(SLOTS).fill(0);

  /**
   * @param config the parameters, already validated.
   * @param onChange called on every transition, with the time it happened.
   */
  constructor(
    private readonly config: BreakerConfig,
    private readonly onChange?: (from: CircuitState, to: CircuitState, now: number) => void,
  ) {
    this.coolDownMs = config.coolDownMs;
  }

  /**
   * The cool-down the breaker is in (open or half-open), or would start with if it opened now
   * (closed: `coolDownMs`), in milliseconds.
   */
  get currentCoolDownMs(): number {
    return this.coolDownMs;
  }

  /** True while closed (no time needed: only an open breaker changes state with time). */
  get closed(): boolean {
    return this.state === 'closed';
  }

  /** The state at `now` (an open breaker whose cool-down has passed reads as half-open). */
  stateAt(now: number): CircuitState {
    if (this.state === 'open' && now >= this.openedAt + this.coolDownMs) {
      this.move('half-open', now);
      this.probes = 0;
      this.probeSuccesses = 0;
    }
    return this.state;
  }

  /**
   * Asks to send a request. Closed: allowed. Half-open: allowed as a probe while fewer than
   * `halfOpenProbes` are out. Otherwise refused, with the epoch milliseconds at which to try again
   * (the end of the cool-down; while probes decide, one (doubled) cool-down from now at worst).
   */
  acquire(now: number): BreakerPermit {
    const state = this.stateAt(now);
    if (state === 'closed') return CLOSED;
    if (state === 'half-open' && this.probes < this.config.halfOpenProbes) {
      this.probes++;
      return PROBE;
    }
    return { allowed: false, retryAt: this.retryAt(now) };
  }

  /**
   * When a refused call may try again, in epoch milliseconds: the end of the cool-down while open;
   * while probes decide, the cool-down a failed probe would start, from now, at worst; `now` when
   * closed.
   */
  retryAt(now: number): number {
    const state = this.stateAt(now);
    if (state === 'open') return this.openedAt + this.coolDownMs;
    return state === 'half-open' ? now + this.nextCoolDownMs() : now;
  }

  /** The cool-down after a failed probe: twice the current one, within the bounds. */
  private nextCoolDownMs(): number {
    const max = Math.max(this.config.coolDownMs, this.config.maxCoolDownMs);
    return Math.min(max, this.coolDownMs * 2);
  }

  /** Records a success of a request admitted by {@link acquire}. */
  success(now: number, probe: boolean): void {
    if (probe) {
      if (this.state !== 'half-open') return;
      this.probes = Math.max(0, this.probes - 1);
      if (++this.probeSuccesses >= this.config.halfOpenProbes) this.close(now);
      return;
    }
    if (this.state !== 'closed') return;
    this.consecutive = 0;
    const index = this.advance(now);
    this.successes[index] = (this.successes[index] ?? 0) + 1;
  }

  /** Records a failure of a request admitted by {@link acquire}. */
  failure(now: number, probe: boolean): void {
    if (probe) {
      if (this.state === 'half-open') {
        this.coolDownMs = this.nextCoolDownMs();
        this.open(now);
      }
      return;
    }
    if (this.state !== 'closed') return;
    this.consecutive++;
    const index = this.advance(now);
    this.failures[index] = (this.failures[index] ?? 0) + 1;
    if (this.consecutive >= this.config.consecutiveFailures || this.ratioTripped()) this.open(now);
  }

  /** Gives a probe slot back when the request ended with no verdict (aborted, refused later). */
  release(probe: boolean): void {
    if (probe && this.state === 'half-open') this.probes = Math.max(0, this.probes - 1);
  }

  private ratioTripped(): boolean {
    let ok = 0;
    let failed = 0;
    for (let i = 0; i < SLOTS; i++) {
      ok += this.successes[i] ?? 0;
      failed += this.failures[i] ?? 0;
    }
    const total = ok + failed;
    return total >= this.config.minRequests && failed / total >= this.config.failureRatio;
  }

  private advance(now: number): number {
    const current = Math.floor(now / (this.config.windowMs / SLOTS));
    if (current > this.slot) {
      const steps = Math.min(SLOTS, current - this.slot);
      for (let i = 1; i <= steps; i++) {
        const index = (this.slot + i) % SLOTS;
        this.successes[index] = 0;
        this.failures[index] = 0;
      }
      this.slot = current;
    }
    return this.slot % SLOTS;
  }

  private open(now: number): void {
    this.openedAt = now;
    this.probes = 0;
    this.probeSuccesses = 0;
    this.move('open', now);
  }

  private close(now: number): void {
    this.coolDownMs = this.config.coolDownMs;
    this.consecutive = 0;
    this.successes.fill(0);
    this.failures.fill(0);
    this.move('closed', now);
  }

  private move(to: CircuitState, now: number): void {
    const from = this.state;
    this.state = to;
    if (from !== to) this.onChange?.(from, to, now);
  }
}

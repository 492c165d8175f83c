/**
 * One call of the runner under way: its timeout, its reply or error, a reply after the timeout,
 * and one retry after "Function not found".
 *
 * @module
 */
import type { Wait } from './deadlines.js';
import type { LuaScript } from './lua/index.js';

/** How one call runs, besides its script and arguments. */
export interface RunOptions {
  /**
   * Called with the reply of a call that Redis answered after its caller was told it timed out:
   * Redis ran it, and the caller acted as if it had not (a take to give back).
   */
  onLateReply?: (reply: unknown) => void;
  /**
   * A call made on the side (giving back a take whose answer came late): sent even while Redis is
   * thought to be down (it just answered), and neither counted in `health()` nor able to start or
   * end an outage.
   */
  background?: boolean;
  /**
   * Reads the reply of a call answered in time: the call resolves with what it returns (or
   * rejects with what it throws) instead of the reply, with no promise of the caller's own.
   */
  decode?(reply: unknown): unknown;
}

/**
 * What a call needs of the runner that made it (`ScriptRunner`, declared here so that the two
 * modules do not import each other).
 */
export interface CallRunner {
  /** The call again after `FCALL` failed, or `undefined` when the error is about something else. */
  recover(
    error: unknown,
    script: LuaScript,
    keys: string[],
    args: string[],
  ): Promise<unknown> | undefined;
  /** Ends a call that got a reply in time. */
  succeeded(probe: boolean): void;
  /** Ends a call that failed or timed out; returns the error to reject it with. */
  failed(operation: string, cause: unknown, probe: boolean): Error;
}

/** What a call that timed out is rejected with, before the runner turns it into an error. */
export const TIMED_OUT = Symbol('timed out');

/**
 * One call under way: its timeout (it is its own {@link Wait} in the runner's `Deadlines`), its
 * reply or error, a reply after the timeout. Methods rather than closures: a call allocates this
 * object and one promise executor.
 */
export class Call implements Wait {
  /** When the call times out (set by `Deadlines.enqueue`). */
  at = 0;
  /** Whether the call settled (or timed out): a reply after that is late. */
  done = false;
  /** What to send again after "Function not found" (once). */
  retry: { script: LuaScript; keys: string[]; args: string[] } | undefined;

  constructor(
    readonly runner: CallRunner,
    readonly operation: string,
    readonly probe: boolean,
    readonly options: RunOptions,
    readonly resolve: (reply: unknown) => void,
    readonly reject: (error: unknown) => void,
  ) {}

  async await(reply: Promise<unknown>): Promise<void> {
    let value: unknown;
    try {
      value = await reply;
    } catch (error) {
      if (this.done) return;
      const retry = this.retry;
      if (retry !== undefined) {
        this.retry = undefined;
        const again = this.runner.recover(error, retry.script, retry.keys, retry.args);
        if (again !== undefined) return this.await(again);
      }
      this.done = true;
      this.reject(this.runner.failed(this.operation, error, this.probe));
      return;
    }
    if (this.done) {
      late(value, this.options);
      return;
    }
    this.done = true;
    this.runner.succeeded(this.probe);
    const options = this.options;
    if (options.decode === undefined) {
      this.resolve(value);
      return;
    }
    // The caller's reading of the reply, in this promise rather than in one of its own.
    let decided: unknown;
    try {
      decided = options.decode(value);
    } catch (error) {
      this.reject(error);
      return;
    }
    this.resolve(decided);
  }

  /** The timeout: called by {@link Deadlines} when the call is not done in time. */
  expire(): void {
    this.reject(this.runner.failed(this.operation, TIMED_OUT, this.probe));
  }
}

/** Hands the reply of a call that timed out to `onLateReply` (a take to give back). */
function late(reply: unknown, options: RunOptions): void {
  if (options.onLateReply === undefined) return;
  try {
    options.onLateReply(reply);
  } catch (error) {
    process.emitWarning(`RedisStore: handling a late reply threw: ${String(error)}`);
  }
}

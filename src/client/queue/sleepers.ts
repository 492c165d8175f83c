/**
 * The calls of one host sleeping between attempts (a backoff), each under an abort scope: the
 * caller's signal ends a sleep early, and so does the host closing, which wakes them all.
 *
 * @module
 */
import type { Clock } from '../../shared/clock.js';
import type { RequestContext } from '../../shared/errors.js';
import { AbortScope } from '../call/signals.js';
import type { KeepAlive } from './keep-alive.js';

/** See the module comment. */
export class Sleepers {
  readonly #scopes = new Map<AbortScope, RequestContext>();

  readonly #clock: Clock;
  readonly #keepAlive: KeepAlive;
  constructor(clock: Clock, keepAlive: KeepAlive) {
    this.#clock = clock;
    this.#keepAlive = keepAlive;
  }

  /** Calls sleeping now. */
  get size(): number {
    return this.#scopes.size;
  }

  /**
   * Sleeps `ms` milliseconds on the clock, keeping the process up meanwhile; rejects with the
   * signal's reason when it aborts, or with what {@link wakeAll} says.
   */
  async sleep(ms: number, signal: AbortSignal | undefined, ctx: RequestContext): Promise<void> {
    if (ms <= 0 && !signal?.aborted) return;
    const scope = new AbortScope(signal);
    this.#scopes.set(scope, ctx);
    const release = this.#keepAlive.acquire();
    try {
      await this.#clock.sleep(ms, scope.signal);
    } finally {
      release();
      this.#scopes.delete(scope);
      scope.dispose(false);
    }
  }

  /** Ends every sleep now, each rejecting with `error(ctx)`. */
  wakeAll(error: (ctx: RequestContext) => unknown): void {
    for (const [scope, ctx] of this.#scopes) scope.abort(error(ctx));
  }
}

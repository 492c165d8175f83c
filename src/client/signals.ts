/**
 * Abort scopes: an `AbortController` that follows a parent signal and may time out on the injected
 * clock, with one `dispose()` that removes every listener and timer it set. The client uses one for
 * a whole call (the caller's signal and the overall timeout) and one per attempt (the call's
 * signal and the attempt timeout). A scope is only made when there is something to follow.
 *
 * @module
 */
import { abortReason, type Clock } from '../clock.js';

const noop = () => {};

/** See the module comment. */
export class AbortScope {
  private readonly controller = new AbortController();
  private readonly cleanups: (() => void)[] = [];
  private unlink: (() => void) | undefined;

  /** Follows `parent`: aborts with its reason when it aborts (at once if it already has). */
  constructor(parent?: AbortSignal) {
    if (!parent) return;
    if (parent.aborted) {
      this.controller.abort(abortReason(parent));
      return;
    }
    const onAbort = () => this.controller.abort(abortReason(parent));
    parent.addEventListener('abort', onAbort, { once: true });
    this.unlink = () => parent.removeEventListener('abort', onAbort);
  }

  /** The scope's signal. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Aborts the scope with `reason()` after `ms` milliseconds on `clock` (nothing when infinite). */
  timeout(clock: Clock, ms: number, reason: () => unknown): this {
    if (!Number.isFinite(ms) || this.controller.signal.aborted) return this;
    const stop = new AbortController();
    clock.sleep(ms, stop.signal).then(() => this.controller.abort(reason()), noop);
    this.cleanups.push(() => stop.abort());
    return this;
  }

  /** Aborts the scope now with `reason`. */
  abort(reason: unknown): void {
    this.controller.abort(reason);
  }

  /**
   * Removes the timers the scope set, and unless `keepParent`, its listener on the parent signal.
   * Keep the parent when the scope's signal still guards something (a response body being read):
   * the caller's abort must still reach it. Does not abort the scope.
   */
  dispose(keepParent = false): void {
    for (const cleanup of this.cleanups) cleanup();
    this.cleanups.length = 0;
    if (!keepParent) this.unlink?.();
    this.unlink = undefined;
  }
}

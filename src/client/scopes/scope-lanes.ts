/**
 * The scopes of one host pipeline, each a lane of its own: a line in the admission queue and a
 * state of its own in the store (learned policies, holds, pace), over the parts the host shares
 * (the concurrency cap, the breaker, the sleepers, the report). The host's own lane runs the
 * routes of no known scope; a lane per scope is made when a call of that scope first comes, and
 * at most {@link MAX_SCOPES} are kept: past it the least recently used idle one is dropped, and
 * when every one is busy the call goes through the host's own lane.
 *
 * @module
 */
import type { HostParts } from '../host/host-parts.js';

/** Scope lanes kept per host pipeline at once (the host's own lane not counted). */
export const MAX_SCOPES = 64;

/** Whether a lane has a call under way: in its line, holding a slot, or between two attempts. */
export function laneBusy(lane: HostParts): boolean {
  return lane.between > 0 || lane.admission.busy;
}

/** Keeps the lanes of one host: see the module comment. */
export class ScopeLanes {
  /** By scope name, least recently used first. */
  readonly #lanes = new Map<string, HostParts>();

  /**
   * @param own the host's own lane.
   * @param make makes the lane of a scope.
   * @param drop ends a lane that is dropped (idle: nothing waits in it, nothing is in flight).
   */
  constructor(
    readonly own: HostParts,
    readonly make: (scope: string) => HostParts,
    readonly drop: (lane: HostParts) => void,
  ) {}

  /** Lanes of scopes kept. */
  get size(): number {
    return this.#lanes.size;
  }

  /** The lane of `scope` (made if needed), or the host's own when no lane can be kept. */
  get(scope: string): HostParts {
    const lanes = this.#lanes;
    let lane = lanes.get(scope);
    if (lane !== undefined) {
      // Most recently used last: the first idle one is the one to drop.
      lanes.delete(scope);
      lanes.set(scope, lane);
      return lane;
    }
    if (lanes.size >= MAX_SCOPES && !this.#dropOne()) return this.own;
    lane = this.make(scope);
    lanes.set(scope, lane);
    return lane;
  }

  /** Every lane, the host's own first. */
  *all(): IterableIterator<HostParts> {
    yield this.own;
    yield* this.#lanes.values();
  }

  /** Whether a lane has a call under way (see {@link laneBusy}). */
  get busy(): boolean {
    for (const lane of this.all()) if (laneBusy(lane)) return true;
    return false;
  }

  /** Drops the least recently used idle lane; `false` when every lane is busy. */
  #dropOne(): boolean {
    for (const [scope, lane] of this.#lanes) {
      if (laneBusy(lane)) continue;
      this.#lanes.delete(scope);
      this.drop(lane);
      return true;
    }
    return false;
  }
}

/**
 * Abort scopes: an `AbortController` that follows a parent signal and may time out on the injected
 * clock, with one `dispose()` that removes the timers it set. The client uses one for a whole call
 * (the caller's signal and the overall timeout) and one per attempt (the call's signal and the
 * attempt timeout). A scope is only made when there is something to follow.
 *
 * **Following a signal costs the parent one listener, whatever the number of followers.** A
 * caller may pass one long-lived signal (a shutdown signal) to every request; one listener per
 * request on it would grow without bound (and trip Node's `MaxListenersExceededWarning`), since a
 * scope must stay linked while the response body is read, which may end long after the call
 * returned, or never. So every signal that is followed gets a single listener, shared by its
 * followers, which it holds weakly (`WeakRef`): a follower that nothing else references any more
 * (the fetch and its body are done with it) drops out by itself, and the listener goes when the
 * last one does. A scope disposed without `keepParent` unlinks at once. `AbortSignal.any` would do
 * the linking, but Node 20 keeps every signal it ever made from a long-lived one.
 *
 * @module
 */
import { abortReason, type Clock } from '../../shared/clock.js';

const noop = () => {};

/** The one listener on a followed signal, and its followers. */
interface Hub {
  followers: Set<Ref>;
  /** Size of `followers` at which dead references are swept out next. */
  sweepAt: number;
  onAbort: () => void;
}

/** What a follower's signal keeps alive: its controller, and the signal it follows. */
interface Follower {
  controller: AbortController;
  parent: AbortSignal;
}

type Ref = { deref(): AbortSignal | undefined };

const hubs = new WeakMap<AbortSignal, Hub>();
/** Keyed by the follower's signal: alive exactly as long as something can still observe it. */
const followers = new WeakMap<AbortSignal, Follower>();

const weak: (signal: AbortSignal) => Ref =
  typeof WeakRef === 'function'
    ? (signal) => new WeakRef(signal)
    : (signal) => ({ deref: () => signal });

const finalizer =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<{ parent: AbortSignal; ref: Ref }>(({ parent, ref }) =>
        unfollow(parent, ref),
      )
    : undefined;

function follow(parent: AbortSignal, controller: AbortController): Ref {
  let hub = hubs.get(parent);
  if (!hub) {
    const created: Hub = { followers: new Set(), sweepAt: 16, onAbort: noop };
    created.onAbort = () => {
      hubs.delete(parent);
      const reason = abortReason(parent);
      for (const ref of created.followers) {
        const signal = ref.deref();
        if (signal) followers.get(signal)?.controller.abort(reason);
      }
      created.followers.clear();
    };
    parent.addEventListener('abort', created.onAbort, { once: true });
    hubs.set(parent, created);
    hub = created;
  }
  const signal = controller.signal;
  const ref = weak(signal);
  followers.set(signal, { controller, parent });
  hub.followers.add(ref);
  finalizer?.register(signal, { parent, ref }, ref);
  if (hub.followers.size >= hub.sweepAt) sweep(hub);
  return ref;
}

/** Drops the followers that are gone; amortised O(1) per follow. */
function sweep(hub: Hub): void {
  for (const ref of hub.followers) if (ref.deref() === undefined) hub.followers.delete(ref);
  hub.sweepAt = Math.max(16, hub.followers.size * 2);
}

function unfollow(parent: AbortSignal, ref: Ref): void {
  const hub = hubs.get(parent);
  if (!hub) return;
  hub.followers.delete(ref);
  if (hub.followers.size === 0) {
    parent.removeEventListener('abort', hub.onAbort);
    hubs.delete(parent);
  }
}

/** See the module comment. */
export class AbortScope {
  readonly #controller = new AbortController();
  readonly #cleanups: (() => void)[] = [];
  #parent: AbortSignal | undefined;
  #ref: Ref | undefined;

  /** Follows `parent`: aborts with its reason when it aborts (at once if it already has). */
  constructor(parent?: AbortSignal) {
    if (parent) this.#follow(parent);
  }

  /** Follows `parent` from now on: aborted at once if it is, else held weakly (see `follow`). */
  #follow(parent: AbortSignal): void {
    if (parent.aborted) {
      this.#controller.abort(abortReason(parent));
      return;
    }
    this.#parent = parent;
    this.#ref = follow(parent, this.#controller);
  }

  /** The scope's signal. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Aborts the scope with `reason()` after `ms` milliseconds on `clock` (nothing when infinite). */
  timeout(clock: Clock, ms: number, reason: () => unknown): this {
    if (!Number.isFinite(ms) || this.#controller.signal.aborted) return this;
    const stop = new AbortController();
    clock.sleep(ms, stop.signal).then(() => this.#controller.abort(reason()), noop);
    this.#cleanups.push(() => stop.abort());
    return this;
  }

  /** Aborts the scope now with `reason`. */
  abort(reason: unknown): void {
    this.#controller.abort(reason);
  }

  /**
   * Follows `parent` instead of the signal it followed so far (at once aborted if `parent` is),
   * and removes the timers it set: what the scope guards from now on (a response body being read)
   * answers to `parent` alone. The link is held weakly, as with `dispose(true)`.
   */
  relink(parent: AbortSignal | undefined): void {
    this.dispose();
    if (parent) this.#follow(parent);
  }

  /**
   * Removes the timers the scope set, and unless `keepParent`, its link to the parent signal.
   * Keep the parent when the scope's signal still guards something (a response body being read):
   * the caller's abort must still reach it. The link is then held weakly and goes when nothing
   * references the scope's signal any more (see the module comment). Does not abort the scope.
   */
  dispose(keepParent = false): void {
    for (const cleanup of this.#cleanups) cleanup();
    this.#cleanups.length = 0;
    if (!keepParent && this.#parent && this.#ref) {
      finalizer?.unregister(this.#ref);
      unfollow(this.#parent, this.#ref);
    }
    this.#parent = undefined;
    this.#ref = undefined;
  }
}

/** The subscribers of each signal watched by {@link onAbort}, and its one listener. */
const watched = new WeakMap<AbortSignal, { callbacks: Set<() => void>; listener: () => void }>();

/**
 * Calls `callback` once when `signal` aborts (on the next microtask if it already has). However many callbacks watch one signal, the signal
 * gets one listener (removed with the last callback), so a long-lived signal shared by thousands
 * of waiting calls does not collect a listener per call. Returns the function that stops watching
 * (idempotent). A callback that throws is reported as an uncaught error; the others still run.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    // Already aborted: the event will not come again. Called on the next microtask, so that the
    // caller has finished setting up what the callback undoes.
    let live = true;
    queueMicrotask(() => {
      if (live) callback();
    });
    return () => {
      live = false;
    };
  }
  let entry = watched.get(signal);
  if (entry === undefined) {
    const callbacks = new Set<() => void>();
    const listener = () => {
      watched.delete(signal);
      for (const cb of [...callbacks]) {
        try {
          cb();
        } catch (error) {
          queueMicrotask(() => {
            throw error;
          });
        }
      }
      callbacks.clear();
    };
    signal.addEventListener('abort', listener, { once: true });
    entry = { callbacks, listener };
    watched.set(signal, entry);
  }
  const { callbacks, listener } = entry;
  // A callback may be added twice; each subscription is its own.
  const own = () => callback();
  callbacks.add(own);
  return () => {
    if (!callbacks.delete(own) || callbacks.size > 0) return;
    signal.removeEventListener('abort', listener);
    if (watched.get(signal)?.listener === listener) watched.delete(signal);
  };
}

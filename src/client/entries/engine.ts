/**
 * What `LimitedClient`, `wrapFetch` and the undici interceptor run (through `entry.ts`): the
 * resolved options, the state store, the events, the host registry, and `dispatch`, which finds
 * the host's pipeline and runs a call through it.
 *
 * @module
 */
import { type Clock, systemClock } from '../../shared/clock.js';
import { ClientClosedError, type RequestContext } from '../../shared/errors.js';
import { Emitter } from '../../shared/events.js';
import { invalidOption } from '../../shared/option-checks.js';
import { mergeHeaders, prepareRequest, withoutCredentials } from '../call/request.js';
import { RequestView } from '../call/request-view.js';
import type { PipelineShared } from '../host/host-parts.js';
import { HostPipeline } from '../host/pipeline.js';
import { HostRegistry } from '../host/registry.js';
import { StateTime } from '../host/state-time.js';
import { addCounters, type Counters, newCounters } from '../host/stats.js';
import { MemoryStateStore, type StateStore } from '../host/store.js';
import { checkCallOptions } from '../options/check.js';
import { ResolvedOptions } from '../options/resolve.js';
import { MAX_PARTITION_LENGTH } from '../options/schema.js';
import type { LimitedClientOptions } from '../options/types.js';
import { KeepAlive } from '../queue/keep-alive.js';
import type { AnyRuleModule } from '../rules/registry.js';
import type { ClientEvents, ClientStats, HostStats, LimitedRequestInit } from '../types.js';

/** Where a URL's host is, parsed once. */
export interface Target {
  url: string;
  origin: string;
  hostname: string;
  host: string;
}

/** Parses an absolute URL into a {@link Target}; throws a `TypeError` (as fetch does) if invalid. */
export function parseTarget(url: string | URL): Target {
  const u = typeof url === 'string' ? new URL(url) : url;
  return { url: u.href, origin: u.origin, hostname: u.hostname, host: u.host };
}

/** URL strings kept parsed by {@link TargetCache}, at most. */
const TARGETS_KEPT = 256;

/**
 * {@link parseTarget} for strings, remembering the last few hundred it parsed: code that calls one
 * URL over and over (a health check, a polling loop, a benchmark) parses it once. Past the bound
 * the cache starts over, so it costs a bounded amount of memory whatever the URLs.
 */
export class TargetCache {
  readonly #targets = new Map<string, Target>();

  /** The target of `url`; throws a `TypeError` (as fetch does) if it is not an absolute URL. */
  get(url: string): Target {
    let target = this.#targets.get(url);
    if (target === undefined) {
      target = parseTarget(url);
      if (this.#targets.size >= TARGETS_KEPT) this.#targets.clear();
      this.#targets.set(url, target);
    }
    return target;
  }
}

/** See the module comment. */
export class Engine {
  readonly events = new Emitter<ClientEvents>();
  readonly options: ResolvedOptions;
  readonly clock: Clock;
  readonly store: StateStore;
  readonly #ownsStore: boolean;
  readonly #registry: HostRegistry<HostPipeline>;
  readonly #shared: PipelineShared;
  readonly #evicted: Counters = newCounters();
  #closed = false;
  /** The fetch given (`wrapFetch`'s argument, or `options.fetch`), when one was. */
  readonly #given: typeof fetch | undefined;
  /** The global fetch when this engine was made: what it calls when the global one is its own. */
  readonly #original = globalThis.fetch;

  /**
   * @param fetchImpl the fetch to call; `undefined` looks up `globalThis.fetch` at each call.
   * @param rules the rules every host runs, in order (the registry's: `rules/registry.ts`).
   * @throws InvalidOptionError for a bad option.
   */
  constructor(
    options: LimitedClientOptions | undefined,
    fetchImpl: typeof fetch | undefined,
    rules?: readonly AnyRuleModule[],
  ) {
    this.options = new ResolvedOptions(options, rules);
    this.clock = this.options.clock ?? systemClock;
    this.#ownsStore = this.options.store === undefined;
    this.store = this.options.store ?? new MemoryStateStore({ clock: this.clock });
    const impl = fetchImpl ?? this.options.fetch;
    this.#given = impl;
    this.#shared = {
      clock: this.clock,
      store: this.store,
      time: new StateTime(this.clock, this.store),
      events: this.events,
      fetch: impl ?? globalFetch(),
      keepAlive: new KeepAlive(),
    };
    this.#registry = new HostRegistry(
      this.clock,
      this.options.maxHosts,
      this.options.hostIdleMs,
      (_key, pipeline) => {
        addCounters(this.#evicted, pipeline.counters);
        pipeline.close(closedError);
        // The store's keys of the host and its scopes: what it keeps of them can go.
        for (const stored of pipeline.storeKeys()) this.store.forget?.(stored);
      },
    );
  }

  /**
   * Runs a call: finds (or creates) the host's pipeline and hands it the prepared request.
   * @param send the fetch this call's attempts go through instead of the engine's own (the undici
   *   interceptor sends each attempt through the dispatcher it was composed onto).
   */
  dispatch(
    target: Target,
    input: Request | undefined,
    init: LimitedRequestInit | undefined,
    send?: typeof fetch,
  ) {
    if (this.#closed) {
      return Promise.reject(
        closedError({
          method: init?.method ?? input?.method,
          url: withoutCredentials(target.url),
        }),
      );
    }
    if (send === undefined) {
      const inner = this.#innerPipeline();
      if (inner !== undefined && !passing.has(this))
        return this.#passThrough(inner, target, input, init);
    }
    let partition: string | undefined;
    let view: RequestView | undefined;
    try {
      checkCallOptions(init, target.url, input);
      if (init?.partition === undefined && this.options.partition !== undefined) {
        view = new RequestView(target.url, input, init, this.options.headers);
      }
      partition = this.#partitionOf(target, input, init, view);
    } catch (error) {
      return Promise.reject(error);
    }
    const now = this.clock.now();
    const key = partition === undefined ? target.origin : `${target.origin}#${partition}`;
    const pipeline = this.#registry.get(
      key,
      () =>
        new HostPipeline(
          target.origin,
          this.options.forHost(target.hostname, target.host),
          this.#shared,
          partition,
        ),
      now,
    );
    let prepared: ReturnType<typeof prepareRequest>;
    try {
      prepared = prepareRequest(
        target.url,
        input,
        init,
        pipeline.policy,
        this.options.headers,
        view,
      );
    } catch (error) {
      return Promise.reject(error);
    }
    return pipeline.execute(prepared, init, now, send);
  }

  /**
   * The pipeline of this package that this engine's calls would go through (another
   * `wrapFetch`, a `LimitedClient`'s `fetch`, installed as the global fetch or given), if any:
   * running both would multiply retries and turn an answer into the inner breaker's refusal.
   */
  #innerPipeline(): typeof fetch | undefined {
    let next = this.#given;
    if (next === undefined) {
      next = globalThis.fetch;
      // The global fetch is this engine's own wrapper: it calls the fetch from before it.
      if (markOf(next) === this) next = this.#original;
    }
    const mark = markOf(next);
    return mark !== undefined && mark !== this ? next : undefined;
  }

  /**
   * Hands a call to the inner pipeline as it is (its own options, `cost`, `retry` and the others,
   * go with it), with this engine's `headers` under the call's own: its base URL and JSON body are
   * already applied. This engine's own pipeline options, events and stats are not used.
   */
  #passThrough(
    inner: typeof fetch,
    target: Target,
    input: Request | undefined,
    init: LimitedRequestInit | undefined,
  ): Promise<Response> {
    const defaults = this.options.headers;
    const own = init?.headers ?? input?.headers;
    const call = defaults === undefined ? init : { ...init, headers: mergeHeaders(defaults, own) };
    passing.add(this);
    try {
      return inner(input ?? target.url, call);
    } catch (error) {
      return Promise.reject(error);
    } finally {
      passing.delete(this);
    }
  }

  /**
   * The call's partition: its own `partition` (checked with the call's options), else the option's
   * function, given `view`; `undefined` for the host's own. Throws an `InvalidOptionError` when the
   * function returns anything but a string of at most {@link MAX_PARTITION_LENGTH} characters or
   * `undefined`, and whatever the function throws.
   */
  #partitionOf(
    target: Target,
    input: Request | undefined,
    init: LimitedRequestInit | undefined,
    view: RequestView | undefined,
  ): string | undefined {
    const fn = this.options.partition;
    let value: unknown = init?.partition;
    if (value === undefined) {
      if (fn === undefined || view === undefined) return undefined;
      value = fn(view);
    }
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string' || value.length > MAX_PARTITION_LENGTH) {
      throw invalidOption(
        'partition',
        `must return a string of at most ${MAX_PARTITION_LENGTH} characters, or undefined`,
        value,
        {
          method: (init?.method ?? input?.method ?? 'GET').toUpperCase(),
          url: withoutCredentials(target.url),
        },
      );
    }
    return value;
  }

  /** Statistics per host, and totals over every host seen. */
  stats(): ClientStats {
    // Keyed by origin and partition, which come from outside: no prototype to write through.
    const hosts: Record<string, HostStats> = Object.create(null);
    const totals = addCounters(newCounters(), this.#evicted);
    for (const [key, pipeline] of this.#registry) {
      const s = pipeline.stats();
      hosts[key] = s;
      addCounters(totals, pipeline.counters);
    }
    return { hosts, totals };
  }

  /**
   * Refuses new calls, drops waiting ones and pending retries (see `LimitedClient.close`),
   * releases the store if it is ours.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const [, pipeline] of this.#registry) pipeline.close(closedError);
    this.events.clear();
    if (this.#ownsStore) await this.store.close?.();
  }
}

/**
 * Marks the fetch functions this package makes (`wrapFetch`, `LimitedClient.fetch`), with the
 * engine behind them: `Symbol.for`, so that a copy of the package (ESM beside CJS, two versions)
 * sees another's mark.
 */
const WRAPPED = Symbol.for('limited-client.wrapped-fetch');

/**
 * Engines handing a call to an inner pipeline right now (it enters the inner one synchronously):
 * one met again is a cycle (`a` wraps the global fetch, which is `b`, which wraps `a`), and runs
 * its own pipeline instead.
 */
const passing = new Set<Engine>();

/**
 * Marks `fn` as one of this package's fetch functions, run by `engine` (see {@link globalFetch}
 * and `Engine.#innerPipeline`): a non-enumerable property, invisible to the caller.
 */
export function markWrapped<F extends object>(fn: F, engine: Engine): F {
  Object.defineProperty(fn, WRAPPED, { value: engine });
  return fn;
}

/** The engine that marked `fn` (`true` from an older copy of the package), or `undefined`. */
function markOf(fn: unknown): unknown {
  if (typeof fn !== 'function') return undefined;
  const mark = (fn as unknown as Record<symbol, unknown>)[WRAPPED];
  return mark === undefined || mark === null || mark === false ? undefined : mark;
}

function isWrapped(fn: unknown): boolean {
  return markOf(fn) !== undefined;
}

/**
 * The fetch a client without one calls: `globalThis.fetch` as it is at each call (a fetch patched
 * later, by msw say, is the one used), except when that is one of this package's own wrappers,
 * installed with `globalThis.fetch = wrapFetch()`: calling it would call this client again, for
 * ever. Then the fetch that was global when this client was made.
 */
function globalFetch(): typeof fetch {
  const original = globalThis.fetch;
  return (input, init) => {
    const current = globalThis.fetch;
    const fetch = isWrapped(current) ? original : current;
    if (typeof fetch !== 'function') {
      return Promise.reject(new TypeError('no fetch: pass one to wrapFetch or in options.fetch'));
    }
    return fetch(input, init);
  };
}

function closedError(ctx: RequestContext): ClientClosedError {
  return new ClientClosedError(ctx);
}

/**
 * The one way in of `LimitedClient`, `wrapFetch` and the undici interceptor: how a call's input (a
 * URL string, a `URL`, a `Request`, undici's dispatch options) becomes a {@link Target} and reaches
 * the {@link Engine}, and the `stats`/`on`/`off`/`close` surface over it. Each entry keeps only
 * its own: the client's verbs, fetch's signature, undici's handlers.
 *
 * @module
 */

import type { Listener } from '../../shared/events.js';
import type { ClientEvents, ClientStats, LimitedRequestInit } from '../types.js';
import { type Engine, parseTarget, type Target, TargetCache } from './engine.js';

/** A string that starts with a scheme: not resolved against the base URL. */
const ABSOLUTE = /^[a-z][a-z0-9+.-]*:/i;

/** What an entry answers besides its calls: the engine's stats, events and close. */
export interface EntrySurface {
  stats(): ClientStats;
  on<K extends keyof ClientEvents>(name: K, listener: Listener<ClientEvents[K]>): () => void;
  off<K extends keyof ClientEvents>(name: K, listener: Listener<ClientEvents[K]>): void;
  close(): Promise<void>;
}

/** The part of undici's `Dispatcher.DispatchOptions` that names the request's URL. */
export interface DispatchUrl {
  origin?: string | URL | null;
  path: string;
  method: string;
}

/** See the module comment. */
export class Entry implements EntrySurface {
  readonly engine: Engine;
  /** Where relative paths go (with a trailing slash, no query or fragment); `undefined`: nowhere. */
  readonly #base: URL | undefined;
  readonly #baseTarget: Target | undefined;
  readonly #targets = new TargetCache();
  readonly #closing = new AbortController();

  /**
   * @param base where relative paths go (`LimitedClient`'s base URL; its query and fragment are
   *   dropped); without one, a relative URL is a `TypeError`, as fetch makes it.
   */
  constructor(engine: Engine, base?: URL) {
    this.engine = engine;
    if (base !== undefined) {
      // A query or fragment on the base would end up in the middle of every URL: drop them.
      base.search = '';
      base.hash = '';
      if (!base.pathname.endsWith('/')) base.pathname += '/';
      this.#baseTarget = parseTarget(base);
    }
    this.#base = base;
  }

  /** Aborted when the entry closes: stops what waits before the pipeline (a body being read). */
  get closing(): AbortSignal {
    return this.#closing.signal;
  }

  /**
   * Runs a fetch-style call: `input` is a `Request`, a `URL` or a URL string (relative to the
   * base, if any). Never throws: a bad input is a rejected promise, as fetch makes it.
   */
  call(input: RequestInfo | URL, init: LimitedRequestInit | undefined): Promise<Response> {
    try {
      if (typeof input === 'object' && 'url' in input && !(input instanceof URL)) {
        return this.engine.dispatch(this.#targets.get(input.url), input, init);
      }
      const target = input instanceof URL ? parseTarget(input) : this.#ofString(String(input));
      return this.engine.dispatch(target, undefined, init);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  stats(): ClientStats {
    return this.engine.stats();
  }

  on<K extends keyof ClientEvents>(name: K, listener: Listener<ClientEvents[K]>): () => void {
    return this.engine.events.on(name, listener);
  }

  off<K extends keyof ClientEvents>(name: K, listener: Listener<ClientEvents[K]>): void {
    this.engine.events.off(name, listener);
  }

  close(): Promise<void> {
    this.#closing.abort();
    return this.engine.close();
  }

  #ofString(url: string): Target {
    const base = this.#base;
    if (base === undefined || ABSOLUTE.test(url)) return this.#targets.get(url);
    const relative = url.startsWith('/') ? url.slice(1) : url;
    if (relative === '' || relative.startsWith('?') || relative.startsWith('#')) {
      return parseTarget(new URL(relative, base));
    }
    return { ...(this.#baseTarget as Target), url: base.href + relative };
  }
}

/**
 * The targets of undici's dispatch options, apart from {@link Entry} so that the core bundle,
 * which has no interceptor, leaves them out. It first compares the request's origin and path with
 * the last ones: a run of requests to one URL then neither joins the two strings nor hashes the
 * result (the cache's lookup was 4% of the interceptor's CPU; docs/hot-path.md).
 */
export class DispatchTargets {
  readonly #cache = new TargetCache();
  #origin: string | undefined;
  #path: string | undefined;
  #last: Target | undefined;

  /**
   * The target of undici's dispatch options: its `origin` and `path` (a `query` object is not
   * part of it).
   * @throws TypeError without an origin (a `Client` or `Pool` composed with the interceptor must be
   *   given one in each request's options) or for a URL that does not parse.
   */
  get(opts: DispatchUrl): Target {
    const origin = opts.origin;
    if (origin === undefined || origin === null || origin === '') {
      throw new TypeError(
        `limited-client/undici: ${opts.method} ${opts.path}: the request has no origin (compose onto an Agent, or give each request its origin)`,
      );
    }
    const base = typeof origin === 'string' ? origin : origin.origin;
    const path = opts.path;
    if (base === this.#origin && path === this.#path) return this.#last as Target;
    const target = this.#cache.get((base.endsWith('/') ? base.slice(0, -1) : base) + path);
    this.#origin = base;
    this.#path = path;
    this.#last = target;
    return target;
  }
}

/** Gives `fn` the surface of `entry` (`wrapFetch`'s function, the interceptor); returns `fn`. */
export function withSurface<F extends EntrySurface>(fn: F, entry: Entry): F {
  const surface: EntrySurface = fn;
  surface.stats = () => entry.stats();
  surface.on = (name, listener) => entry.on(name, listener);
  surface.off = (name, listener) => entry.off(name, listener);
  surface.close = () => entry.close();
  return fn;
}

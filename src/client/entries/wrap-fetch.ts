/**
 * `wrapFetch`: the same pipeline behind the signature of fetch.
 *
 * @module
 */

import type { Listener } from '../../shared/events.js';
import { invalidOption } from '../../shared/option-checks.js';
import type { LimitedClientOptions } from '../options/types.js';
import type { ClientEvents, ClientStats, LimitedRequestInit } from '../types.js';
import { Engine, markWrapped } from './engine.js';
import { Entry, withSurface } from './entry.js';

/** A fetch function with the client's pipeline, plus its `stats`, events and `close`. */
export interface WrappedFetch {
  (input: RequestInfo | URL, init?: LimitedRequestInit): Promise<Response>;
  /** Counts and state per host, and totals. */
  stats(): ClientStats;
  /** Listens to a pipeline event; returns a function that removes the listener. */
  on<K extends keyof ClientEvents>(name: K, listener: Listener<ClientEvents[K]>): () => void;
  /** Removes a listener. */
  off<K extends keyof ClientEvents>(name: K, listener: Listener<ClientEvents[K]>): void;
  /** Refuses new calls, drops waiting ones and starts no retry (see `LimitedClient.close`). */
  close(): Promise<void>;
}

/**
 * Wraps a fetch so that every call goes through the pipeline of its host (keyed by origin, and by
 * partition when the `partition` option splits a host): the server's learned limits, the client's
 * own limits, bounded retries with a budget and a breaker, idempotency keys on writes. Existing
 * code swaps one identifier.
 *
 * Relative URLs are not accepted (there is no base URL): pass absolute ones, as Node's fetch
 * requires anyway.
 *
 * When the fetch it calls is itself a pipeline of this package (another `wrapFetch`, a
 * `LimitedClient`'s `fetch`, given or installed as the global fetch), every call passes through to
 * that pipeline rather than running both (see docs/client.md).
 *
 * @param fetchImpl the fetch to wrap (undici's, a test double...).
 *   @default globalThis.fetch, looked up at each call; when that is this very wrapper (after
 *   `globalThis.fetch = wrapFetch()`), the global fetch of the moment this wrapper was made
 * @param options see {@link LimitedClientOptions} (`options.fetch` is ignored here).
 * @throws InvalidOptionError naming the option, the value and what is allowed; for a first
 *   argument that is not a function (options given first: `wrapFetch(undefined, options)` wraps
 *   the global fetch).
 * @example
 * const fetch = wrapFetch(globalThis.fetch, { hosts: { 'api.openai.com': { concurrency: 4 } } });
 * const response = await fetch('https://api.openai.com/v1/models');
 */
export function wrapFetch(fetchImpl?: typeof fetch, options?: LimitedClientOptions): WrappedFetch {
  if (fetchImpl !== undefined && typeof fetchImpl !== 'function') {
    throw invalidOption(
      'fetch',
      'must be a fetch function: the signature is wrapFetch(fetch?, options?), so options go second (wrapFetch(undefined, options) wraps the global fetch)',
      fetchImpl,
    );
  }
  const engine = new Engine(options, fetchImpl);
  const entry = new Entry(engine);
  const wrapped = ((input: RequestInfo | URL, init?: LimitedRequestInit) =>
    entry.call(input, init)) as WrappedFetch;
  withSurface(wrapped, entry);
  return markWrapped(wrapped, engine);
}

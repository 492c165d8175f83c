/**
 * `limited(options)`: the client's pipeline as an undici interceptor.
 *
 * @module
 */
import type { Dispatcher } from 'undici';
import { Engine, type Target } from '../client/entries/engine.js';
import { DispatchTargets, Entry, withSurface } from '../client/entries/entry.js';
import type { LimitedClientOptions } from '../client/options/types.js';
import type { ClientEvents, ClientStats } from '../client/types.js';
import type { Listener } from '../shared/events.js';
import { invalidOption } from '../shared/option-checks.js';
import { InterceptedCall } from './call.js';

/**
 * An interceptor for undici's `dispatcher.compose()`, with the state of its pipelines: the same
 * `stats()`, events and `close()` as `LimitedClient`.
 */
export interface LimitedInterceptor {
  /** What `compose()` calls: wraps a dispatch in the pipeline. */
  (dispatch: Dispatcher.Dispatch): Dispatcher.Dispatch;
  /** Counts and state per host, and totals (see `ClientStats`). */
  stats(): ClientStats;
  /** Listens to a pipeline event; returns a function that removes the listener. */
  on<K extends keyof ClientEvents>(name: K, listener: Listener<ClientEvents[K]>): () => void;
  /** Removes a listener added with {@link on}. */
  off<K extends keyof ClientEvents>(name: K, listener: Listener<ClientEvents[K]>): void;
  /**
   * Refuses new requests and rejects the waiting ones with `ClientClosedError` (see
   * `LimitedClient.close`); releases the store if the interceptor made it. The dispatcher it was
   * composed onto stays open: close that yourself.
   */
  close(): Promise<void>;
}

/**
 * The client's pipeline for every request of an undici dispatcher: the server's learned limits,
 * the client's own, bounded retries with a budget and a breaker, idempotency keys on writes, per
 * origin (and partition), with the options of `LimitedClient` (except `fetch`, unused here).
 * Requests wait in the pipeline before they reach the dispatcher; each attempt goes through the
 * dispatch it was composed onto; the answer the call ends with streams to the caller as it
 * arrives (its pause, resume and abort reach the socket).
 *
 * Not limited, passed straight through: upgrades (WebSocket) and `CONNECT`.
 *
 * @param options see `LimitedClientOptions` (but `fetch`: every request goes through the
 *   dispatcher); every default is in `DEFAULTS`.
 * @throws InvalidOptionError naming the option, the value and what is allowed (`fetch` included).
 * @example
 * import { Agent, setGlobalDispatcher } from 'undici';
 * import { limited } from 'limited-client/undici';
 *
 * const interceptor = limited({ hosts: { 'api.openai.com': { concurrency: 4 } } });
 * setGlobalDispatcher(new Agent().compose(interceptor)); // fetch, undici.request, SDKs on them
 * interceptor.on('retry', (e) => console.log(e.url, e.delayMs));
 */
export function limited(options?: LimitedClientOptions): LimitedInterceptor {
  if (options?.fetch !== undefined) {
    throw invalidOption(
      'fetch',
      'is not an option of limited(): every request goes through the dispatcher the interceptor is composed onto',
      options.fetch,
    );
  }
  const entry = new Entry(new Engine(options, unused));
  const engine = entry.engine;
  const closing = entry.closing;
  const targets = new DispatchTargets();
  const interceptor = ((dispatch: Dispatcher.Dispatch): Dispatcher.Dispatch => {
    if (typeof dispatch !== 'function') {
      throw new TypeError(
        'limited-client/undici: an interceptor takes a dispatch function: new Agent().compose(limited())',
      );
    }
    return function limitedDispatch(opts, handler) {
      checkHandler(handler);
      if (opts.upgrade || opts.method === 'CONNECT') return dispatch(opts, handler);
      const call = new InterceptedCall(handler, dispatch, opts);
      let target: Target;
      try {
        target = targets.get(opts);
      } catch (error) {
        call.fail(error);
        return true;
      }
      call.run(engine, target, closing);
      return true;
    };
  }) as LimitedInterceptor;
  return withSurface(interceptor, entry);
}

/** The engine's own fetch: never called, every call brings its own (the dispatcher's). */
const unused = (() =>
  Promise.reject(new TypeError('limited-client/undici: no dispatch'))) as typeof fetch;

const LEGACY_CALLBACKS = ['onConnect', 'onHeaders', 'onData', 'onComplete', 'onError'] as const;

/**
 * Refuses what is not a handler, and a handler of undici's legacy API (`onConnect`, `onHeaders`,
 * ...) given directly: undici 7's `compose()` converts those before they reach an interceptor;
 * undici 8's does not, and its `Dispatcher1Wrapper` does (Node's built-in fetch given a
 * `dispatcher` sends such handlers).
 */
function checkHandler(handler: unknown): asserts handler is Dispatcher.DispatchHandler {
  if (typeof handler !== 'object' || handler === null) {
    throw new TypeError('limited-client/undici: handler must be an object');
  }
  const h = handler as Record<string, unknown>;
  if (
    typeof h.onRequestStart !== 'function' &&
    typeof h.onResponseStart !== 'function' &&
    LEGACY_CALLBACKS.some((name) => typeof h[name] === 'function')
  ) {
    throw new TypeError(
      'limited-client/undici: a handler of the legacy API (onConnect, onHeaders, onData...) must be converted first: undici 7 converts it in dispatcher.compose(); with undici 8, wrap the dispatcher in new Dispatcher1Wrapper(dispatcher) (as the dispatcher option of the fetch built into Node needs)',
    );
  }
}

/**
 * `LimitedClient`: a base URL, verbs, and the pipeline of every host it talks to.
 *
 * @module
 */

import type { Listener } from '../../shared/events.js';
import { invalidOption } from '../../shared/option-checks.js';
import { jsonInit } from '../call/request.js';
import type { LimitedClientOptions } from '../options/types.js';
import type { ClientEvents, ClientStats, LimitedRequestInit } from '../types.js';
import { Engine, markWrapped } from './engine.js';
import { Entry } from './entry.js';

/**
 * A fetch client that stays under the server's limits. Every request goes through the pipeline of
 * its host (keyed by origin, and by partition when the `partition` option splits a host): circuit
 * breaker, admission (concurrency, queue, the server's learned limits, the client's own rate),
 * fetch, and bounded retries. Calls resolve to a standard
 * `Response` whatever its status, as fetch does; they reject where fetch would (a network error,
 * an abort) or where the client refused to send, with a typed error.
 *
 * @example
 * const github = new LimitedClient('https://api.github.com', {
 *   headers: { authorization: `Bearer ${token}` },
 *   concurrency: 8,
 * });
 * const response = await github.get('/repos/nodejs/node');
 * const created = await github.post('/repos/me/app/issues', { title: 'Hello' }); // JSON, keyed
 */
export class LimitedClient {
  /**
   * A fetch-compatible function that uses this client's state: absolute URLs go to their host,
   * relative ones are resolved against the base URL.
   */
  readonly fetch: (input: RequestInfo | URL, init?: LimitedRequestInit) => Promise<Response>;
  readonly #entry: Entry;

  /**
   * @param baseUrl where relative paths go: `new LimitedClient('https://api.example.com/v1')`
   *   sends `get('users')` and `get('/users')` both to `https://api.example.com/v1/users`. A query
   *   or fragment on the base URL is ignored; put queries on the paths.
   * @param options see {@link LimitedClientOptions}; every default is in `DEFAULTS`.
   * @throws InvalidOptionError naming the option, the value and what is allowed; for `baseUrl`,
   *   anything but an absolute `http:` or `https:` URL (`'api.github.com'` and `'localhost:8080'`
   *   lack the scheme).
   */
  constructor(baseUrl: string | URL, options?: LimitedClientOptions) {
    const base = httpUrl(baseUrl);
    const engine = new Engine(options, undefined);
    this.#entry = new Entry(engine, base);
    this.fetch = markWrapped((input, init) => this.request(input, init), engine);
  }

  /** Sends a GET. @param path relative to the base URL, or absolute. */
  get(path: string, init?: LimitedRequestInit): Promise<Response> {
    return this.#send('GET', path, init);
  }

  /** Sends a HEAD. */
  head(path: string, init?: LimitedRequestInit): Promise<Response> {
    return this.#send('HEAD', path, init);
  }

  /** Sends a DELETE. */
  delete(path: string, init?: LimitedRequestInit): Promise<Response> {
    return this.#send('DELETE', path, init);
  }

  /**
   * Sends a POST. `body` may be anything fetch sends (a string, bytes, a Blob, FormData, a stream)
   * or any other value, which is sent as JSON (serialised once, resent as is on retries). Gets an
   * `Idempotency-Key` unless the caller set one or turned keys off.
   */
  post(path: string, body?: unknown, init?: LimitedRequestInit): Promise<Response> {
    return this.#send('POST', path, jsonInit(body, init));
  }

  /** Sends a PUT; `body` as for {@link post}. */
  put(path: string, body?: unknown, init?: LimitedRequestInit): Promise<Response> {
    return this.#send('PUT', path, jsonInit(body, init));
  }

  /** Sends a PATCH; `body` as for {@link post}. Gets an `Idempotency-Key` as POST does. */
  patch(path: string, body?: unknown, init?: LimitedRequestInit): Promise<Response> {
    return this.#send('PATCH', path, jsonInit(body, init));
  }

  /**
   * Sends any request: `input` is a path (relative to the base URL), an absolute URL, or a
   * `Request`. The method is `init.method`, else the Request's, else GET.
   */
  request(input: RequestInfo | URL, init?: LimitedRequestInit): Promise<Response> {
    return this.#entry.call(input, init);
  }

  /** Counts and state per host, and totals. See {@link ClientStats}. */
  stats(): ClientStats {
    return this.#entry.stats();
  }

  /**
   * Listens to a pipeline event. Returns a function that removes the listener. Listeners run
   * synchronously on the pipeline's path: keep them quick.
   * @example const stop = client.on('retry', (e) => console.log(e.url, e.delayMs)); stop();
   */
  on<K extends keyof ClientEvents>(name: K, listener: Listener<ClientEvents[K]>): () => void {
    return this.#entry.on(name, listener);
  }

  /** Removes a listener added with {@link on}. */
  off<K extends keyof ClientEvents>(name: K, listener: Listener<ClientEvents[K]>): void {
    this.#entry.off(name, listener);
  }

  /**
   * Closes the client. New calls reject with `ClientClosedError`, and so does every call that is
   * waiting: in a host's queue, in a hold, or in a backoff between retries. No attempt starts after
   * close. An attempt already sent is not aborted (abort it with its signal): its call resolves to
   * its response when that is final, and rejects with `ClientClosedError` when it would need
   * another attempt. Releases the store if the client made it.
   */
  close(): Promise<void> {
    return this.#entry.close();
  }

  #send(method: string, path: string, init: LimitedRequestInit | undefined) {
    return this.request(path, { ...init, method });
  }
}

/** `value` as an absolute http: or https: URL, else an `InvalidOptionError` naming `baseUrl`. */
function httpUrl(value: unknown): URL {
  let url: URL | undefined;
  try {
    url = new URL(String(value));
  } catch {
    // Reported below, with the value.
  }
  // `'localhost:8080'` parses, with `localhost:` as its scheme: every call would then fail.
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    throw invalidOption(
      'baseUrl',
      'must be an absolute http: or https: URL, such as "https://api.example.com"',
      value,
    );
  }
  return url;
}

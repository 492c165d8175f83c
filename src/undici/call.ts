/**
 * One dispatch through the interceptor: the call the pipeline runs, and the controller its caller
 * (undici's `request`, `fetch`, an SDK) holds.
 *
 * ```
 * caller's handler ◄── onRequestStart (at once: an abort reaches the call while it waits)
 *        │
 *        ▼
 * engine.dispatch ─► pipeline (breaker, queue, limits, retries) ─► send: one attempt through the
 *        │                                                        dispatcher (AttemptExchange)
 *        ▼
 * the attempt the call ends with ─► onResponseStart, onResponseData..., onResponseEnd
 *                                   (or onResponseError: a refusal, a network error, an abort)
 * ```
 *
 * The caller hears exactly one end: `onResponseEnd` or `onResponseError`. Its `pause()` and
 * `resume()` reach the dispatcher of the attempt being delivered; its `abort(reason)` stops the
 * call wherever it is (waiting for a limit, an attempt on the wire, a body arriving) and the
 * caller hears `onResponseError` with that reason.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { SETTLES_ON_ABORT } from '../client/call/attempt.js';
import { withoutCredentials } from '../client/call/request.js';
import { AbortScope, onAbort } from '../client/call/signals.js';
import type { Engine, Target } from '../client/entries/engine.js';
import type { LimitedRequestInit } from '../client/types.js';
import { ClientClosedError, TimeoutError } from '../shared/errors.js';
import { AttemptResponse } from './attempt-response.js';
import { CallSignal } from './call-signal.js';
import { AttemptExchange, asError, type BodySink } from './exchange.js';
import { requestHeadersInit } from './headers.js';
import { headersOf, type RawHeaders } from './raw-headers.js';
import { isSmallStream, MAX_REPLAYABLE_BODY_BYTES, readBody } from './request-body.js';

/** See the module comment. */
export class InterceptedCall implements Dispatcher.DispatchController, BodySink {
  #paused = false;
  #aborted = false;
  #reason: Error | null = null;
  /** The caller heard its end. */
  #done = false;
  /** Aborts the pipeline's call when the caller aborts. */
  readonly #signal = new CallSignal();
  /** The last attempt sent. */
  #current: AttemptExchange | undefined;
  /** The attempt whose answer goes to the caller. */
  #delivering: AttemptExchange | undefined;
  /** The headers handed to the pipeline: an attempt that gets them back sends the caller's own. */
  #pipelineHeaders: HeadersInit | undefined;

  readonly #handler: Dispatcher.DispatchHandler;
  /** The caller's handler of the legacy API, when `#handler` is undici 7's wrapper of one. */
  readonly #legacy: LegacyHandler | undefined;
  readonly #dispatch: Dispatcher.Dispatch;
  #opts: Dispatcher.DispatchOptions;
  constructor(
    handler: Dispatcher.DispatchHandler,
    dispatch: Dispatcher.Dispatch,
    opts: Dispatcher.DispatchOptions,
  ) {
    this.#handler = handler;
    this.#legacy = legacyUnder(handler);
    this.#dispatch = dispatch;
    this.#opts = opts;
  }

  /**
   * The delivered answer's headers as undici's raw list, where the dispatcher gave them (a caller
   * of undici 8 asking for raw headers reads them on its controller, as undici's own carry them).
   */
  rawHeaders: Buffer[] | null = null;

  /** Whether the caller aborted. */
  get aborted(): boolean {
    return this.#aborted;
  }

  /** Whether the caller paused: nothing is handed to it until it resumes. */
  get paused(): boolean {
    return this.#paused;
  }

  /** What the caller aborted with, as an `Error`; `null` until it does. */
  get reason(): Error | null {
    return this.#reason;
  }

  /**
   * Runs the call through `engine`'s pipeline for `target`; the caller's handler hears of it.
   * @param closing aborts when the interceptor closes (what stops a request body being read).
   */
  run(engine: Engine, target: Target, closing: AbortSignal): void {
    try {
      this.#handler.onRequestStart?.(this, undefined);
    } catch (error) {
      this.fail(error);
      return;
    }
    if (this.#aborted) return;
    let headers: HeadersInit | undefined;
    try {
      headers = requestHeadersInit(this.#opts.headers);
    } catch (error) {
      this.fail(error);
      return;
    }
    const body = this.#opts.body;
    if (isSmallStream(body, this.#opts.headers)) {
      this.#readFirst(engine, target, headers, body, closing);
    } else {
      this.#start(engine, target, headers, undefined);
    }
  }

  /**
   * A stream of known small length is read first, so that a retry can send it again: within the
   * call's `timeoutMs` (the pipeline gets what is left of it), and stopped by the caller's abort
   * and by `close()`, as a call waiting in the pipeline would be.
   */
  #readFirst(
    engine: Engine,
    target: Target,
    headers: HeadersInit | undefined,
    body: AsyncIterable<unknown>,
    closing: AbortSignal,
  ): void {
    const ctx = { method: this.#opts.method, url: withoutCredentials(target.url) };
    const { clock } = engine;
    const ms = engine.options.forHost(target.hostname, target.host).timeoutMs;
    const start = clock.now();
    const scope = new AbortScope(this.#signal.asAbortSignal()).timeout(
      clock,
      ms,
      () => new TimeoutError(ms, 'total', ctx),
    );
    const unwatch = onAbort(closing, () => scope.abort(new ClientClosedError(ctx)));
    const done = () => {
      unwatch();
      scope.dispose();
    };
    readBody(body, MAX_REPLAYABLE_BODY_BYTES, scope.signal).then(
      (bytes) => {
        done();
        this.#opts = { ...this.#opts, body: bytes as Buffer };
        const left = Number.isFinite(ms) ? Math.max(1, ms - (clock.now() - start)) : undefined;
        this.#start(engine, target, headers, left);
      },
      (error: unknown) => {
        done();
        this.fail(error);
      },
    );
  }

  /** @param timeoutMs the call's own `timeoutMs`, when reading its body took part of the host's. */
  #start(
    engine: Engine,
    target: Target,
    headers: HeadersInit | undefined,
    timeoutMs: number | undefined,
  ): void {
    if (this.#done || this.#aborted) return;
    this.#pipelineHeaders = headers;
    const init: LimitedRequestInit = {
      method: this.#opts.method,
      headers,
      body: (this.#opts.body ?? undefined) as BodyInit | undefined,
      signal: this.#signal.asAbortSignal(),
    };
    if (timeoutMs !== undefined) init.timeoutMs = timeoutMs;
    engine.dispatch(target, undefined, init, this.#send).then(
      (response) => this.#deliver(response),
      (error: unknown) => this.fail(error),
    );
  }

  /**
   * The call's fetch, for the pipeline: one attempt through the dispatcher. The call aborts its
   * attempts itself (see {@link abort}); an attempt's own signal is watched only when the
   * pipeline made one (an attempt timeout). Either way the attempt rejects as soon as it is
   * aborted, so the pipeline puts no watcher of its own around it (`SETTLES_ON_ABORT`).
   */
  readonly #send = settlesOnAbort((_input: RequestInfo | URL, init?: RequestInit) => {
    // Nothing goes once the caller aborted (the pipeline stops there too; this is the guard).
    if (this.#aborted) return Promise.reject(this.#reason);
    const exchange = new AttemptExchange();
    this.#current = exchange;
    const signal = init?.signal;
    const own = signal === (this.#signal as unknown) ? undefined : signal;
    // A caller of the legacy API (under undici 7's wrapper) gets the raw headers its attempts get.
    const legacy = this.#legacy !== undefined;
    return exchange.send(this.#dispatch, this.#attemptOptions(init), own, legacy);
  });

  /** The dispatch options of an attempt: the caller's, with the headers the pipeline set. */
  #attemptOptions(init: RequestInit | undefined): Dispatcher.DispatchOptions {
    const headers = init?.headers;
    if (headers === undefined || headers === this.#pipelineHeaders) return this.#opts;
    // The pipeline added an idempotency key (or the client-wide headers): a `Headers`, which
    // undici takes as an iterable of pairs.
    return { ...this.#opts, headers: headers as Iterable<[string, string]> };
  }

  /** The pipeline's answer: the attempt it comes from goes to the caller. */
  #deliver(response: Response): void {
    const exchange = this.#current;
    const source = AttemptResponse.sourceOf(response) as AttemptExchange | undefined;
    if (this.#done || this.#aborted || exchange === undefined || source !== exchange) {
      source?.drop(this.#reason ?? undefined);
      if (!this.#done && !this.#aborted) {
        this.fail(new Error('limited-client/undici: the pipeline ended with an unknown response'));
      }
      return;
    }
    if (!exchange.deliver(this)) {
      this.fail(new Error('the response body was cancelled before the call ended (by a hook?)'));
      return;
    }
    this.#delivering = exchange;
    if (this.#paused) exchange.pause();
    try {
      const legacy = this.#legacy;
      const raw = exchange.rawHeaders;
      this.rawHeaders = (raw as Buffer[] | undefined) ?? null;
      if (legacy !== undefined && raw !== undefined) {
        // What undici 7's wrapper does with a controller, without its conversion of the headers.
        // The arrow is made here, unnamed: tsx (esbuild's keepNames) wraps a named one (a class
        // field, a const) in a `__name` call each time it is made.
        const status = exchange.status;
        const go = legacy.onHeaders(status, raw, () => this.resume(), exchange.statusMessage);
        if (go === false) this.pause();
      } else {
        this.#handler.onResponseStart?.(
          this,
          exchange.status,
          exchange.headers,
          exchange.statusMessage,
        );
      }
    } catch (error) {
      this.#stopWith(error);
      return;
    }
    exchange.flush();
  }

  // ---------------------------------------------------------------- BodySink

  /** {@link BodySink}: a chunk of the delivered body, for the caller (nothing after its end). */
  data(chunk: Buffer): void {
    if (this.#done || this.#aborted) return;
    try {
      const legacy = this.#legacy;
      if (legacy === undefined) this.#handler.onResponseData?.(this, chunk);
      else if (legacy.onData(chunk) === false) this.pause();
    } catch (error) {
      this.#stopWith(error);
    }
  }

  /** {@link BodySink}: the delivered body ended; the caller hears `onResponseEnd` (once). */
  end(trailers: IncomingHttpHeaders | RawHeaders): void {
    if (this.#done || this.#aborted) return;
    this.#done = true;
    try {
      const legacy = this.#legacy;
      if (Array.isArray(trailers)) {
        if (legacy !== undefined) legacy.onComplete(trailers as RawHeaders);
        else this.#handler.onResponseEnd?.(this, headersOf(trailers as RawHeaders));
      } else this.#handler.onResponseEnd?.(this, trailers as IncomingHttpHeaders);
    } catch (error) {
      rethrowLater(error);
    }
  }

  /** Ends the call with `error` (once): the caller hears `onResponseError`. */
  fail(error: unknown): void {
    if (this.#done) return;
    this.#done = true;
    try {
      this.#handler.onResponseError?.(this, asError(error));
    } catch (thrown) {
      rethrowLater(thrown);
    }
  }

  // ---------------------------------------------------------------- DispatchController

  /**
   * Stops the call wherever it is: waiting in the pipeline, an attempt on the wire, a body
   * arriving. The caller hears `onResponseError(reason)` on the next microtask, and nothing else.
   */
  abort(reason?: Error): void {
    if (this.#aborted || this.#done) return;
    this.#aborted = true;
    this.#signal.abort(reason);
    const error = asError(this.#signal.reason);
    this.#reason = error;
    this.#current?.abort(error);
    queueMicrotask(() => this.fail(error));
  }

  /** Holds the body: the attempt being delivered pauses its dispatcher. */
  pause(): void {
    this.#paused = true;
    this.#delivering?.pause();
  }

  /** Hands over what was held meanwhile, then lets the dispatcher go on. */
  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#delivering?.resume();
  }

  /** The caller's handler threw: the attempt stops and the caller hears the error. */
  #stopWith(error: unknown): void {
    const reason = asError(error);
    this.#current?.abort(reason);
    this.#signal.abort(reason);
    this.fail(reason);
  }
}

/** The callbacks of undici's legacy handler API that a call delivers an answer through. */
interface LegacyHandler {
  onHeaders(status: number, raw: RawHeaders, resume: () => void, message: string): unknown;
  onData(chunk: Buffer): unknown;
  onComplete(trailers: RawHeaders): unknown;
}

/**
 * `handler` as the legacy handler it wraps, when it is undici 7's `WrapHandler` (what undici 7's
 * `compose()` hands an interceptor for `request`, `stream`, `pipeline`): its legacy callbacks
 * pass straight to the caller's, and its new ones convert the headers to get there (see
 * `raw-headers.ts`). Known by its class name (undici does not export it): another handler, or a
 * bundle that renamed it, is delivered to through the new API, as before.
 */
function legacyUnder(handler: Dispatcher.DispatchHandler): LegacyHandler | undefined {
  const h = handler as unknown as Record<string, unknown>;
  const wrapper = h.constructor as { name?: unknown; wrap?: unknown } | undefined;
  return wrapper?.name === 'WrapHandler' &&
    typeof wrapper.wrap === 'function' &&
    typeof h.onHeaders === 'function' &&
    typeof h.onData === 'function' &&
    typeof h.onComplete === 'function'
    ? (handler as unknown as LegacyHandler)
    : undefined;
}

/** Marks `send` as settling when its signal aborts (see `client/attempt.ts`). */
function settlesOnAbort(
  send: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>,
): typeof fetch {
  (send as unknown as Record<symbol, boolean>)[SETTLES_ON_ABORT] = true;
  return send as typeof fetch;
}

/** Reports an error a handler threw where nothing can take it, as an uncaught error. */
function rethrowLater(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}

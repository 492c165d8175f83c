/**
 * One attempt of an intercepted call, sent through the dispatch the interceptor was composed onto
 * and shown to the pipeline as fetch shows a request: a promise of a `Response` that resolves
 * when the status and headers arrive, and rejects with the dispatcher's error before them.
 *
 * The body stays with the attempt. Until the pipeline says which attempt the call ends with, the
 * attempt holds what arrives, up to {@link HELD_BYTES}, and then pauses the dispatcher (nothing
 * more is read from the socket). The attempt the call ends with is then {@link deliver}ed: what
 * it holds and everything after goes to the caller's handler as it arrives, and the caller's
 * pause and resume reach the dispatcher. An attempt the pipeline lets go has its body cancelled:
 * what it holds is dropped, and a body still arriving is aborted.
 *
 * The attempt the call ends with also holds the call's slot (`client/open-bodies.ts`) until its
 * body ends on the wire (the server is done with the request), fails or is let go. It is idle,
 * and its grace runs, while the caller holds the body paused.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Slot } from '../client/call/open-bodies.js';
import { onAbort } from '../client/call/signals.js';
import { abortReason } from '../shared/clock.js';
import { AttemptResponse, type BodySource } from './attempt-response.js';
import { LegacyPort } from './legacy-port.js';
import { headersOf, type RawHeaders } from './raw-headers.js';

/** Bytes of a body an attempt holds while nobody reads it; past them it pauses the dispatcher. */
export const HELD_BYTES = 64 * 1024;

/** Where a delivered attempt's body goes: the caller's handler, through its call. */
export interface BodySink {
  /** Whether the caller paused: nothing more is handed to it until it resumes. */
  readonly paused: boolean;
  data(chunk: Buffer): void;
  /** The body's end, with its trailers as the dispatcher gave them (object, or raw list). */
  end(trailers: IncomingHttpHeaders | RawHeaders): void;
  fail(error: unknown): void;
}

/**
 * `held`: nobody reads the body yet; `stream`: the pipeline or a hook reads it as a stream;
 * `delivered`: it goes to the caller's handler; `dropped`: nobody will read it.
 */
type Mode = 'held' | 'stream' | 'delivered' | 'dropped';

const noop = () => {};

/**
 * What an attempt holds before it holds anything: shared, never written (most attempts hold no
 * chunk and see no trailers, and make no array or object for them).
 */
const NO_CHUNKS: readonly Buffer[] = Object.freeze([]);
const NO_HEADERS: IncomingHttpHeaders = Object.freeze({});

/** See the module comment. */
export class AttemptExchange implements Dispatcher.DispatchHandler, BodySource {
  /** The status and reason phrase, once they arrived. */
  status = 0;
  statusMessage = '';
  /**
   * The headers as undici's raw list: what the legacy API gave, or what the controller carries
   * (undici's controllers do, for a caller that asks for raw headers).
   */
  rawHeaders: RawHeaders | undefined;
  #headers: IncomingHttpHeaders = NO_HEADERS;
  #mode: Mode = 'held';
  #controller: Dispatcher.DispatchController | undefined;
  /** An abort asked for before the dispatcher started the request. */
  #pendingAbort: Error | undefined;
  #aborted = false;
  #answered = false;
  #resolve: (response: Response) => void = noop;
  #reject: (error: unknown) => void = noop;
  /** What arrived and nobody took yet: {@link NO_CHUNKS} until the first one. */
  #chunks = NO_CHUNKS as Buffer[];
  #heldBytes = 0;
  /** This attempt paused the dispatcher because it holds {@link HELD_BYTES}. */
  #full = false;
  #ended = false;
  #trailers: IncomingHttpHeaders | RawHeaders = NO_HEADERS;
  #error: unknown;
  #sink: BodySink | undefined;
  /** The call's slot, once the call returns this attempt's response. */
  #slot: Slot | undefined;
  /** A stream's pull that waits for data, and what ends its wait. */
  #waiting: ReadableStreamDefaultController<Uint8Array> | undefined;
  #wake: () => void = noop;
  #stopWatching: () => void = noop;

  /** The headers as undici's object (made from the raw list on first use, if that is what came). */
  get headers(): IncomingHttpHeaders {
    if (this.#headers === NO_HEADERS && this.rawHeaders !== undefined) {
      this.#headers = headersOf(this.rawHeaders);
    }
    return this.#headers;
  }

  /**
   * Sends the attempt. `signal`, when given, aborts it, before its response or while its body
   * arrives (the call aborts its attempts itself; this is for the pipeline's attempt timeout).
   * @param legacy send it with a handler of undici's legacy API (see `raw-headers.ts`): only for
   *   a dispatch of undici 7, which takes both.
   * @returns the response, when its status and headers arrived.
   */
  send(
    dispatch: Dispatcher.Dispatch,
    opts: Dispatcher.DispatchOptions,
    signal?: AbortSignal | null,
    legacy = false,
  ): Promise<Response> {
    const response = new Promise<Response>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    if (signal) this.#stopWatching = onAbort(signal, () => this.abort(abortReason(signal)));
    try {
      dispatch(
        opts,
        legacy ? (new LegacyPort(this) as unknown as Dispatcher.DispatchHandler) : this,
      );
    } catch (error) {
      this.onResponseError(undefined, error as Error);
    }
    return response;
  }

  /**
   * Aborts the attempt (at once if started, else as soon as the dispatcher starts it). Before
   * the headers, {@link send}'s promise rejects with `reason` at once, as fetch's does: a request
   * still queued in the dispatcher does not keep the call waiting.
   */
  abort(reason: unknown): void {
    if (this.#ended || this.#aborted) return;
    this.#aborted = true;
    const error = asError(reason);
    if (this.#controller) this.#controller.abort(error);
    else this.#pendingAbort = error;
    if (!this.#answered) {
      // What the dispatcher reports after this is for nobody: the attempt is over.
      this.#mode = 'dropped';
      this.#ended = true;
      this.#error = error;
      this.#stopWatching();
      this.#reject(error);
    }
  }

  /** Pauses the dispatcher (the caller paused): nobody reads, the slot's grace runs. */
  pause(): void {
    this.#controller?.pause();
    this.#slot?.idle();
  }

  /** Hands the caller what is held, then lets the dispatcher go on (the caller resumed). */
  resume(): void {
    this.#slot?.reading();
    this.flush();
  }

  /** {@link BodySource}: holds the call's slot until the body ends (see the module comment). */
  holdSlot(slot: Slot): void {
    if (this.#ended || this.#mode === 'dropped') {
      slot.end();
      return;
    }
    // Held as read: the call delivers the body at once (and pauses it there if its caller did).
    this.#slot = slot;
  }

  /** Gives the call's slot back, if this attempt holds it. */
  #endSlot(): void {
    const slot = this.#slot;
    this.#slot = undefined;
    slot?.end();
  }

  /**
   * Makes `sink` the body's reader: what is held is handed over by {@link flush}, and what
   * arrives from then on goes straight to it. A stream opened before is closed where it stands
   * (what it read is not handed over again). False when the body was let go already (a hook
   * cancelled it): there is nothing to deliver.
   */
  deliver(sink: BodySink): boolean {
    if (this.#mode === 'dropped') return false;
    this.#mode = 'delivered';
    this.#sink = sink;
    this.#feed();
    return true;
  }

  /** Hands the sink what is held, while it is not paused; then its end, or the dispatcher on. */
  flush(): void {
    const sink = this.#sink;
    if (!sink || this.#mode !== 'delivered') return;
    while (this.#chunks.length > 0 && !sink.paused && this.#mode === 'delivered') {
      const chunk = this.#chunks.shift() as Buffer;
      this.#heldBytes -= chunk.length;
      sink.data(chunk);
    }
    if (this.#chunks.length > 0 || this.#mode !== 'delivered') return;
    if (this.#error !== undefined) sink.fail(this.#error);
    else if (this.#ended) sink.end(this.#trailers);
    else if (!sink.paused) {
      this.#full = false;
      this.#controller?.resume();
    }
  }

  /** Lets the body go: drops what is held, aborts what is still arriving. */
  drop(reason?: unknown): void {
    if (this.#mode === 'dropped') return;
    this.#mode = 'dropped';
    this.#chunks = NO_CHUNKS as Buffer[];
    this.#heldBytes = 0;
    // A stream cancelled in a pull takes no more calls: its pull just ends.
    this.#waiting = undefined;
    this.#wake();
    this.#wake = noop;
    this.#endSlot();
    if (!this.#ended) this.abort(reason ?? new Error('response body cancelled'));
  }

  /** {@link BodySource}: the body from here on, for a response whose body someone asked for. */
  openStream(): ReadableStream<Uint8Array> | null {
    if (this.#mode !== 'held') return new ReadableStream({ start: (c) => c.close() });
    this.#mode = 'stream';
    return new ReadableStream<Uint8Array>(
      {
        pull: (c) => this.#pull(c),
        cancel: (reason) => this.drop(reason),
      },
      { highWaterMark: 0 },
    );
  }

  /** The stream wants a chunk: one now, or when it arrives (see {@link feed}). */
  #pull(c: ReadableStreamDefaultController<Uint8Array>): Promise<void> | undefined {
    if (this.#serve(c)) return;
    return new Promise((wake) => {
      this.#waiting = c;
      this.#wake = wake;
    });
  }

  /** Gives a pulling stream a chunk, its end or its error; false when there is nothing yet. */
  #serve(c: ReadableStreamDefaultController<Uint8Array>): boolean {
    if (this.#mode !== 'stream') {
      // Delivered to the caller: this stream ends where it stands.
      c.close();
      return true;
    }
    // (`shift` would throw on the frozen NO_CHUNKS.)
    const chunk = this.#chunks.length > 0 ? this.#chunks.shift() : undefined;
    if (chunk !== undefined) {
      this.#heldBytes -= chunk.length;
      c.enqueue(chunk);
      if (this.#full && this.#heldBytes < HELD_BYTES) {
        this.#full = false;
        this.#controller?.resume();
      }
      return true;
    }
    if (this.#error !== undefined) c.error(this.#error);
    else if (this.#ended) c.close();
    else return false;
    return true;
  }

  /** Serves a stream that waits in a pull, now that there is something for it. */
  #feed(): void {
    const c = this.#waiting;
    if (c === undefined || !this.#serve(c)) return;
    this.#waiting = undefined;
    const wake = this.#wake;
    this.#wake = noop;
    wake();
  }

  // ---------------------------------------------------------------- the dispatcher's callbacks

  /** The dispatcher started the request: an abort asked for meanwhile goes now. */
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#pendingAbort !== undefined) controller.abort(this.#pendingAbort);
  }

  /** The status and headers: the pipeline gets its `Response` (1xx answers are skipped). */
  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    this.started(controller, statusCode, headers, undefined, statusMessage);
  }

  /** {@link onResponseStart}, with the headers as undici's object or (legacy API) its raw list. */
  started(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders | undefined,
    raw: RawHeaders | undefined,
    statusMessage?: string,
  ): void {
    // Informational answers (103 Early Hints...) say nothing the pipeline or the caller needs.
    if (statusCode < 200 || this.#answered || this.#ended) return;
    this.#controller = controller;
    this.#answered = true;
    this.status = statusCode;
    if (headers !== undefined) this.#headers = headers;
    const carried = (controller as { rawHeaders?: unknown }).rawHeaders;
    this.rawHeaders = raw ?? (Array.isArray(carried) ? (carried as RawHeaders) : undefined);
    this.statusMessage = statusMessage ?? '';
    const given = (raw ?? headers) as IncomingHttpHeaders | RawHeaders;
    this.#resolve(new AttemptResponse(this, statusCode, this.statusMessage, given).asResponse());
  }

  /** A chunk of the body: to the caller when delivered and not paused, else held. */
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const mode = this.#mode;
    if (mode === 'dropped') return;
    if (mode === 'delivered') {
      const sink = this.#sink as BodySink;
      if (this.#chunks.length === 0 && !sink.paused) {
        sink.data(chunk);
        return;
      }
      this.#hold(chunk);
      if (sink.paused) controller.pause();
      return;
    }
    this.#hold(chunk);
    if (mode === 'stream') this.#feed();
    if (this.#heldBytes >= HELD_BYTES && !this.#full) {
      this.#full = true;
      controller.pause();
    }
  }

  /** Keeps `chunk` until someone takes it. */
  #hold(chunk: Buffer): void {
    if (this.#chunks === NO_CHUNKS) this.#chunks = [];
    this.#chunks.push(chunk);
    this.#heldBytes += chunk.length;
  }

  /** The end of the body (after what is held, for a reader). */
  onResponseEnd(
    _controller: Dispatcher.DispatchController,
    trailers: IncomingHttpHeaders | RawHeaders,
  ): void {
    if (!this.#answered) {
      this.onResponseError(
        undefined,
        new Error('the dispatcher ended the request without a response'),
      );
      return;
    }
    this.#ended = true;
    this.#trailers = trailers;
    this.#stopWatching();
    this.#endSlot();
    if (this.#mode === 'delivered') this.flush();
    else if (this.#mode === 'stream') this.#feed();
  }

  /** A failure: the pipeline's rejection before the headers; the reader's error after them. */
  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    this.#stopWatching();
    this.#endSlot();
    if (!this.#answered) {
      this.#reject(error);
      return;
    }
    // The body failed: a caller reading it hears at once; what was held is lost, as it would be
    // with undici's own body.
    this.#chunks = NO_CHUNKS as Buffer[];
    this.#heldBytes = 0;
    if (this.#mode === 'delivered') this.#sink?.fail(error);
    else if (this.#mode === 'stream') this.#feed();
  }
}

/** undici's controllers and handlers take an `Error`: `reason` as one. */
export function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason), { cause: reason });
}

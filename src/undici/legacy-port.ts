/**
 * A handler of undici's legacy API in front of an attempt (`exchange.ts`), for undici 7's
 * dispatchers, which take such a handler as it is.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { RawHeaders } from './raw-headers.js';

/** What the port calls of the attempt behind it: the new API's callbacks (`AttemptExchange`). */
export interface PortedAttempt {
  onRequestStart(controller: Dispatcher.DispatchController): void;
  started(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders | undefined,
    raw: RawHeaders | undefined,
    statusMessage?: string,
  ): void;
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void;
  onResponseEnd(
    controller: Dispatcher.DispatchController,
    trailers: IncomingHttpHeaders | RawHeaders,
  ): void;
  onResponseError(controller: Dispatcher.DispatchController | undefined, error: Error): void;
}

/**
 * An attempt sent with a handler of undici's legacy API (`onConnect`, `onHeaders`, `onData`,
 * `onComplete`, `onError`), which undici 7's dispatchers take as they are: its headers and
 * trailers stay the raw list the parser made (see `raw-headers.ts`), where a handler of the new API
 * gets them converted to an object. Both the handler and the attempt's controller, as undici's
 * own `UnwrapHandler` and `UnwrapController` are: the dispatcher pauses when a callback returns
 * false, and `resume()` calls the function it gave with the headers.
 */
export class LegacyPort implements Dispatcher.DispatchController {
  readonly #exchange: PortedAttempt;
  #abort: ((reason?: Error) => void) | undefined;
  #resume: (() => void) | undefined;
  #paused = false;
  #aborted = false;
  #reason: Error | null = null;

  constructor(exchange: PortedAttempt) {
    this.#exchange = exchange;
  }

  get aborted(): boolean {
    return this.#aborted;
  }
  get paused(): boolean {
    return this.#paused;
  }
  get reason(): Error | null {
    return this.#reason;
  }
  abort(reason: Error): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#abort?.(reason);
  }
  pause(): void {
    this.#paused = true;
  }
  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#resume?.();
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.#abort = abort;
    this.#exchange.onRequestStart(this);
  }
  onHeaders(statusCode: number, raw: RawHeaders, resume: () => void, message?: string): boolean {
    this.#resume = resume;
    this.#exchange.started(this, statusCode, undefined, raw, message);
    return !this.#paused;
  }
  onData(chunk: Buffer): boolean {
    this.#exchange.onResponseData(this, chunk);
    return !this.#paused;
  }
  onComplete(trailers: RawHeaders | null): void {
    this.#exchange.onResponseEnd(this, trailers ?? []);
  }
  onError(error: Error): void {
    this.#exchange.onResponseError(this, error);
  }
}

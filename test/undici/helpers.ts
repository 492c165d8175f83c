/**
 * Test doubles for the interceptor's units: a dispatch that records what it is given and lets the
 * test play the dispatcher's callbacks, with a controller that counts pauses, resumes and aborts.
 */
import type { Dispatcher } from 'undici';

/** A controller as undici's: pause, resume and abort recorded. */
export class FakeController implements Dispatcher.DispatchController {
  paused = false;
  aborted = false;
  reason: Error | null = null;
  pauses = 0;
  resumes = 0;
  /** Called on abort, as the dispatcher would (undici reports the abort with onResponseError). */
  onAbort: ((reason: Error) => void) | undefined;

  abort(reason: Error): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.onAbort?.(reason);
  }

  pause(): void {
    this.paused = true;
    this.pauses++;
  }

  resume(): void {
    this.paused = false;
    this.resumes++;
  }
}

/** One dispatched request: what the dispatch was given, and its controller. */
export interface Dispatched {
  opts: Dispatcher.DispatchOptions;
  handler: Dispatcher.DispatchHandler;
  controller: FakeController;
}

/** A dispatch that records every request; the test plays the callbacks. */
export function scriptedDispatch(): {
  dispatch: Dispatcher.Dispatch;
  sent: Dispatched[];
} {
  const sent: Dispatched[] = [];
  const dispatch = ((opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) => {
    sent.push({ opts, handler, controller: new FakeController() });
    return true;
  }) as Dispatcher.Dispatch;
  return { dispatch, sent };
}

/** Plays a whole answer: start, headers, the chunks, the end. */
export function answer(
  d: Dispatched,
  status: number,
  headers: Record<string, string | string[]>,
  chunks: string[] = [],
): void {
  d.handler.onRequestStart?.(d.controller, {});
  d.handler.onResponseStart?.(d.controller, status, headers, 'OK');
  for (const chunk of chunks) d.handler.onResponseData?.(d.controller, Buffer.from(chunk));
  d.handler.onResponseEnd?.(d.controller, {});
}

/** A handler as undici's callers implement it, recording what it hears. */
export class RecordingHandler implements Dispatcher.DispatchHandler {
  controller: Dispatcher.DispatchController | undefined;
  status: number | undefined;
  headers: Record<string, unknown> | undefined;
  chunks: string[] = [];
  trailers: Record<string, unknown> | undefined;
  error: Error | undefined;
  ends = 0;
  /** Pause from inside onResponseData after this many chunks (undefined: never). */
  pauseAfter: number | undefined;
  readonly done: Promise<void>;
  private settle: () => void = () => {};

  constructor() {
    this.done = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
  }

  onResponseStart(
    _c: Dispatcher.DispatchController,
    status: number,
    headers: Record<string, unknown>,
  ): void {
    this.status = status;
    this.headers = headers;
  }

  onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk.toString());
    if (this.pauseAfter !== undefined && this.chunks.length >= this.pauseAfter) c.pause();
  }

  onResponseEnd(_c: Dispatcher.DispatchController, trailers: Record<string, unknown>): void {
    this.trailers = trailers;
    this.ends++;
    this.settle();
  }

  onResponseError(_c: Dispatcher.DispatchController, error: Error): void {
    this.error = error;
    this.ends++;
    this.settle();
  }
}

/**
 * One attempt, without policy: the call's options read once, the attempt's signal (the caller's,
 * the overall timeout, the attempt timeout) and body, the fetch, and the parsed rate-limit headers.
 *
 * @module
 */
import { abortReason, type Clock } from '../clock.js';
import { type RequestContext, TimeoutError } from '../errors.js';
import { parseRateLimitHeaders } from '../headers/parse.js';
import type { RateLimitInfo } from '../headers/types.js';
import type { HostPolicy } from './host-policy.js';
import { type PreparedRequest, withoutCredentials } from './request.js';
import { defaultShouldRetry } from './retry/retry-rule.js';
import { AbortScope, onAbort } from './signals.js';
import type { LimitedRequestInit, ShouldRetry } from './types.js';

/** Per-call options read from the caller's init. */
export interface Call {
  cost: number;
  signal: AbortSignal | undefined;
  timeoutMs: number;
  attemptTimeoutMs: number;
  retries: number;
  shouldRetry: ShouldRetry;
  createBody: (() => BodyInit) | undefined;
  ctx: RequestContext;
  /** What sends each attempt: the client's fetch, or the call's own (see `Engine.dispatch`). */
  fetch: typeof fetch;
}

/** The outcome of one attempt. */
export interface Outcome {
  /** When it ended, epoch milliseconds on the client's clock. */
  at: number;
  response?: Response;
  error?: unknown;
  info?: RateLimitInfo;
  /** The attempt's abort scope, kept linked to the caller's signal while the body may be read. */
  scope?: AbortScope | undefined;
  /**
   * The host's hold once this outcome was taken into the shared state, epoch milliseconds (0 for
   * none); undefined when learning is off or the store failed.
   */
  holdUntil?: number;
}

/**
 * Reads a call's own options over the host's; throws a `RangeError` for a cost out of range.
 * @param send what sends the call's attempts.
 */
export function readCall(
  req: PreparedRequest,
  init: LimitedRequestInit | undefined,
  p: HostPolicy,
  send: typeof fetch,
): Call {
  // What errors and events show: never the URL's credentials.
  const ctx = { method: req.method, url: withoutCredentials(req.url) };
  let cost = init?.cost;
  if (cost === undefined) {
    cost = typeof p.cost === 'number' ? p.cost : p.cost({ method: req.method, url: req.url });
  }
  if (!(typeof cost === 'number' && cost >= 0 && cost <= p.maxCost)) {
    throw new RangeError(
      `${req.method} ${req.url}: cost must be a number from 0 to ${p.maxCost} (got ${String(cost)})`,
    );
  }
  const retry = init?.retry;
  const signal =
    init?.signal ?? (typeof req.input === 'string' ? undefined : req.input.signal) ?? undefined;
  return {
    cost,
    signal,
    timeoutMs: init?.timeoutMs ?? p.timeoutMs,
    attemptTimeoutMs: init?.attemptTimeoutMs ?? p.attemptTimeoutMs,
    retries: retry === false ? 0 : (retry?.retries ?? p.retry.retries),
    shouldRetry:
      (retry === false ? undefined : retry?.shouldRetry) ??
      p.retry.shouldRetry ??
      defaultShouldRetry,
    createBody: init?.createBody,
    ctx,
    fetch: send,
  };
}

/**
 * Sends one attempt: a fresh body when the call can recreate it, the attempt timeout on the
 * injected clock, and on a response its rate-limit headers parsed. Never rejects: a failure is
 * the outcome's `error` (an attempt timeout as a `TimeoutError`, whatever the fetch rejected with).
 */
export async function sendAttempt(
  clock: Clock,
  req: PreparedRequest,
  call: Call,
): Promise<Outcome> {
  let scope: AbortScope | undefined;
  let signal = call.signal;
  if (Number.isFinite(call.attemptTimeoutMs)) {
    const ms = call.attemptTimeoutMs;
    scope = new AbortScope(call.signal).timeout(
      clock,
      ms,
      () => new TimeoutError(ms, 'attempt', call.ctx),
    );
    signal = scope.signal;
  }
  let input = req.input;
  let init = req.init;
  if (call.createBody) {
    // A fresh body per attempt; `duplex` lets it be a stream.
    const fresh = { body: call.createBody(), duplex: 'half' } as RequestInit;
    if (typeof input === 'string') init = { ...init, ...fresh, signal };
    else {
      input = new Request(input, fresh);
      init = signal ? { signal } : undefined;
    }
  } else if (signal !== undefined) {
    init = { ...init, signal };
  }
  const outcome: Outcome = { at: 0, scope };
  try {
    const sent = call.fetch(input, init);
    // A fetch that ignores its signal must not keep the call past its deadline, nor its slot.
    outcome.response = await (signal === undefined ? sent : untilAborted(sent, signal));
  } catch (error) {
    // A fetch that rejects an abort with its own AbortError still timed out on our watch.
    outcome.error = scope?.signal.aborted && !call.signal?.aborted ? scope.signal.reason : error;
  }
  const now = clock.now();
  outcome.at = now;
  if (outcome.response) {
    scope?.dispose(true);
    outcome.info = parseRateLimitHeaders(outcome.response.headers, { now });
  } else {
    scope?.dispose(false);
  }
  return outcome;
}

/**
 * `sent`, or a rejection with the signal's reason as soon as `signal` aborts, whichever comes
 * first. A response that arrives after the abort is discarded (its body cancelled).
 */
function untilAborted(sent: Promise<Response>, signal: AbortSignal): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    let done = false;
    const stop = onAbort(signal, () => {
      if (done) return;
      done = true;
      reject(abortReason(signal));
      sent.then(
        (late) => late.body?.cancel().catch(() => {}),
        () => {},
      );
    });
    sent.then(
      (response) => {
        stop();
        if (done) return;
        done = true;
        resolve(response);
      },
      (error: unknown) => {
        stop();
        if (done) return;
        done = true;
        reject(error);
      },
    );
  });
}

/**
 * One attempt, without policy: the call's options read once, the attempt's signal (the caller's,
 * the overall timeout, the attempt timeout) and body, the fetch, and the parsed rate-limit headers.
 *
 * @module
 */

import { parseRateLimitHeaders } from '../../headers/parse.js';
import type { RateLimitInfo } from '../../headers/types.js';
import { abortReason, type Clock } from '../../shared/clock.js';
import { type RequestContext, TimeoutError } from '../../shared/errors.js';
import { invalidOption } from '../../shared/option-checks.js';
import { lookAtBody } from '../body/look.js';
import { type BodyLimits, mergeInfo } from '../body/parse.js';
import { type RouteCosts, routeOf, wantsLook } from '../body/route-costs.js';
import type { HostConfig } from '../options/resolve.js';
import { defaultShouldRetry } from '../retry/retry-rule.js';
import type { LimitedRequestInit, ShouldRetry } from '../types.js';
import { type Cost, costOf, costProblem, MAX_COST } from './cost.js';
import { type PreparedRequest, withoutCredentials } from './request.js';
import { RequestView } from './request-view.js';
import { AbortScope, onAbort } from './signals.js';

/** Per-call options read from the caller's init. */
export interface Call {
  /** What the call costs, per unit (see `cost.ts`). */
  cost: Cost;
  /** What ends the call: the caller's signal, or a scope adding the call's overall timeout to it. */
  signal: AbortSignal | undefined;
  /** The caller's own signal: the only one that reaches a response body once it is returned. */
  callerSignal: AbortSignal | undefined;
  timeoutMs: number;
  attemptTimeoutMs: number;
  retries: number;
  shouldRetry: ShouldRetry;
  createBody: (() => BodyInit) | undefined;
  ctx: RequestContext;
  /** What sends each attempt: the client's fetch, or the call's own (see `Engine.dispatch`). */
  fetch: typeof fetch;
  /** The look at each answer's body (`body/look.ts`), when the call gets one. */
  look: Look | undefined;
}

/** A call whose answers' bodies are looked at: where it learns what its route costs. */
export interface Look {
  costs: RouteCosts;
  route: string;
  /**
   * What the last answer's body says of limits, once its attempt's `sent` resolved (one attempt
   * of a call is under way at a time). Here rather than on `Sending`: other calls pay nothing.
   */
  body: BodyLimits | undefined;
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
  /**
   * Whether the answer is the server pushing back, as the host's rules see it (set when it is taken
   * in: a load shedder's 5xx is; by status and headers alone when learning is off).
   */
  pushback?: boolean;
  /**
   * Whether the answer's body says the server refused the request (a GraphQL `THROTTLED` answered
   * with HTTP 200): a pushback, and proof it was not processed, whatever the status says.
   */
  refused?: boolean;
  /**
   * Whether the host was in a lockout once this outcome was taken in: it refuses every request
   * sent at the pace, and a retry waits for the lockout's next probe (see `rules/pace.ts`).
   */
  lockout?: boolean;
  /** Whether the host served others since the call's previous refusal (see `View.served`). */
  served?: boolean;
  /**
   * Whether the refusal is the call's own (its second while the host served others): its retry
   * backs off on its own instead of waiting for the host's pace (see `View.served`).
   */
  ownRefusal?: boolean;
  /**
   * When the call's previous attempt was refused: when (epoch milliseconds), its ticket's `seq`,
   * and the call's refusals while the host served others; undefined when it was not, or for a
   * first attempt. Taken into the shared state with this outcome (`SettledOutcome.again`).
   */
  again?: { at: number; seq: number; served: number } | undefined;
}

/**
 * Reads a call's own options (checked by `checkCallOptions`) over the host's. Throws an
 * `InvalidOptionError` for a cost whose requests exceed the host's burst (such a request could
 * never be sent), or a `cost` function that returns anything but a cost (see {@link costOf}).
 * @param send what sends the call's attempts.
 * @param costs the host's learned route costs: the call gets the look at its answers' bodies when
 *   it {@link wantsLook}, and is charged the points its route cost last.
 */
export function readCall(
  req: PreparedRequest,
  init: LimitedRequestInit | undefined,
  p: HostConfig,
  send: typeof fetch,
  costs?: RouteCosts,
  scope?: string,
): Call {
  // What errors and events show: never the URL's credentials.
  const ctx = { method: req.method, url: withoutCredentials(req.url) };
  const own = init?.cost !== undefined;
  // `null` is the call's own (a mistake to name), not "no cost given".
  const given = own
    ? init.cost
    : typeof p.cost === 'function'
      ? p.cost(req.view ?? viewOf(req))
      : // The host's default cost, on a call in its model's scope: that call's tokens.
        // (No model, no estimate: `scope` and `req.model` both undefined leave the cost 1.)
        p.cost === 1 && scope === req.model
        ? (req.estimate ?? 1)
        : p.cost;
  const cost = costOf(given, p.maxCost);
  if (cost === undefined) {
    // The real bound: the host's burst when it has one below the most any cost may be.
    const bound = p.maxCost < MAX_COST ? `${p.maxCost} (the host's burst)` : `${MAX_COST}`;
    throw invalidOption(
      own ? 'init.cost' : 'cost',
      own ? costProblem(given, bound) : costProblem(given, bound).replace('be', 'return'),
      given,
      ctx,
    );
  }
  const look =
    costs && wantsLook(req, p.bodyLimits)
      ? { costs, route: routeOf(req), body: undefined }
      : undefined;
  const retry = init?.retry;
  const signal =
    init?.signal ?? (typeof req.input === 'string' ? undefined : req.input.signal) ?? undefined;
  return {
    cost: look ? look.costs.charge(cost, look.route) : cost,
    signal,
    callerSignal: signal,
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
    look,
  };
}

/**
 * A view of a request prepared without one: `prepareRequest` makes one whenever a cost function
 * will read it, so this is a fallback for requests prepared otherwise.
 */
function viewOf(req: PreparedRequest): RequestView {
  return new RequestView(
    req.url,
    typeof req.input === 'string' ? undefined : req.input,
    req.init,
    undefined,
  );
}

/**
 * Marks a send function (a call's own fetch: see `Engine.dispatch`) that settles its promise as
 * soon as the signal it is given aborts, and cancels a response that comes later: no watcher
 * (a promise and a listener per attempt) is put around it. The undici interceptor's is one.
 */
export const SETTLES_ON_ABORT: unique symbol = Symbol('limited-client.settles-on-abort');

/**
 * An attempt under way (see {@link startAttempt}): what fetch answers, and what {@link endAttempt}
 * needs to turn that into an {@link Outcome}.
 */
export interface Sending {
  /** Fetch's answer; with a signal, rejected as soon as the signal aborts. */
  sent: Promise<Response>;
  /** The attempt's abort scope, when it needs one of its own (an attempt or overall timeout). */
  scope: AbortScope | undefined;
  /** Whether the scope must be relinked to the caller's signal alone when a response comes. */
  detach: boolean;
}

/**
 * Starts one attempt: a fresh body when the call can recreate it, the attempt timeout on the
 * injected clock, and the fetch, all synchronously. Throws only what comes before the fetch (the
 * caller's `createBody`, a body `Request` refuses): nothing was sent then. Whatever the fetch
 * throws or rejects with is in `sent`. Finish with {@link endAttempt}.
 */
export function startAttempt(clock: Clock, req: PreparedRequest, call: Call): Sending {
  let scope: AbortScope | undefined;
  let signal = call.signal;
  // With an overall timeout, the attempt gets a scope of its own even without a timeout of its
  // own, so that a response it returns answers to the caller's signal alone: the call may still
  // resolve to it after the overall timeout fires (its retry waited past the deadline), and its
  // body must stay readable then.
  const detach = call.signal !== call.callerSignal;
  if (Number.isFinite(call.attemptTimeoutMs) || detach) {
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
  let sent: Promise<Response>;
  try {
    sent = call.fetch(input, init);
  } catch (error) {
    // A fetch that throws instead of rejecting: an outcome all the same.
    sent = Promise.reject(error);
  }
  // A fetch that ignores its signal must not keep the call past its deadline, nor its slot.
  if (signal !== undefined && !(SETTLES_ON_ABORT in call.fetch)) sent = untilAborted(sent, signal);
  const look = call.look;
  if (look !== undefined) {
    // The answer waits for the bounded look at its body (the caller's body is left untouched).
    look.body = undefined;
    sent = sent.then((response) =>
      lookAtBody(response, clock, signal).then((body) => {
        look.body = body;
        return response;
      }),
    );
  }
  return { sent, scope, detach };
}

/**
 * The outcome of an attempt {@link startAttempt} started, once `sent` settled: `response` when it
 * resolved, else `error` (an attempt timeout as a `TimeoutError`, whatever the fetch rejected
 * with); on a response its rate-limit headers parsed. Reads the clock once.
 */
export function endAttempt(
  clock: Clock,
  call: Call,
  sending: Sending,
  response: Response | undefined,
  error: unknown,
): Outcome {
  const { scope } = sending;
  const now = clock.now();
  // Every field, in one order: one shape ([hot-path.md](../../docs/hot-path.md)).
  const outcome: Outcome = {
    at: now,
    response,
    error: undefined,
    info: undefined,
    scope,
    holdUntil: undefined,
    pushback: undefined,
    refused: undefined,
    lockout: undefined,
    served: undefined,
    ownRefusal: undefined,
    again: undefined,
  };
  if (response) {
    if (sending.detach) scope?.relink(call.callerSignal);
    else scope?.dispose(true);
    outcome.info = parseRateLimitHeaders(response.headers, { now });
    const body = call.look?.body;
    if (body !== undefined) {
      outcome.info = mergeInfo(outcome.info, body.info);
      if (body.throttled) outcome.refused = true;
      if (body.cost !== undefined) call.look?.costs.set(call.look.route, body.cost);
    }
  } else {
    // A fetch that rejects an abort with its own AbortError still timed out on our watch.
    outcome.error = scope?.signal.aborted && !call.signal?.aborted ? scope.signal.reason : error;
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

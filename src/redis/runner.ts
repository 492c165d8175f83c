/**
 * Runs Lua scripts on the user's node-redis client: `EVALSHA`, then `EVAL` on `NOSCRIPT`; a
 * timeout on every call; and after Redis failed to answer, a short spell of failing fast instead of
 * making every caller wait for the timeout again.
 *
 * "Redis is down" means no answer: a timeout, a connection error, or a reply saying Redis cannot
 * serve anything right now (`LOADING`, `BUSY`, `MASTERDOWN`, ...). Any other error Redis answers
 * (`WRONGTYPE` on one key, a Lua runtime error) fails that call only: Redis is answering.
 *
 * @module
 */
import { unrefTimer } from '../clock.js';
import { StoreUnavailableError } from '../errors.js';
import type { LuaScript } from './lua/index.js';

/** Arguments of `EVAL` / `EVALSHA` in node-redis v5. */
export interface EvalOptions {
  keys: string[];
  arguments: string[];
}

/**
 * What the Redis store needs of a client: the scripting commands of node-redis v5. A connected
 * `createClient()` or `createCluster()` (from the `redis` package) has them; the cluster routes each
 * call by its key.
 */
export interface RedisScriptingClient {
  evalSha(sha1: string, options: EvalOptions): Promise<unknown>;
  eval(script: string, options: EvalOptions): Promise<unknown>;
  /** node-redis: `false` while the client is (re)connecting. Calls then fail fast. */
  readonly isReady?: boolean;
}

/** How the runner behaves; normalised by the store. */
export interface RunnerOptions {
  /** Longest wait for one call, in milliseconds. */
  timeoutMs: number;
  /** After a failure, calls fail at once for this long, in milliseconds; then Redis is tried again. */
  recheckMs: number;
}

/** What the runner has seen, for `RedisStore.health()`. */
export interface RunnerHealth {
  /** `false` from a failed call until the next call that succeeds. */
  available: boolean;
  /** Calls that got an answer. */
  succeeded: number;
  /** Calls that timed out or failed at Redis (including errors Redis answered, e.g. `WRONGTYPE`). */
  failed: number;
  /** Calls refused at once because Redis had just failed (see `recheckMs`). */
  refused: number;
  /** The last failure, while unavailable. */
  lastError: StoreUnavailableError | undefined;
}

/** Listeners of {@link ScriptRunner} transitions. */
export interface RunnerListeners {
  /**
   * Redis stopped answering (a timeout, a connection error, `LOADING`, ...) after having answered
   * (or on the first call): logged once per outage.
   */
  down(error: StoreUnavailableError): void;
  /** Redis answered again after being down. */
  up(): void;
}

/** How one call runs, besides its script and arguments. */
export interface RunOptions {
  /**
   * Called with the reply of a call that Redis answered after its caller was told it timed out:
   * Redis ran it, and the caller acted as if it had not (a take to give back).
   */
  onLateReply?: (reply: unknown) => void;
  /**
   * A call made on the side (giving back a take whose answer came late): sent even while Redis is
   * thought to be down (it just answered), and neither counted in `health()` nor able to start or
   * end an outage.
   */
  background?: boolean;
}

/** Errors of calls known not to have been applied: refused before sending, or by the script. */
const unsent = new WeakSet<object>();

/**
 * Whether a failed {@link ScriptRunner.run} may have reached Redis, and so may have been applied
 * (a timeout, a lost connection), as opposed to refused before sending (or refused by the script,
 * see {@link notApplied}).
 */
export function maybeApplied(error: unknown): boolean {
  return !(typeof error === 'object' && error !== null && unsent.has(error));
}

/** Marks `error` as the failure of a call known not to have been applied. Returns it. */
export function notApplied<E extends object>(error: E): E {
  unsent.add(error);
  return error;
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * Error replies that say Redis cannot serve anything right now, rather than that this call was
 * wrong: loading its data, busy running a script, a replica cut from its master or one refusing
 * writes, a cluster down or resharding, out of memory.
 */
const UNAVAILABLE_REPLIES = new Set([
  'LOADING',
  'BUSY',
  'MASTERDOWN',
  'READONLY',
  'CLUSTERDOWN',
  'TRYAGAIN',
  'OOM',
]);

/**
 * The error code of an error Redis answered (`WRONGTYPE`, `ERR`, `BUSY`, ...), or `undefined` for
 * any other failure (a connection error, a closed client). node-redis rejects with Redis's own
 * text, which starts with the code in capitals; its connection errors do not (`Socket closed
 * unexpectedly`, `The client is closed`, `connect ECONNREFUSED ...`).
 */
export function replyCode(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  return /^([A-Z][A-Z0-9_]+)(?: |$)/.exec(error.message)?.[1];
}

/** Whether a failed call means Redis is down, not just that this call failed. */
function meansDown(error: unknown): boolean {
  const code = replyCode(error);
  return code === undefined || UNAVAILABLE_REPLIES.has(code);
}

/** Runs scripts with a timeout, fails fast while Redis is known to be down. */
export class ScriptRunner {
  readonly #client: RedisScriptingClient;
  readonly #options: RunnerOptions;
  readonly #listeners: RunnerListeners;
  #downUntil = 0;
  #probing = false;
  readonly #health: RunnerHealth = {
    available: true,
    succeeded: 0,
    failed: 0,
    refused: 0,
    lastError: undefined,
  };

  constructor(client: RedisScriptingClient, options: RunnerOptions, listeners: RunnerListeners) {
    this.#client = client;
    this.#options = options;
    this.#listeners = listeners;
  }

  /** A copy of the counters. */
  health(): RunnerHealth {
    return { ...this.#health };
  }

  /**
   * Runs `script` on `keys` (in one hash slot). Rejects with a {@link StoreUnavailableError} when
   * Redis does not answer within the timeout or answers an error; and without asking it when the
   * client is not connected, or Redis was found down less than `recheckMs` ago (then one call at a
   * time probes it). Only a timeout, a connection error or an "unavailable" reply (see
   * {@link replyCode}) marks Redis down; any other error reply fails this call alone. A call that
   * timed out may still run on Redis later (it was sent): callers must treat it as possibly
   * applied, or learn its fate from `options.onLateReply`.
   */
  async run(
    script: LuaScript,
    keys: string[],
    args: string[],
    operation: string,
    options: RunOptions = {},
  ): Promise<unknown> {
    if (options.background) return this.#background(script, keys, args, operation);
    const health = this.#health;
    if (this.#client.isReady === false) {
      health.refused += 1;
      throw notApplied(
        this.#down(new StoreUnavailableError(operation, 'not tried: the client is not connected')),
      );
    }
    const probe = !health.available;
    if (probe && (this.#probing || Date.now() < this.#downUntil)) {
      health.refused += 1;
      throw notApplied(
        new StoreUnavailableError(
          operation,
          `not tried: Redis is down (${health.lastError?.message})`,
          {
            cause: health.lastError,
          },
        ),
      );
    }
    if (probe) this.#probing = true;
    try {
      const reply = await within(this.#send(script, keys, args), this.#options.timeoutMs, options);
      health.succeeded += 1;
      this.#answered();
      return reply;
    } catch (cause) {
      health.failed += 1;
      const error = this.#failure(operation, cause);
      if (cause === TIMED_OUT || meansDown(cause)) throw this.#down(error);
      // Redis answered (an error about this call): it is up.
      this.#answered();
      throw error;
    } finally {
      if (probe) this.#probing = false;
    }
  }

  /** `EVALSHA`, and `EVAL` when Redis does not have the script. */
  #send(script: LuaScript, keys: string[], args: string[]): Promise<unknown> {
    const options = { keys, arguments: args };
    return this.#client
      .evalSha(script.sha, options)
      .catch((error: unknown) =>
        isNoScript(error) ? this.#client.eval(script.source, options) : Promise.reject(error),
      );
  }

  /** A call on the side: no gate, no counters, no transitions (see {@link RunOptions}). */
  async #background(
    script: LuaScript,
    keys: string[],
    args: string[],
    operation: string,
  ): Promise<unknown> {
    try {
      return await within(this.#send(script, keys, args), this.#options.timeoutMs, {});
    } catch (cause) {
      throw this.#failure(operation, cause);
    }
  }

  #failure(operation: string, cause: unknown): StoreUnavailableError {
    const timeoutMs = this.#options.timeoutMs;
    return cause === TIMED_OUT
      ? new StoreUnavailableError(operation, `no answer from Redis within ${timeoutMs} ms`, {
          timeoutMs,
        })
      : new StoreUnavailableError(operation, `Redis failed: ${describe(cause)}`, { cause });
  }

  /** Redis answered: the end of an outage, if there was one. */
  #answered(): void {
    const health = this.#health;
    if (!health.available) {
      health.available = true;
      health.lastError = undefined;
      this.#listeners.up();
    }
  }

  /** Records an outage (or its continuation): no calls for `recheckMs`. Returns `error`. */
  #down(error: StoreUnavailableError): StoreUnavailableError {
    const health = this.#health;
    health.lastError = error;
    this.#downUntil = Date.now() + this.#options.recheckMs;
    if (health.available) {
      health.available = false;
      this.#listeners.down(error);
    }
    return error;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const TIMED_OUT = Symbol('timed out');

/**
 * Settles like `promise`, or rejects with {@link TIMED_OUT} after `ms`. The promise keeps its
 * handlers either way, so its late rejection is never unhandled; its late value goes to
 * `onLateReply`.
 *
 * When the timer fires, the rejection waits for `setImmediate`: after an event loop that was busy
 * (a GC pause, a CPU-bound stretch), Node runs due timers before it reads the sockets, and a reply
 * that arrived in time would otherwise count as a timeout. The write it answers was applied; the
 * caller, told it timed out, would apply it a second time elsewhere.
 */
function within<T>(promise: Promise<T>, ms: number, { onLateReply }: RunOptions): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          timedOut = true;
          reject(TIMED_OUT);
        }),
      ms,
    );
    unrefTimer(timer);
    promise.then(
      (value) => {
        clearTimeout(timer);
        if (!timedOut) resolve(value);
        else if (onLateReply) {
          try {
            onLateReply(value);
          } catch (error) {
            process.emitWarning(`RedisStore: handling a late reply threw: ${String(error)}`);
          }
        }
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Runs Lua on the user's Redis client (node-redis or ioredis, through `clients.ts`): a script's
 * function by `FCALL` when the client and the server can (its library loaded by `FUNCTION LOAD`
 * when Redis answers "Function not found", after a restart or on a new cluster node), else
 * `EVALSHA`, then `EVAL` on `NOSCRIPT`; a timeout on every call; and after Redis failed to
 * answer, a short spell of failing fast instead of making every caller wait for the timeout again.
 *
 * "Redis is down" means no answer: a timeout, a connection error, or a reply saying Redis cannot
 * serve anything right now (`LOADING`, `BUSY`, `MASTERDOWN`, ...). Any other error Redis answers
 * (`WRONGTYPE` on one key, a Lua runtime error) fails that call only: Redis is answering.
 *
 * @module
 */
import { StoreUnavailableError } from '../shared/errors.js';
import { Call, type RunOptions, TIMED_OUT } from './call.js';
import { type RedisStoreClient, type ScriptCalls, scriptCalls } from './clients.js';
import { Deadlines } from './deadlines.js';
import type { LuaScript } from './lua/index.js';
import {
  isNoFunction,
  isNoScript,
  meansDown,
  notApplied,
  refusesFunctions,
  replyCode,
} from './replies.js';

export { maybeApplied, notApplied, replyCode } from './replies.js';

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

/** Runs scripts with a timeout, fails fast while Redis is known to be down. */
export class ScriptRunner {
  readonly #calls: ScriptCalls;
  readonly #options: RunnerOptions;
  readonly #listeners: RunnerListeners;
  readonly #deadlines: Deadlines;
  /** Whether scripts run as functions: `'off'` when the client cannot, or Redis refused them. */
  #functions: 'on' | 'off';
  #downUntil = 0;
  #probing = false;
  readonly #health: RunnerHealth = {
    available: true,
    succeeded: 0,
    failed: 0,
    refused: 0,
    lastError: undefined,
  };

  /** @throws TypeError when `client` is not a client `RedisStore` takes. */
  constructor(client: RedisStoreClient, options: RunnerOptions, listeners: RunnerListeners) {
    this.#calls = scriptCalls(client);
    this.#options = options;
    this.#listeners = listeners;
    this.#deadlines = new Deadlines(options.timeoutMs);
    this.#functions = this.#calls.fcall === undefined ? 'off' : 'on';
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
  run(
    script: LuaScript,
    keys: string[],
    args: string[],
    operation: string,
    options: RunOptions = {},
  ): Promise<unknown> {
    if (options.background) return this.#background(script, keys, args, operation);
    const health = this.#health;
    if (!this.#calls.ready()) {
      health.refused += 1;
      return Promise.reject(
        notApplied(
          this.#down(
            new StoreUnavailableError(operation, 'not tried: the client is not connected'),
          ),
        ),
      );
    }
    const probe = !health.available;
    if (probe && (this.#probing || Date.now() < this.#downUntil)) {
      health.refused += 1;
      return Promise.reject(
        notApplied(
          new StoreUnavailableError(
            operation,
            `not tried: Redis is down (${health.lastError?.message})`,
            { cause: health.lastError },
          ),
        ),
      );
    }
    if (probe) this.#probing = true;
    return new Promise<unknown>((resolve, reject) => {
      const call = new Call(this, operation, probe, options, resolve, reject);
      this.#deadlines.enqueue(call);
      const fn = script.function;
      if (fn === undefined || this.#functions === 'off') {
        call.await(this.#script(script, keys, args));
      } else {
        call.retry = { script, keys, args };
        call.await(this.#fcall(fn.name, keys, args));
      }
    });
  }

  /**
   * After `FCALL` failed: the call again, its library loaded (or as a script where Redis refuses
   * functions); `undefined` when the error is about something else.
   */
  recover(
    error: unknown,
    script: LuaScript,
    keys: string[],
    args: string[],
  ): Promise<unknown> | undefined {
    return isNoFunction(error) || refusesFunctions(error)
      ? this.#noFunction(error, script, keys, args)
      : undefined;
  }

  /** Ends a call that got a reply in time (see {@link Call}). */
  succeeded(probe: boolean): void {
    if (probe) this.#probing = false;
    this.#health.succeeded += 1;
    this.#answered();
  }

  /** Ends a call that failed or timed out; returns the error to reject it with. */
  failed(operation: string, cause: unknown, probe: boolean): StoreUnavailableError {
    if (probe) this.#probing = false;
    this.#health.failed += 1;
    const error = this.#failure(operation, cause);
    if (cause === TIMED_OUT || meansDown(cause)) return this.#down(error);
    // Redis answered (an error about this call): it is up.
    this.#answered();
    return error;
  }

  /** `FCALL` (only called while functions are on, so the client has it). */
  #fcall(name: string, keys: string[], args: string[]): Promise<unknown> {
    return (this.#calls.fcall as NonNullable<ScriptCalls['fcall']>)(name, keys, args);
  }

  /**
   * `FCALL` of the script's function, loading its library when Redis lacks it; `EVALSHA` for a
   * script with no function, or where functions are refused.
   */
  async #send(script: LuaScript, keys: string[], args: string[]): Promise<unknown> {
    const fn = script.function;
    if (fn === undefined || this.#functions === 'off') return this.#script(script, keys, args);
    try {
      return await this.#fcall(fn.name, keys, args);
    } catch (error) {
      return this.#noFunction(error, script, keys, args);
    }
  }

  #script(script: LuaScript, keys: string[], args: string[]): Promise<unknown> {
    const calls = this.#calls;
    return calls
      .evalSha(script.sha, keys, args)
      .catch((error: unknown) =>
        isNoScript(error) ? calls.eval(script.source, keys, args) : Promise.reject(error),
      );
  }

  /** After `FCALL` failed: load the library and call again, or fall back to scripts. */
  async #noFunction(
    error: unknown,
    script: LuaScript,
    keys: string[],
    args: string[],
  ): Promise<unknown> {
    const fn = script.function;
    if (fn === undefined) throw error;
    if (refusesFunctions(error)) {
      this.#functions = 'off';
      return this.#script(script, keys, args);
    }
    if (!isNoFunction(error)) throw error;
    try {
      await this.#calls.load(fn.library.source, keys[0] ?? '');
    } catch (loadError) {
      if (replyCode(loadError) === undefined || meansDown(loadError)) throw loadError;
      // Redis answered that it will not load it: scripts from now on.
      this.#functions = 'off';
      return this.#script(script, keys, args);
    }
    return this.#fcall(fn.name, keys, args);
  }

  /** A call on the side: no gate, no counters, no transitions (see {@link RunOptions}). */
  async #background(
    script: LuaScript,
    keys: string[],
    args: string[],
    operation: string,
  ): Promise<unknown> {
    try {
      return await new Promise((resolve, reject) => {
        const wait = this.#deadlines.start({ expire: () => reject(TIMED_OUT) });
        this.#send(script, keys, args).then(
          (reply) => {
            if (wait.done) return;
            wait.done = true;
            resolve(reply);
          },
          (error: unknown) => {
            if (wait.done) return;
            wait.done = true;
            reject(error);
          },
        );
      });
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

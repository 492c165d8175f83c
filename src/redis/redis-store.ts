/**
 * `RedisStore`: limiter state in Redis, so that every process sharing the Redis enforces one limit.
 *
 * @module
 */

import { z } from 'zod';
import { STATE_CHECK, type StateStore, type Transaction } from '../client/host/store.js';
import { checkHostState } from '../client/rules/state-check.js';
import { describe } from '../server/algorithms/logic.js';
import { nonNegativeInteger, parseOptions, positiveInteger } from '../server/options.js';
import type { LimiterSpec, RateLimitStore, StoreDecision, StoreRequest } from '../server/store.js';
import type { TakeResult } from '../server/types.js';
import { StoreUnavailableError } from '../shared/errors.js';
import { Emitter, type Listener } from '../shared/events.js';
import type { RunOptions } from './call.js';
import { isStoreClient, NOT_A_CLIENT, type RedisStoreClient } from './clients.js';
import { LIMITER_SCRIPTS, type LimiterScript } from './lua/index.js';
import { RedisClock } from './redis-clock.js';
import { readFields } from './reply-fields.js';
import { notApplied, type RunnerHealth, ScriptRunner } from './runner.js';
import { SharedState, type SharedStateCounters } from './shared-state.js';
import { STATE_CODECS, type StateCodec } from './states.js';

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /**
   * Prepended to every key this store writes, so that several applications (or test runs) can
   * share one Redis. Must not contain `{` or `}`: the store puts the hash tag after it.
   * @default 'limited-client:'
   */
  prefix?: string;
  /**
   * Longest wait for one Redis call, in milliseconds. Past it the call rejects with a
   * `StoreUnavailableError`. A take that rejects so is not applied: it carries a deadline (half
   * this after sending, in Redis's clock) past which Redis refuses it, and one that Redis ran in
   * time but answered too late is given back when its answer comes. A peek or a refund may still
   * be applied later (it was sent).
   * @default 200
   */
  timeoutMs?: number;
  /**
   * After a failed call, further calls fail at once for this long, in milliseconds, instead of each
   * waiting for the timeout; then one call at a time probes Redis until one succeeds.
   * @default 1000
   */
  recheckMs?: number;
  /**
   * Whose clock decides. `'redis'`: the script reads Redis's `TIME`, so every process agrees
   * whatever its own clock says, and the `now` that callers pass is ignored. `'caller'`: the `now`
   * each call passes (fake time in tests, or one trusted clock); processes with skewed clocks then
   * disagree about refills and windows by the skew, and keys are kept at least a minute (the store
   * cannot tell how fast a caller's clock runs). Client side, likewise: with `'redis'` the moments
   * recorded in a host's shared state are on Redis's clock (`now()`), with `'caller'` on each
   * process's own clock (made steady).
   * @default 'redis'
   */
  timeSource?: 'redis' | 'caller';
  /**
   * How long a concurrency slot can be held, in milliseconds: each take of a `ConcurrencyLimit` is
   * a lease that expires this long after the take, released or not. A slot whose release never
   * reached Redis (its process died, the release failed) comes back after this long, however busy
   * the key. It must exceed your longest request: a request still running past it no longer holds
   * its slot. (The memory store has no leases: its releases cannot be lost while its process
   * lives.)
   * @default 600_000 (10 minutes)
   */
  inFlightTtlMs?: number;
  /**
   * Client side: while Redis is unavailable, each process runs on a local copy of its hosts' state
   * (seeded from the shared state it saw last), with this share of the shared limits: the client
   * bucket's rate and burst and the retry budget's floor. About one over the number of processes
   * sharing the Redis, from 0 (exclusive) to 1.
   * @default 0.25
   */
  localShare?: number;
  /**
   * Client side: local updates kept during an outage, over every host, to be applied to the
   * shared state when Redis is back (`health().pending`). Past it, the oldest updates of the host
   * updated least recently are dropped (counted in `health().dropped`), as are those of a host
   * whose pipeline the client dropped. When Redis is back they are replayed
   * `REPLAY_CONCURRENCY` (4) hosts at a time.
   * @default 10_000
   */
  maxReplay?: number;
}

/** What the server side (the limiter scripts) did about takes whose answer came too late. */
export interface LimiterCounters {
  /** Takes Redis refused because it ran them after their deadline: not applied. */
  late: number;
  /**
   * Admitted takes whose answer came after the timeout (Redis ran them in time, the reply was
   * slow): given back once the answer came, since their callers were told they failed.
   */
  givenBack: number;
}

/**
 * Health of a {@link RedisStore}, from {@link RedisStore.health}: whether Redis is answering, the
 * calls that succeeded, failed or were refused; on the server side, the takes refused as late or
 * given back; and on the client side, the conflicting writes and the updates run on local state,
 * replayed, or dropped.
 */
export type RedisStoreHealth = RunnerHealth & LimiterCounters & SharedStateCounters;

/** Each event's payload (what its listener gets), for the emitter. */
type EventPayloads = { [E in keyof RedisStoreEvents]: Parameters<RedisStoreEvents[E]>[0] };

/** What a {@link RedisStore} reports to {@link RedisStore.on} listeners. */
export interface RedisStoreEvents {
  /**
   * A call got no answer (a timeout, a connection error, or Redis saying it cannot serve: `LOADING`,
   * `BUSY`, ...) while Redis was thought to be up: the start of an outage (once per outage). An
   * error about one call (`WRONGTYPE` on a key, a script error) fails that call, not the store.
   */
  down: (error: StoreUnavailableError) => void;
  /** A call succeeded after an outage. */
  up: () => void;
  /**
   * Client side: a host's state key held something that is not client state this version reads: a
   * value of another type, text that is not JSON or longer than `MAX_STATE_CHARS` (1 MiB), JSON of
   * the wrong shape, or a state of another format (another version of the package sharing the
   * Redis). The client is not told (its update runs on no state), the key is replaced by the next
   * write, and `health().corrupt` counts it. `error.key` is the Redis key; `error.message` names
   * what was wrong (the field, for a wrong shape).
   */
  'store-error': (error: Error & { readonly key: string }) => void;
}

/** Keys are kept at least this long when callers' clocks decide (`timeSource: 'caller'`). */
export const CALLER_TIME_MIN_TTL_MS = 60_000;

/** Every default of {@link RedisStoreOptions}, as the store applies them. */
export const DEFAULTS = Object.freeze({
  prefix: 'limited-client:',
  timeoutMs: 200,
  recheckMs: 1000,
  timeSource: 'redis' as const,
  inFlightTtlMs: 600_000,
  localShare: 0.25,
  maxReplay: 10_000,
});

const optionsSchema = z.strictObject({
  prefix: z
    .string({ error: 'must be a string' })
    .regex(/^[^{}]*$/, { error: 'must not contain { or }' })
    .optional(),
  timeoutMs: positiveInteger.optional(),
  recheckMs: nonNegativeInteger.optional(),
  timeSource: z.enum(['redis', 'caller'], { error: "must be 'redis' or 'caller'" }).optional(),
  inFlightTtlMs: positiveInteger.optional(),
  localShare: z
    .number({ error: 'must be a number above 0, up to 1' })
    .gt(0, { error: 'must be a number above 0, up to 1' })
    .max(1, { error: 'must be a number above 0, up to 1' })
    .optional(),
  maxReplay: nonNegativeInteger.optional(),
});

/**
 * State in Redis, shared by every process using the same Redis: both sides of limited-client.
 *
 * **Server side** (`RateLimitStore`): pass it as the `store` of an algorithm, or of the mock server,
 * and every process using the same Redis (and the same limiter names) enforces one limit together.
 * Each take, peek or refund is one `EVALSHA` of the algorithm's Lua script (loaded with `EVAL` when
 * Redis answers `NOSCRIPT`, after a restart or on a new cluster node), so the read, the decision and
 * the write are one atomic step on Redis. The scripts are the algorithms' TypeScript arithmetic
 * line for line, and decide exactly as the memory store does (given the same clock: with the
 * default `timeSource: 'redis'` they decide on Redis's time).
 * - Time: Redis's `TIME` by default (see `timeSource`), so callers' clocks do not matter; the
 *   `now` a caller passes is then ignored.
 * - Keys: `${prefix}limit:${limiter name}:{${key}}`, a hash holding the algorithm's state, with a
 *   TTL set to when the state becomes equivalent to a fresh key. The braces are a hash tag:
 *   everything one client key has in this store lives in one Redis Cluster slot. The `limit:`
 *   segment keeps limiter keys apart from the client side's `state:` keys, whatever the names.
 * - Concurrency limits keep leases instead of a count (a sorted set, one member per unit in flight,
 *   scored with its expiry): each take's slots come back `inFlightTtlMs` after it if no release
 *   reached Redis, whatever the traffic. Results are the memory store's; receipts differ (each
 *   take's lease, which its refund removes).
 *
 * **Client side** (`StateStore`): pass it as the `store` of `LimitedClient` or `wrapFetch`, and the
 * processes calling a host share its client-side token bucket, what the server taught about its
 * limits (one process told "remaining 0 until T" makes all of them wait) and its retry budget. Each
 * host's state is JSON in `${prefix}state:{<origin>}` (`{<origin>#<partition>}` for
 * a partition), updated with optimistic concurrency (see `shared-state.ts`). While Redis is unavailable each process runs on a local copy
 * within `localShare` of the limits, and hands what it did to the shared state when Redis is back.
 *
 * **Failures**: every call has a timeout (`timeoutMs`), and for `recheckMs` after Redis failed to
 * answer calls fail at once. Server side, a failed call rejects with a `StoreUnavailableError`: the
 * mock server turns it into its route's fail mode; an algorithm used directly rejects, and you
 * choose. A take that rejects was not applied (refused past its deadline, or given back when its
 * late answer came), so it spends nothing and holds no concurrency slot. Client side, nothing
 * rejects: the update runs on local state.
 *
 * The store uses the client it is given and never closes it.
 *
 * @example
 * import { createClient } from 'redis';
 * import { LimitedClient } from 'limited-client';
 * import { TokenBucket } from 'limited-client/server';
 * import { RedisStore } from 'limited-client/redis';
 *
 * const redis = await createClient({ url: process.env.REDIS_URL }).connect();
 * const store = new RedisStore(redis, { prefix: 'myapp:' });
 * // Server side: one limit per tenant, whichever instance decides.
 * const perTenant = new TokenBucket({ capacity: 20, refillPerSecond: 5, store, name: 'tenant' });
 * const { allowed, retryAfterMs } = await perTenant.take(tenantId);
 * // Client side: every process together stays under 10 requests a second to the API.
 * const api = new LimitedClient('https://api.example.com', { rate: 10, store });
 */
export class RedisStore implements RateLimitStore, StateStore {
  /** The prefix of every key this store writes. */
  readonly prefix: string;
  /**
   * The check of a host's state read from Redis, which the client hands its transactions (see
   * `STATE_CHECK` in `client/store.ts`): a state another process wrote is checked before a rule
   * reads it.
   */
  readonly [STATE_CHECK] = checkHostState;
  readonly #runner: ScriptRunner;
  readonly #state: SharedState;
  readonly #timeSource: 'redis' | 'caller';
  /** The start of every limiter's configuration: the least TTL and the lease duration. */
  readonly #ttlArgs: [string, string];
  /** The deadlines of takes, in Redis's clock. */
  readonly #clock: RedisClock;
  readonly #counters: LimiterCounters = { late: 0, givenBack: 0 };
  readonly #configs = new WeakMap<LimiterSpec, Readonly<Record<Operation, string>>>();
  /** What the runner's calls of takes and refunds hand their replies to (bound once). */
  readonly #takes: StoreCalls = {
    late: (spec, key, request, reply) => this.#lateTake(spec, key, request, reply),
    decided: (spec, request, sentAt, reply) => this.#decided(spec, request, sentAt, reply),
    refunded: (sentAt, reply) => {
      // A release that names its lease answers 'ok' alone: no clock to read.
      if (reply !== 'ok') this.#calibrate(sentAt, reply);
    },
  };
  /** The package's one emitter; a listener that throws is a warning, never a failed call. */
  readonly #events = new Emitter<EventPayloads>((error, name) =>
    process.emitWarning(`RedisStore: a '${String(name)}' listener threw: ${String(error)}`),
  );

  /**
   * @param client a connected client or cluster: node-redis 5 or 6 (`createClient()`,
   *   `createCluster()` from the `redis` package) or ioredis 5 or 6 (`new Redis()`,
   *   `new Cluster()`). The store never closes it.
   * @throws TypeError for anything else; InvalidOptionError for a bad option, naming it.
   */
  constructor(client: RedisStoreClient, options: RedisStoreOptions = {}) {
    if (!isStoreClient(client)) throw new TypeError(NOT_A_CLIENT);
    const parsed = { ...DEFAULTS, ...stripUndefined(parseOptions(optionsSchema, options)) };
    this.prefix = parsed.prefix;
    this.#timeSource = parsed.timeSource;
    const minTtl = parsed.timeSource === 'caller' ? CALLER_TIME_MIN_TTL_MS : 0;
    this.#ttlArgs = [String(minTtl), String(parsed.inFlightTtlMs)];
    this.#clock = new RedisClock(parsed.timeoutMs);
    this.#runner = new ScriptRunner(
      client,
      { timeoutMs: parsed.timeoutMs, recheckMs: parsed.recheckMs },
      {
        down: (error) => this.#emit('down', error),
        up: () => {
          this.#state.replayAll();
          this.#emit('up');
        },
      },
    );
    this.#state = new SharedState(
      this.#runner,
      (key) => `${this.prefix}state:{${key}}`,
      { localShare: parsed.localShare, maxReplay: parsed.maxReplay },
      this.#clock,
      (error) => this.#emit('store-error', error),
    );
  }

  /** The Redis key holding `key` of the limiter named `name`. */
  keyOf(name: string, key: string): string {
    return `${this.prefix}limit:${name}:{${key}}`;
  }

  /**
   * Atomically takes `request.cost` units of `key` (see `RateLimitStore.take`). Rejects with a
   * `StoreUnavailableError` when Redis does not answer in time or is down; a take that rejects is
   * not applied (see `timeoutMs`).
   */
  take(spec: LimiterSpec, key: string, request: StoreRequest): Promise<StoreDecision> {
    const sentAt = this.#clock.now();
    const call = new TakeCall(this.#takes, spec, key, request, sentAt);
    try {
      return this.#run(spec, key, 'take', request, undefined, call, sentAt) as Promise<never>;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The decision of a take Redis answered in time, from its reply (run by the runner's call, see
   * {@link TakeCall}: no promise of the store's own per take).
   */
  #decided(spec: LimiterSpec, request: StoreRequest, sentAt: number, text: string): StoreDecision {
    const reply = this.#calibrate(sentAt, text);
    if (text.charCodeAt(0) === LATE_CODE) {
      this.#counters.late += 1;
      throw notApplied(
        new StoreUnavailableError(
          'take',
          'Redis ran it after its deadline (Redis is slow): refused, not applied',
        ),
      );
    }
    const codec = STATE_CODECS[spec.algorithm];
    if (codec === undefined) {
      const result = toResult(reply);
      const receipt = reply[7];
      return receipt === undefined || Number.isNaN(receipt) ? { result } : { result, receipt };
    }
    if (reply[0] !== 1)
      return { result: this.#describe(spec, request, reply, codec, request.cost) };
    // An admitted take: the state after it, its receipt and delay as consume() gives them.
    const now = this.#now(request, reply);
    const state = codec.decode(reply, STATE_AT);
    const result = describe(spec.logic, spec.config, state, now, 0);
    if (codec.receipt === undefined) return { result };
    const receipt = codec.receipt(state as never, reply, STATE_AT + codec.size);
    if (codec.delay !== undefined) result.delayMs = codec.delay(receipt, now);
    return { result, receipt };
  }

  /** Describes `key` without changing it (see `RateLimitStore.peek`). */
  async peek(spec: LimiterSpec, key: string, request: StoreRequest): Promise<TakeResult> {
    const sentAt = this.#clock.now();
    const reply = this.#calibrate(
      sentAt,
      await this.#run(spec, key, 'peek', request, undefined, {}, sentAt),
    );
    const codec = STATE_CODECS[spec.algorithm];
    return codec === undefined
      ? toResult(reply)
      : this.#describe(spec, request, reply, codec, request.cost);
  }

  /** Atomically gives back units of an admitted take (see `RateLimitStore.refund`). */
  refund(
    spec: LimiterSpec,
    key: string,
    request: StoreRequest & { receipt?: number },
  ): Promise<void> {
    const sentAt = this.#clock.now();
    const call = new RefundCall(this.#takes, sentAt);
    try {
      return this.#run(
        spec,
        key,
        'refund',
        request,
        request.receipt,
        call,
        sentAt,
      ) as Promise<never>;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Client side (`StateStore`): runs `transaction` on the shared state of `key` with optimistic
   * concurrency, or while Redis is unavailable on a local copy within `localShare`; never rejects
   * because of Redis. Called by `LimitedClient` and `wrapFetch` given this store as `store`.
   */
  update<S, R>(key: string, transaction: Transaction<S, R>, ttlMs: number): Promise<R> {
    return this.#state.update(key, transaction, ttlMs);
  }

  /**
   * Client side (`StateStore`): reads the shared state of `key` without renewing its expiry, for
   * `stats()`; while Redis is unavailable, the local copy. Never rejects because of Redis.
   */
  get<S>(key: string): Promise<S | undefined> {
    return this.#state.get<S>(key);
  }

  /**
   * Client side (`StateStore`): Redis's time now, epoch milliseconds, as this process estimates it
   * (its monotonic clock plus an offset measured on Redis's replies); `undefined` before the first
   * reply, and with `timeSource: 'caller'`. The client records the moments in a host's shared state
   * (a hold's end, a reset, a refill) on this clock, so processes whose clocks disagree share one
   * time line.
   */
  now(): number | undefined {
    return this.#timeSource === 'redis' ? this.#clock.redisNow() : undefined;
  }

  /**
   * Client side (`StateStore`): the client dropped the pipeline of `key`. What this process keeps
   * of it goes: its local copy, its updates waiting to be replayed after an outage (counted in
   * `health().dropped`), the state last seen. The shared state stays. Several clients sharing
   * this store and a host: the first to drop it drops them for all (the others run on the shared
   * state, or, during an outage, start again from the shared state seen last).
   */
  forget(key: string): void {
    this.#state.forget(key);
  }

  /** Client side (`StateStore`): deletes the state of `key`, shared and local. */
  delete(key: string): Promise<void> {
    return this.#state.delete(key);
  }

  /** Whether Redis is answering, and what the store did (see {@link RedisStoreHealth}). */
  health(): RedisStoreHealth {
    return { ...this.#runner.health(), ...this.#counters, ...this.#state.counters };
  }

  /**
   * Listens to the start (`down`) and the end (`up`) of Redis outages: one event each per outage,
   * suited to logs. Returns a function that removes the listener.
   * @example
   * store.on('down', (error) => console.warn(`rate limits degraded: ${error.message}`));
   */
  on<E extends keyof RedisStoreEvents>(event: E, listener: RedisStoreEvents[E]): () => void {
    if (event !== 'down' && event !== 'up' && event !== 'store-error') {
      throw new TypeError(`unknown event ${JSON.stringify(event)}: 'down', 'up' or 'store-error'`);
    }
    return this.#events.on(event, listener as Listener<EventPayloads[E]>);
  }

  #emit<E extends keyof RedisStoreEvents>(event: E, ...args: Parameters<RedisStoreEvents[E]>) {
    this.#events.emit(event, args[0] as EventPayloads[E]);
  }

  /**
   * The answer of a take that came after its caller was told it failed. Refused as late: nothing
   * to do. Admitted: Redis spent units (or holds slots) for a request that was decided without
   * them, so they are given back, even while Redis is thought to be down (it just answered).
   */
  #lateTake(spec: LimiterSpec, key: string, request: StoreRequest, text: string): void {
    if (text.charCodeAt(0) === LATE_CODE) {
      this.#counters.late += 1;
      return;
    }
    const reply: Reply = [];
    readFields(text, reply);
    if (reply[0] !== 1) return;
    const codec = STATE_CODECS[spec.algorithm];
    let receipt: number | undefined;
    if (codec === undefined) {
      receipt = reply[7] === undefined || Number.isNaN(reply[7]) ? undefined : reply[7];
    } else if (codec.receipt !== undefined) {
      const state = codec.decode(reply, STATE_AT);
      receipt = codec.receipt(state as never, reply, STATE_AT + codec.size);
    }
    this.#run(spec, key, 'refund', request, receipt, { background: true }).then(
      () => {
        this.#counters.givenBack += 1;
      },
      // Not given back: a lease expires after `inFlightTtlMs`, other units with their window.
      () => {},
    );
  }

  /**
   * One call of the limiter's function. Not `async`, and the caller calibrates the clock: one
   * promise layer less per decision. Arguments as `lua/common.ts` reads them, the trailing absent
   * ones left out.
   */
  #run(
    spec: LimiterSpec,
    key: string,
    operation: Operation,
    request: StoreRequest,
    receipt: number | undefined,
    options: RunOptions = {},
    sentAt = this.#clock.now(),
  ): Promise<string> {
    const script = LIMITER_SCRIPTS[spec.algorithm] as LimiterScript | undefined;
    if (script === undefined) {
      throw new TypeError(
        `RedisStore: no Lua script for the algorithm ${JSON.stringify(spec.algorithm)}`,
      );
    }
    const args = [this.#configOf(spec, script, operation)];
    // Only takes have a deadline: a peek changes nothing, and a refund is welcome however late.
    const deadline = operation === 'take' ? this.#clock.deadline(sentAt) : '';
    const cost = request.cost === 1 ? '' : String(request.cost);
    const now = this.#timeSource === 'caller' ? String(request.now) : '';
    // Trailing absent arguments are left out (see lua/common.ts).
    if (receipt !== undefined) args.push(deadline, cost, now, String(receipt));
    else if (now !== '') args.push(deadline, cost, now);
    else if (cost !== '') args.push(deadline, cost);
    else if (deadline !== '') args.push(deadline);
    return this.#runner.run(
      script,
      [this.keyOf(spec.name, key)],
      args,
      operation,
      options,
    ) as Promise<string>;
  }

  /**
   * Reads a reply's fields (into {@link FIELDS}: read them before the next `await`) and measures
   * Redis's clock on it, for a call sent at `sentAt` (see `RedisClock`).
   */
  #calibrate(sentAt: number, text: string): Reply {
    const reply = FIELDS;
    readFields(text, reply);
    const clock = this.#clock;
    // To the microsecond: the client state's time line is read from the same offset.
    clock.calibrate(sentAt, clock.now(), (reply[1] as number) * 1000 + (reply[2] as number) / 1000);
    return reply;
  }

  /** The time the function decided on: the caller's, or Redis's from the reply. */
  #now(request: StoreRequest, reply: Reply): number {
    return this.#timeSource === 'caller' ? request.now : redisNow(reply);
  }

  /**
   * The result of a function that replied with its state: the algorithm's own `describe()` on
   * that state, at the time the function decided on (Redis's, or the caller's).
   */
  #describe(
    spec: LimiterSpec,
    request: StoreRequest,
    reply: Reply,
    codec: StateCodec,
    cost: number,
  ): TakeResult {
    const first = reply[STATE_AT];
    const state =
      first === undefined || Number.isNaN(first) ? undefined : codec.decode(reply, STATE_AT);
    return describe(spec.logic, spec.config, state, this.#now(request, reply), cost);
  }

  /**
   * The operation and the limiter's configuration as the functions read them (`args[1]`, see
   * `lua/common.ts`): the operation, the least TTL, the lease duration and the algorithm's two
   * parameters; made once per limiter and operation.
   */
  #configOf(spec: LimiterSpec, script: LimiterScript, operation: Operation): string {
    const texts = this.#configs.get(spec);
    if (texts === undefined) {
      const config = spec.config as Record<string, unknown>;
      const params = script.params.map((name) => {
        const value = config[name];
        if (typeof value !== 'number' || !Number.isFinite(value)) {
          throw new TypeError(`RedisStore: ${spec.name}: parameter ${name} is not a finite number`);
        }
        return String(value);
      });
      const rest = [...this.#ttlArgs, ...params].join(' ');
      const made = { take: `take ${rest}`, peek: `peek ${rest}`, refund: `refund ${rest}` };
      this.#configs.set(spec, made);
      return made[operation];
    }
    return texts[operation];
  }
}

/**
 * A limiter function's reply as numbers (see `lua/common.ts` and `readFields`): a status (1, 0,
 * or NaN for `'late'` and `'ok'`: those are told apart by the text), Redis's clock as `TIME` gave
 * it (seconds, microseconds; absent from the `'ok'` of a concurrency release that names its
 * lease), then the state decided on (for the concurrency limit, its units in flight; NaN for the
 * empty state of a fresh key) or, for the sliding log, the result.
 */
type Reply = number[];

/**
 * The fields of the reply being read: one array for every call, since each is read in full
 * between its reply and the next `await` (no allocation per decision).
 */
const FIELDS: Reply = [];

/** Where the state (or the result) starts in a {@link Reply}. */
const STATE_AT = 3;

/** Redis's clock in epoch milliseconds, as the functions compute it from `TIME`; NaN if absent. */
function redisNow(reply: Reply): number {
  return (reply[1] as number) * 1000 + Math.floor((reply[2] as number) / 1000);
}

/** What the runner's calls made by the store hand their replies to (see {@link TakeCall}). */
interface StoreCalls {
  late(spec: LimiterSpec, key: string, request: StoreRequest, reply: string): void;
  decided(spec: LimiterSpec, request: StoreRequest, sentAt: number, reply: string): StoreDecision;
  refunded(sentAt: number, reply: string): void;
}

/**
 * The `RunOptions` of a take: its reply read into the decision in the runner's own promise, and
 * its answer after its caller was told it failed handed to the store (a take to give back).
 */
class TakeCall implements RunOptions {
  constructor(
    readonly store: StoreCalls,
    readonly spec: LimiterSpec,
    readonly key: string,
    readonly request: StoreRequest,
    readonly sentAt: number,
  ) {}

  decode(reply: unknown): StoreDecision {
    return this.store.decided(this.spec, this.request, this.sentAt, reply as string);
  }

  onLateReply(reply: unknown): void {
    this.store.late(this.spec, this.key, this.request, reply as string);
  }
}

/** The `RunOptions` of a refund: its reply read in the runner's own promise. */
class RefundCall implements RunOptions {
  constructor(
    readonly store: StoreCalls,
    readonly sentAt: number,
  ) {}

  decode(reply: unknown): undefined {
    this.store.refunded(this.sentAt, reply as string);
    return undefined;
  }
}

/** The first character of `'late'`, the status of a take Redis refused as run after its deadline. */
const LATE_CODE = 'l'.charCodeAt(0);

/** What a limiter function does. */
type Operation = 'take' | 'peek' | 'refund';

/**
 * A whole result (`'<1|0> <seconds> <micros> <limit> <remaining> <reset> <retry> <receipt>'`) as
 * a `TakeResult` (`+ 0` turns a `-0` into `0`).
 */
function toResult(reply: Reply): TakeResult {
  return {
    allowed: reply[0] === 1,
    limit: (reply[3] as number) + 0,
    remaining: (reply[4] as number) + 0,
    resetMs: (reply[5] as number) + 0,
    retryAfterMs: (reply[6] as number) + 0,
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

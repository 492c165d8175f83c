/**
 * The client side of `RedisStore`: the client's `StateStore` (one read-modify-write of a host's
 * JSON state) on Redis, shared by every process, and on state local to this process while Redis is
 * unavailable.
 *
 * - **Optimistic concurrency.** The transaction runs here, in JavaScript, on the state this process
 *   last saw; one compare-and-set script writes the result only if the state's version is still the
 *   one it ran on, and otherwise answers with the current state, on which it runs again. A process
 *   that is the only writer of a key pays one round trip per update.
 * - **Lanes.** Updates of one key from this process go one write at a time; those that arrive while
 *   a write is in flight go together in the next one (applied in order, one round trip), so a
 *   process never conflicts with itself and a busy key costs a round trip per batch, not per call.
 * - **Local share.** When Redis times out or is down, the batch runs on a local copy of the state
 *   (seeded from the last shared state seen) with the transactions' `share` argument set to
 *   `localShare`, so the processes on local state together stay near the shared limits.
 * - **Replay.** What ran locally is also kept, in order, and applied to the shared state by the
 *   first write after Redis is back, so the shared state learns what this process did meanwhile
 *   (tokens spent, requests that ended, retries taken). Without it, a request admitted on shared
 *   state that ended during the outage would stay counted in flight there.
 * - **Deadline.** Each write carries a deadline in Redis's time (half the timeout after it is sent,
 *   from an offset measured on earlier replies); Redis refuses a write it runs later, so a write that
 *   timed out here (and ran locally instead) is not applied twice when a paused Redis resumes.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { MemoryStateStore, type Transaction } from '../client/store.js';
import { StoreUnavailableError } from '../errors.js';
import { luaScript } from './lua/index.js';
import type { ScriptRunner } from './runner.js';

/**
 * Compare-and-set of one key's state, a hash `{ v: version, s: JSON }`. `ARGV`: the expected
 * version (`''`: no key), the mode (`set`, `keep`: only refresh the TTL, `del`), the new version,
 * the JSON, the TTL in milliseconds, the deadline in Redis epoch milliseconds (`''`: none). Replies
 * `{ status, redis now, current version, current JSON }` with status `ok`, `conflict` or `late`.
 */
export const STATE_SCRIPT = luaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[6] ~= '' and now > tonumber(ARGV[6]) then return { 'late', now } end
local current = redis.call('HMGET', KEYS[1], 'v', 's')
local version = current[1] or ''
if version ~= ARGV[1] then return { 'conflict', now, version, current[2] or '' } end
if ARGV[2] == 'set' then
  redis.call('HSET', KEYS[1], 'v', ARGV[3], 's', ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
elseif ARGV[2] == 'del' then
  redis.call('DEL', KEYS[1])
elseif version ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
end
return { 'ok', now }
`);

/** Conflicting writes one batch tolerates before it runs locally instead. */
const MAX_ATTEMPTS = 20;
/** Shared states remembered (the versions this process last saw), least recently written first out. */
const MAX_CACHED = 10_000;

type AnyTransaction = Transaction<unknown, unknown>;

interface Pending {
  transaction: AnyTransaction;
  ttlMs: number;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** What the shared state has done, for `RedisStore.health()`. */
export interface SharedStateCounters {
  /** Writes refused because another process wrote first (each is retried on the new state). */
  conflicts: number;
  /** Updates run on local state because Redis was unavailable. */
  localUpdates: number;
  /** Local updates since applied to the shared state. */
  replayed: number;
  /** Local updates dropped unreplayed (past `maxReplay` per key during one outage). */
  dropped: number;
}

/** Options, normalised by `RedisStore`. */
export interface SharedStateOptions {
  /** The runner's timeout, in milliseconds: writes get half of it as their deadline. */
  timeoutMs: number;
  /** The `share` passed to transactions on local state. */
  localShare: number;
  /** Local updates kept per key for replay. */
  maxReplay: number;
}

/** The client's state store on Redis; see the module comment. */
export class SharedState {
  readonly counters: SharedStateCounters = {
    conflicts: 0,
    localUpdates: 0,
    replayed: 0,
    dropped: 0,
  };
  readonly #runner: ScriptRunner;
  readonly #redisKey: (key: string) => string;
  readonly #options: SharedStateOptions;
  /** This store's prefix for the versions it writes: unique, so no version is ever reused. */
  readonly #writer = randomUUID().slice(0, 13);
  #written = 0;
  readonly #seen = new Map<string, { version: string; json: string }>();
  readonly #lanes = new Map<string, Pending[]>();
  readonly #local = new MemoryStateStore();
  readonly #toReplay = new Map<string, Pending[]>();
  /** Redis's clock minus this process's, in milliseconds; unknown until a first reply. */
  #offsetMs: number | undefined;

  constructor(
    runner: ScriptRunner,
    redisKey: (key: string) => string,
    options: SharedStateOptions,
  ) {
    this.#runner = runner;
    this.#redisKey = redisKey;
    this.#options = options;
  }

  /** Runs `transaction` on the state of `key` (see `StateStore.update`). Never rejects for Redis. */
  update<S, R>(key: string, transaction: Transaction<S, R>, ttlMs: number): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const pending: Pending = {
        transaction: transaction as AnyTransaction,
        ttlMs,
        resolve: resolve as (value: unknown) => void,
        reject,
      };
      const lane = this.#lanes.get(key);
      if (lane) lane.push(pending);
      else {
        this.#lanes.set(key, [pending]);
        void this.#drain(key);
      }
    });
  }

  /** Deletes the state of `key`, shared and local. */
  async delete(key: string): Promise<void> {
    await this.update(key, () => [undefined, undefined], 1);
  }

  /** Applies what ran locally to the shared state, for every key that has some (after an outage). */
  replayAll(): void {
    for (const [key, log] of this.#toReplay) {
      if (log.length > 0 && !this.#lanes.has(key)) {
        const ttlMs = Math.max(...log.map((p) => p.ttlMs));
        this.update(key, (state) => [state, undefined], ttlMs).catch(() => {});
      }
    }
  }

  /** Commits the lane of `key` batch by batch until it is empty. */
  async #drain(key: string): Promise<void> {
    const lane = this.#lanes.get(key) as Pending[];
    while (lane.length > 0) {
      const batch = lane.splice(0);
      let outcomes: Outcome[];
      try {
        outcomes = await this.#commit(key, batch);
      } catch (error) {
        outcomes = batch.map(() => ({ ok: false, error }));
      }
      batch.forEach((pending, i) => {
        const outcome = outcomes[i] as Outcome;
        if (outcome.ok) pending.resolve(outcome.value);
        else pending.reject(outcome.error);
      });
    }
    this.#lanes.delete(key);
  }

  async #commit(key: string, batch: Pending[]): Promise<Outcome[]> {
    try {
      return await this.#commitShared(key, batch);
    } catch {
      // Redis is unavailable (or too contended): this batch runs on local state.
      return this.#commitLocal(key, batch);
    }
  }

  /** Runs the replay log and `batch` on the shared state and writes it back if unchanged since. */
  async #commitShared(key: string, batch: Pending[]): Promise<Outcome[]> {
    const log = this.#toReplay.get(key) ?? [];
    const replaying = log.length;
    const ttlMs = Math.max(...batch.map((p) => p.ttlMs), ...log.map((p) => p.ttlMs));
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const seen = this.#seen.get(key);
      let state: unknown = seen === undefined ? undefined : JSON.parse(seen.json);
      for (let i = 0; i < replaying; i++) state = run(log[i] as Pending, state, 1).state;
      const outcomes = batch.map((pending) => {
        const ran = run(pending, state, 1);
        state = ran.state;
        return ran.outcome;
      });
      const json = state === undefined ? undefined : JSON.stringify(state);
      const mode = json === undefined ? 'del' : json === seen?.json ? 'keep' : 'set';
      const expected = seen?.version ?? '';
      const version = mode === 'set' ? `${this.#writer}.${++this.#written}` : expected;
      const sentAt = Date.now();
      const deadline =
        this.#offsetMs === undefined
          ? ''
          : String(Math.floor(sentAt + this.#offsetMs + this.#options.timeoutMs / 2));
      const reply = (await this.#runner.run(
        STATE_SCRIPT,
        this.#redisKey(key),
        [expected, mode, version, json ?? '', String(ttlMs), deadline],
        'update',
      )) as [string, number, string?, string?];
      const [status, redisNow, currentVersion = '', currentJson = ''] = reply;
      this.#calibrate(sentAt, Date.now(), redisNow);
      if (status === 'late') {
        throw new StoreUnavailableError('update', 'Redis ran the write after its deadline');
      }
      if (status === 'ok') {
        this.#remember(key, mode === 'del' ? undefined : { version, json: json as string });
        if (replaying > 0) this.#replayed(key, log, replaying);
        return outcomes;
      }
      this.counters.conflicts += 1;
      this.#remember(
        key,
        currentVersion === '' ? undefined : { version: currentVersion, json: currentJson },
      );
    }
    throw new StoreUnavailableError('update', `${MAX_ATTEMPTS} conflicting writes in a row`);
  }

  /** Runs `batch` on this process's copy of the state, on the local share, and logs it for replay. */
  #commitLocal(key: string, batch: Pending[]): Outcome[] {
    let log = this.#toReplay.get(key);
    if (log === undefined) {
      log = [];
      this.#toReplay.set(key, log);
    }
    const outcomes: Outcome[] = [];
    for (const pending of batch) {
      let outcome: Outcome = { ok: true, value: undefined };
      this.#local.update(
        key,
        (current) => {
          const ran = run(pending, current ?? this.#lastShared(key), this.#options.localShare);
          outcome = ran.outcome;
          return [ran.state, undefined];
        },
        pending.ttlMs,
      );
      outcomes.push(outcome);
      log.push(pending);
    }
    this.counters.localUpdates += batch.length;
    const excess = log.length - this.#options.maxReplay;
    if (excess > 0) {
      log.splice(0, excess);
      this.counters.dropped += excess;
    }
    return outcomes;
  }

  /** The first `count` logged updates reached the shared state: forget them, and the local copy. */
  #replayed(key: string, log: Pending[], count: number): void {
    log.splice(0, count);
    this.counters.replayed += count;
    if (log.length === 0) {
      this.#toReplay.delete(key);
      this.#local.delete(key);
    }
  }

  /** The shared state this process saw last, parsed afresh: the seed of a local copy. */
  #lastShared(key: string): unknown {
    const seen = this.#seen.get(key);
    return seen === undefined ? undefined : JSON.parse(seen.json);
  }

  #remember(key: string, entry: { version: string; json: string } | undefined): void {
    this.#seen.delete(key);
    if (entry === undefined) return;
    this.#seen.set(key, entry);
    if (this.#seen.size > MAX_CACHED) {
      const oldest = this.#seen.keys().next().value as string;
      this.#seen.delete(oldest);
    }
  }

  /** Takes Redis's clock from a reply whose round trip was short enough to date it. */
  #calibrate(sentAt: number, receivedAt: number, redisNow: number): void {
    if (receivedAt - sentAt <= this.#options.timeoutMs / 4) {
      this.#offsetMs = redisNow - (sentAt + receivedAt) / 2;
    }
  }
}

/** Runs one transaction; one that throws gets its error, and the next runs on what it left. */
function run(pending: Pending, state: unknown, share: number) {
  try {
    const [next, value] = pending.transaction(state, share);
    return { state: next, outcome: { ok: true, value } as Outcome };
  } catch (error) {
    return { state, outcome: { ok: false, error } as Outcome };
  }
}

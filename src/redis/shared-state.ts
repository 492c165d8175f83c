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
 * - **Replay.** What ran locally is also kept, in order, with its result, and applied to the shared
 *   state by the first write after Redis is back, so the shared state learns what this process did
 *   meanwhile (requests sent, tokens spent, requests that ended, retries taken). Each run is
 *   replayed as the result the caller acted on (the transactions' `replay` argument), not decided
 *   again: decided again on the shared state, an admission refused locally could count a request
 *   that was never sent. Without replay, a request admitted on shared state that ended during the
 *   outage would stay counted in flight there.
 * - **Time.** The moments the client records in a state (a hold's end, a refill) are on Redis's
 *   clock (`RedisStore.now`), as this process estimates it from the `TIME` in every reply, so
 *   processes whose clocks disagree read one time line; a process that has not heard from Redis
 *   yet reads the key first, which dates Redis's clock before its first transaction runs.
 * - **Deadline.** Each write carries a deadline in Redis's time (half the timeout after it is sent,
 *   from an offset measured on earlier replies); Redis refuses a write it runs later, so a write that
 *   timed out here (and ran locally instead) is not applied twice when a paused Redis resumes.
 * - **Checked reads.** A state read from Redis that this process did not write is checked before
 *   a transaction runs on it (`Transaction.check`, once per read): at most `MAX_STATE_CHARS` of
 *   JSON, then the transaction's own check of its shape and bounds. One that fails is reported,
 *   run on as no state and written over.
 * - **Fate.** A write can still be applied and its answer come too late (a reply read after the
 *   timeout). So each write attempt has a number, and a successful one also records it as this
 *   writer's last (a small key in the same hash slot). Local updates that followed an attempt of
 *   unknown fate carry its number; before replaying them, the store reads that record, over the same
 *   connection, after the attempt (Redis runs a connection's commands in order), and drops those the
 *   attempt did apply. Replaying them would count them twice: an admission counted twice is a
 *   request in flight forever, and the learned limits wait for requests in flight before probing.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import {
  MemoryStateStore,
  type ReplayableTransaction,
  type Transaction,
} from '../client/host/store.js';
import { luaScript } from './lua/index.js';
import type { RedisClock } from './redis-clock.js';
import { maybeApplied, type ScriptRunner } from './runner.js';

/**
 * Compare-and-set of one key's state, a hash `{ v: version, s: JSON }` (`KEYS[1]`), recording the
 * writer's last applied attempt in `KEYS[2]`. `ARGV`: the expected version (`''`: no key), the mode
 * (`set`, `keep`: only refresh the TTL, `del`, `read`: change nothing), the new version, the JSON,
 * the TTL in milliseconds, the deadline in Redis epoch milliseconds (`''`: none), the attempt
 * number. Replies `{ status, redis now, current version, current JSON, writer's last attempt,
 * healed, redis now in microseconds }` with status `ok`, `conflict`, `read` or `late` (only the
 * first two). A key that is not a hash (something else wrote there) is deleted and read as no
 * state: `healed` is then its type. Redis's time comes twice: in milliseconds for the deadline it
 * was compared with, and in microseconds (text: a Lua number would be cut to an integer) for the
 * clock's calibration, which a millisecond of truncation would put up to a millisecond off.
 */
export const STATE_SCRIPT = luaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local us = t[1] .. string.format('%06d', tonumber(t[2]))
if ARGV[6] ~= '' and now > tonumber(ARGV[6]) then return { 'late', now, '', '', '', '', us } end
local current = redis.pcall('HMGET', KEYS[1], 'v', 's')
local healed = ''
if current.err ~= nil then
  healed = redis.call('TYPE', KEYS[1]).ok
  redis.call('DEL', KEYS[1])
  current = {}
end
local version = current[1] or ''
local mark = redis.pcall('GET', KEYS[2])
if type(mark) ~= 'string' then mark = '' end
if ARGV[2] == 'read' or version ~= ARGV[1] then
  local status = 'conflict'
  if ARGV[2] == 'read' then status = 'read' end
  return { status, now, version, current[2] or '', mark, healed, us }
end
if ARGV[2] == 'set' then
  redis.call('HSET', KEYS[1], 'v', ARGV[3], 's', ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
elseif ARGV[2] == 'del' then
  redis.call('DEL', KEYS[1])
elseif version ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
end
redis.call('SET', KEYS[2], ARGV[7], 'PX', ARGV[5])
return { 'ok', now, '', '', '', healed, us }
`);

/** Conflicting writes one batch tolerates before it runs locally instead. */
const MAX_ATTEMPTS = 20;
/**
 * Keys replayed at once after an outage, at most (one write each): the replay of thousands of keys
 * goes as fast as Redis answers these few, and slows down with it (a Redis just back, still
 * loading, answers slowly), rather than sending every key's write at once.
 */
export const REPLAY_CONCURRENCY = 4;
/** The write that replays a key's log and changes nothing else (never logged itself). */
const REPLAY: Transaction<unknown, undefined> = { run: (state) => [state, undefined] };
/**
 * Longest state read from Redis, in characters of JSON (1 MiB): a longer one is not parsed (it is
 * reported, read as no state and written over). A host's state is a few hundred characters, a
 * few tens of kilobytes with eight policies named at the length of a whole header block; parsing
 * a 50 MB value cost 0.5 to 0.7 s per call.
 */
export const MAX_STATE_CHARS = 1_048_576;
/** Shared states remembered (the versions this process last saw), least recently written first out. */
const MAX_CACHED = 10_000;

type AnyTransaction = ReplayableTransaction<unknown, unknown>;

/**
 * A shared state as this process last saw it: its version and JSON (`''`: none, or not client
 * state), and whether this process wrote it (then it needs no check: see `Transaction.check`).
 */
interface Seen {
  version: string;
  json: string;
  own?: boolean;
}

interface Pending {
  transaction: AnyTransaction;
  ttlMs: number;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * An update that ran locally, waiting to be replayed on the shared state: its transaction and TTL
 * (not its caller's promise, long settled), and what the local run returned.
 */
interface Logged {
  transaction: AnyTransaction;
  ttlMs: number;
  /** What the local run returned: the caller acted on it, and the replay applies just that. */
  result: unknown;
  /**
   * The first write attempt that carried it and whose fate is unknown (it timed out, or the
   * connection broke, after sending): if Redis applied that attempt, so was this update.
   */
  attempt?: number;
}

/** A batch that did not reach the shared state; `attempt`: the one whose fate is unknown, if any. */
class NotCommitted extends Error {
  constructor(readonly attempt: number | undefined) {
    super('not committed');
  }
}

/** What the shared state has done, for `RedisStore.health()`. */
export interface SharedStateCounters {
  /** Writes refused because another process wrote first (each is retried on the new state). */
  conflicts: number;
  /** Updates run on local state because Redis was unavailable. */
  localUpdates: number;
  /** Local updates since applied to the shared state. */
  replayed: number;
  /**
   * Local updates dropped unreplayed: the oldest of the least recently updated host past
   * `maxReplay` in all, and those of a host whose pipeline the client dropped (`forget`).
   */
  dropped: number;
  /** Local updates waiting to be replayed now, over every host: at most `maxReplay`. */
  pending: number;
  /**
   * Client state keys found holding something else (another type, text that is not JSON or past
   * `MAX_STATE_CHARS`, a state that fails its transactions' check: a wrong shape, another format):
   * each was read as no state and replaced by the next write.
   */
  corrupt: number;
}

/** A client state key held something that is not client state; see `RedisStoreEvents`. */
export class StateCorruptError extends Error {
  /**
   * @param key the Redis key.
   * @param reason what was wrong with it.
   */
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(
      `RedisStore: the client state at ${key} is not client state (${reason}): read as none, replaced by the next write`,
    );
    this.name = 'StateCorruptError';
  }
}

/** Options, normalised by `RedisStore`. */
export interface SharedStateOptions {
  /** The `share` passed to transactions on local state. */
  localShare: number;
  /** Local updates kept for replay, over every key. */
  maxReplay: number;
}

/** The client's state store on Redis; see the module comment. */
export class SharedState {
  readonly counters: SharedStateCounters = {
    conflicts: 0,
    localUpdates: 0,
    replayed: 0,
    dropped: 0,
    pending: 0,
    corrupt: 0,
  };
  readonly #runner: ScriptRunner;
  readonly #redisKey: (key: string) => string;
  readonly #options: SharedStateOptions;
  /** This store's name as a writer: unique, so no version it writes is ever reused. */
  readonly #writer = randomUUID().slice(0, 13);
  /** Write attempts numbered so far (their numbers make the versions and the applied record). */
  #attempts = 0;
  readonly #seen = new Map<string, Seen>();
  readonly #lanes = new Map<string, Pending[]>();
  readonly #local = new MemoryStateStore();
  /** What ran locally, per key, the key that logged last at the end (see `#bound`). */
  readonly #toReplay = new Map<string, Logged[]>();
  /** Keys whose replay waits for a slot after an outage ({@link REPLAY_CONCURRENCY}), from `next`. */
  #replayQueue: string[] = [];
  #replayNext = 0;
  /** Replays under way. */
  #replaying = 0;
  /** Redis's clock: the writes' deadlines, and the state's time line (see `now`). */
  readonly #clock: RedisClock;

  readonly #onCorrupt: (error: StateCorruptError) => void;

  /**
   * @param clock Redis's clock as this process measures it, calibrated on every reply here.
   * @param onCorrupt told when a key held something that is not client state (see
   *   {@link SharedStateCounters.corrupt}): it is read as no state, and the next write replaces it.
   */
  constructor(
    runner: ScriptRunner,
    redisKey: (key: string) => string,
    options: SharedStateOptions,
    clock: RedisClock,
    onCorrupt: (error: StateCorruptError) => void = () => {},
  ) {
    this.#runner = runner;
    this.#redisKey = redisKey;
    this.#options = options;
    this.#clock = clock;
    this.#onCorrupt = onCorrupt;
  }

  #corrupt(key: string, reason: string): void {
    this.counters.corrupt += 1;
    this.#onCorrupt(new StateCorruptError(this.#redisKey(key), reason));
  }

  /** Runs `transaction` on the state of `key` (see `StateStore.update`). Never rejects for Redis. */
  update<S, R>(key: string, transaction: Transaction<S, R>, ttlMs: number): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const pending: Pending = {
        // Safe for any Transaction: a run that takes no `share` ignores it, and one without
        // `replay` is replayed by running again. The pipeline's own always have both.
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

  /**
   * Reads the shared state of `key` without changing it or its expiry (the state script's `read`
   * mode); while Redis is unavailable, this process's local copy, else the last shared state seen.
   * Never rejects for Redis.
   */
  async get<S>(key: string): Promise<S | undefined> {
    try {
      const [status, , version = '', json = ''] = await this.#call(
        key,
        ['', 'read', '', '', '1'],
        0,
      );
      if (status !== 'read') throw new Error(`unexpected state script status ${status}`);
      if (json === '') return undefined;
      if (json.length > MAX_STATE_CHARS) {
        this.#remember(key, { version, json });
        return undefined;
      }
      try {
        return JSON.parse(json) as S;
      } catch {
        this.#remember(key, { version, json });
        return undefined;
      }
    } catch {
      const seen = this.#seen.get(key);
      return this.#local.get<S>(key) ?? (parseJson(seen) as S | undefined);
    }
  }

  /** Deletes the state of `key`, shared and local. */
  async delete(key: string): Promise<void> {
    await this.update(key, { run: () => [undefined, undefined] }, 1);
  }

  /**
   * Applies what ran locally to the shared state, for every key that has some (after an outage),
   * {@link REPLAY_CONCURRENCY} keys at a time, in the order they last logged. A key updated
   * meanwhile replays with that update; a replay that finds Redis gone again ends the round (the
   * next `up` starts another).
   */
  replayAll(): void {
    this.#replayQueue = [...this.#toReplay.keys()];
    this.#replayNext = 0;
    this.#pump();
  }

  /** Drops what this process keeps of `key` (its log, its local copy, the state seen), not Redis's. */
  forget(key: string): void {
    // A key with a write under way is still in use (by another client sharing the store).
    if (this.#lanes.has(key)) return;
    const log = this.#toReplay.get(key);
    if (log !== undefined) this.#take(key, log, log.length, 'dropped');
    this.#local.delete(key);
    this.#seen.delete(key);
  }

  /** Starts replays while there are slots and keys waiting (see {@link SharedState.replayAll}). */
  #pump(): void {
    const queue = this.#replayQueue;
    while (this.#replaying < REPLAY_CONCURRENCY && this.#replayNext < queue.length) {
      const key = queue[this.#replayNext++] as string;
      const log = this.#toReplay.get(key);
      // Gone (replayed by an update, dropped), or replayed by the write under way on the key.
      if (log === undefined || log.length === 0 || this.#lanes.has(key)) continue;
      this.#replaying++;
      const ttlMs = longestTtl([], log);
      this.update(key, REPLAY, ttlMs)
        .catch(() => {})
        .then(() => {
          this.#replaying--;
          // Still logged: the write ran locally, Redis is gone again. The round ends here.
          if (this.#toReplay.has(key)) this.#replayQueue = [];
          this.#pump();
        });
    }
    if (this.#replayNext >= queue.length) this.#replayQueue = [];
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
    } catch (error) {
      // Redis is unavailable (or too contended): this batch runs on local state.
      return this.#commitLocal(
        key,
        batch,
        error instanceof NotCommitted ? error.attempt : undefined,
      );
    }
  }

  /** The state's key and this writer's record of its last applied attempt, in one hash slot. */
  #keys(key: string): string[] {
    const state = this.#redisKey(key);
    return [state, `${state}:writer:${this.#writer}`];
  }

  /**
   * Runs the replay log and `batch` on the shared state and writes it back if unchanged since.
   * Throws {@link NotCommitted} when it could not.
   */
  async #commitShared(key: string, batch: Pending[]): Promise<Outcome[]> {
    // Until Redis has answered once, its time is unknown here, and the batch would record times
    // on this process's clock: a read first dates it (and brings the state to compare with).
    if (this.#clock.redisNow() === undefined) await this.#read(key);
    const log = this.#toReplay.get(key) ?? [];
    if (log.some((entry) => entry.attempt !== undefined)) await this.#settleFates(key, log);
    const replaying = log.length;
    const ttlMs = longestTtl(batch, log);
    const check = checkOf(batch);
    for (let tries = 0; tries < MAX_ATTEMPTS; tries++) {
      let state: unknown = this.#parsed(key, check);
      const seen = this.#seen.get(key);
      for (let i = 0; i < replaying; i++) state = replay(log[i] as Logged, state);
      const outcomes = batch.map((pending) => {
        const ran = run(pending, state, 1);
        state = ran.state;
        return ran.outcome;
      });
      const json = state === undefined ? undefined : JSON.stringify(state);
      const mode = json === undefined ? 'del' : json === seen?.json ? 'keep' : 'set';
      const expected = seen?.version ?? '';
      const attempt = ++this.#attempts;
      const version = mode === 'set' ? `${this.#writer}.${attempt}` : expected;
      const reply = await this.#call(
        key,
        [expected, mode, version, json ?? '', String(ttlMs)],
        attempt,
      ).catch((error: unknown) => {
        if (!maybeApplied(error)) throw new NotCommitted(undefined);
        // Sent, fate unknown: the logged updates it carried, and the batch, follow its fate.
        for (let i = 0; i < replaying; i++) (log[i] as Logged).attempt ??= attempt;
        throw new NotCommitted(attempt);
      });
      const [status, , currentVersion = '', currentJson = ''] = reply;
      if (status === 'late') throw new NotCommitted(undefined);
      if (status === 'ok') {
        this.#remember(
          key,
          mode === 'del' ? undefined : { version, json: json as string, own: true },
        );
        if (replaying > 0) this.#replayed(key, log, replaying);
        // Nothing logged (none, or all dropped): a local copy left from an outage is stale.
        else if (this.#local.size > 0 && log.length === 0) this.#local.delete(key);
        return outcomes;
      }
      this.counters.conflicts += 1;
      this.#remember(
        key,
        currentVersion === '' ? undefined : { version: currentVersion, json: currentJson },
      );
    }
    throw new NotCommitted(undefined);
  }

  /**
   * Learns the fate of the attempts the logged updates followed: reads this writer's last applied
   * attempt (after them: one connection, commands in order) and drops the updates an attempt of
   * that number or less already applied. The others are known not to have reached Redis.
   */
  async #settleFates(key: string, log: Logged[]): Promise<void> {
    const last = await this.#read(key);
    const kept = log.filter((entry) => entry.attempt === undefined || entry.attempt > last);
    this.counters.replayed += log.length - kept.length;
    this.counters.pending -= log.length - kept.length;
    for (const entry of kept) entry.attempt = undefined;
    log.splice(0, log.length, ...kept);
  }

  /**
   * Reads the shared state of `key` (remembered as seen) and this writer's last applied attempt,
   * which it returns (0: none). Throws {@link NotCommitted} when Redis did not answer it.
   */
  async #read(key: string): Promise<number> {
    const reply = await this.#call(key, ['', 'read', '', '', '1'], 0).catch(() => {
      throw new NotCommitted(undefined);
    });
    const [status, , version = '', json = '', mark = ''] = reply;
    // Only a `read` answer says what was applied; anything else teaches nothing.
    if (status !== 'read') throw new NotCommitted(undefined);
    this.#remember(key, version === '' ? undefined : { version, json });
    return mark === '' ? 0 : Number(mark);
  }

  /**
   * One call of the state script; calibrates the clock offset on the reply. A write carries a
   * deadline (Redis refuses it, `late`, past that); a read carries none: whenever Redis runs it,
   * its answer is true of the moment it ran, and a read refused as late would be mistaken for
   * "nothing recorded".
   */
  async #call(key: string, args: string[], attempt: number) {
    const clock = this.#clock;
    const sentAt = clock.now();
    const deadline = args[1] === 'read' ? '' : clock.deadline(sentAt);
    const reply = (await this.#runner.run(
      STATE_SCRIPT,
      this.#keys(key),
      [...args, deadline, String(attempt)],
      'update',
    )) as [string, number, string?, string?, string?, string?, string?];
    clock.calibrate(sentAt, clock.now(), Number(reply[6]) / 1000);
    const healed = reply[5];
    if (healed !== undefined && healed !== '') {
      this.#corrupt(key, `it held a value of type ${healed} (deleted)`);
    }
    return reply;
  }

  /**
   * Runs `batch` on this process's copy of the state, on the local share, and logs it for replay,
   * tagged with `attempt` when it followed a write of unknown fate.
   */
  #commitLocal(key: string, batch: Pending[], attempt: number | undefined): Outcome[] {
    // The key goes to the end of the log's order: the least recently logged key is at the front.
    let log = this.#toReplay.get(key);
    if (log === undefined) log = [];
    else this.#toReplay.delete(key);
    this.#toReplay.set(key, log);
    const outcomes: Outcome[] = [];
    const before = log.length;
    let count = 0;
    for (const pending of batch) {
      let outcome: Outcome = { ok: true, value: undefined };
      // A replay's write changes nothing: locally, nothing to run nor to log.
      if (pending.transaction === REPLAY) {
        outcomes.push(outcome);
        continue;
      }
      count++;
      this.#local.update(
        key,
        {
          run: (current) => {
            const ran = run(
              pending,
              current ?? this.#parsed(key, pending.transaction.check),
              this.#options.localShare,
            );
            outcome = ran.outcome;
            return [ran.state, undefined];
          },
        },
        pending.ttlMs,
      );
      outcomes.push(outcome);
      // A run that threw had no effect the caller could act on: nothing to replay.
      if (outcome.ok) {
        const { transaction, ttlMs } = pending;
        log.push({ transaction, ttlMs, result: outcome.value, attempt });
      }
    }
    this.counters.localUpdates += count;
    this.counters.pending += log.length - before;
    this.#bound(key);
    if (log.length === 0 && this.#toReplay.get(key) === log) this.#toReplay.delete(key);
    return outcomes;
  }

  /**
   * Keeps at most `maxReplay` updates logged over every key: past it, the oldest updates of the
   * least recently logged key go. Its local copy stays for the rest of the outage (it is what
   * this process acts on); the first write after it is made on the shared state, which never
   * learns what was dropped.
   */
  #bound(current: string): void {
    for (const [key, log] of this.#toReplay) {
      const excess = this.counters.pending - this.#options.maxReplay;
      if (excess <= 0) return;
      // A key with a write under way (another than the one logging now) is replaying its log.
      if (key !== current && this.#lanes.has(key)) continue;
      this.#take(key, log, Math.min(excess, log.length), 'dropped');
    }
  }

  /** The first `count` logged updates reached the shared state: forget them, and the local copy. */
  #replayed(key: string, log: Logged[], count: number): void {
    this.#take(key, log, count, 'replayed');
  }

  /**
   * Takes the first `count` updates off the log of `key`, counted as `as`; a log left empty goes,
   * and once all are replayed, so does the key's local copy.
   */
  #take(key: string, log: Logged[], count: number, as: 'replayed' | 'dropped'): void {
    log.splice(0, count);
    this.counters[as] += count;
    this.counters.pending -= count;
    if (log.length > 0) return;
    this.#toReplay.delete(key);
    if (as === 'replayed') this.#local.delete(key);
  }

  /**
   * The shared state of `key` as this process saw it last, parsed afresh (the state a batch runs
   * on, the seed of a local copy), and checked by `check` unless this process wrote it. A state
   * that fails the check is reported and kept as no state under its version, as in
   * {@link SharedState.#remember}: the next write replaces it.
   */
  #parsed(key: string, check: AnyTransaction['check']): unknown {
    const seen = this.#seen.get(key);
    const state = parseJson(seen);
    if (state === undefined || seen?.own || check === undefined) return state;
    try {
      return check(state);
    } catch (error) {
      this.#corrupt(key, error instanceof Error ? error.message : String(error));
      this.#seen.set(key, { version: (seen as Seen).version, json: '' });
      return undefined;
    }
  }

  /**
   * Keeps the shared state of `key` as last seen. A state that is not JSON (something else wrote
   * there), or past {@link MAX_STATE_CHARS}, is reported and kept as no state (`json: ''`) under
   * its version: the next write replaces it (compare-and-set on that version), which heals the key.
   */
  #remember(key: string, entry: Seen | undefined): void {
    this.#seen.delete(key);
    if (entry === undefined) return;
    if (entry.own) {
      // Written by this process: nothing to check.
    } else if (entry.json.length > MAX_STATE_CHARS) {
      this.#corrupt(
        key,
        `its JSON is ${entry.json.length} characters long, past the bound of ${MAX_STATE_CHARS}`,
      );
      entry = { version: entry.version, json: '' };
    } else if (entry.json !== '' && !isJson(entry.json)) {
      this.#corrupt(key, `its JSON does not parse: ${JSON.stringify(entry.json.slice(0, 40))}`);
      entry = { version: entry.version, json: '' };
    } else if (entry.json === '' && entry.version !== '') {
      this.#corrupt(key, 'a version without a state');
    }
    this.#seen.set(key, entry);
    if (this.#seen.size > MAX_CACHED) {
      const oldest = this.#seen.keys().next().value as string;
      this.#seen.delete(oldest);
    }
  }
}

/** Applies a logged local run to `state` as the result it had (see `Transaction.replay`). */
function replay(entry: Logged, state: unknown): unknown {
  const { transaction } = entry;
  try {
    return transaction.replay
      ? transaction.replay(state, entry.result)
      : transaction.run(state, 1)[0];
  } catch {
    return state;
  }
}

/** Runs one transaction; one that throws gets its error, and the next runs on what it left. */
function run(pending: Pending, state: unknown, share: number) {
  try {
    const [next, value] = pending.transaction.run(state, share);
    return { state: next, outcome: { ok: true, value } as Outcome };
  } catch (error) {
    return { state, outcome: { ok: false, error } as Outcome };
  }
}

/** Whether `json` parses. */
function isJson(json: string): boolean {
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
}

/** The state last seen (`json: ''`: none, see `SharedState.#remember`), parsed afresh. */
function parseJson(seen: Seen | undefined): unknown {
  return seen === undefined || seen.json === '' ? undefined : JSON.parse(seen.json);
}

/**
 * The longest TTL of `batch` and `log`, in milliseconds: a loop, not `Math.max(...)`, whose
 * arguments a log of `maxReplay` updates (any number) could overflow.
 */
function longestTtl(batch: readonly { ttlMs: number }[], log: readonly Logged[]): number {
  let ttlMs = Number.NEGATIVE_INFINITY;
  for (const pending of batch) ttlMs = Math.max(ttlMs, pending.ttlMs);
  for (const entry of log) ttlMs = Math.max(ttlMs, entry.ttlMs);
  return ttlMs;
}

/** The check of a state read for `batch` (its transactions'; see `Transaction.check`). */
function checkOf(batch: Pending[]): AnyTransaction['check'] {
  for (const pending of batch) if (pending.transaction.check) return pending.transaction.check;
  return undefined;
}

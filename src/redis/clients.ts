/**
 * The Redis clients the store takes, and the one place that knows them apart: node-redis (v5, v6)
 * and ioredis (v5, v6), each a single connection or a cluster, turned into the few calls the
 * runner makes ({@link ScriptCalls}). Told apart by their shape, never by importing either package
 * (the store imports neither): node-redis names its commands in camel case (`evalSha`), ioredis in
 * lower case and has `call()` and a `status`.
 *
 * @module
 */

/** Arguments of `EVAL` / `EVALSHA` in node-redis. */
export interface EvalOptions {
  keys: string[];
  arguments: string[];
}

/**
 * What the Redis store needs of a node-redis client: the scripting commands of node-redis v5 and
 * v6. A connected `createClient()` or `createCluster()` (from the `redis` package) has them; the
 * cluster routes each call by its key.
 */
export interface RedisScriptingClient {
  evalSha(sha1: string, options: EvalOptions): Promise<unknown>;
  eval(script: string, options: EvalOptions): Promise<unknown>;
  /** node-redis: `false` while the client is (re)connecting. Calls then fail fast. */
  readonly isReady?: boolean;
  /**
   * node-redis: `FCALL`. Optional: without it (or on a server that refuses functions) every call
   * is a script (`EVALSHA`).
   */
  fCall?(name: string, options: EvalOptions): Promise<unknown>;
  /** node-redis: `FUNCTION LOAD`, on a single node. */
  functionLoad?(code: string, options?: { REPLACE?: boolean }): Promise<unknown>;
  /**
   * node-redis: a raw command. A cluster's (`(firstKey, isReadonly, args)`, told apart by its
   * `masters`) loads the library on the node serving a key.
   */
  sendCommand?(...args: never[]): Promise<unknown>;
}

/**
 * What the Redis store needs of an ioredis client: a connected `new Redis()` or `new Cluster()`
 * (from the `ioredis` package, v5 or v6) has it. Every command goes through `call()`: a cluster
 * routes `EVALSHA`, `EVAL` and `FCALL` by their keys, and the client's `keyPrefix`, if any, is put
 * before the store's keys.
 */
export interface IoRedisScriptingClient {
  /**
   * ioredis: `'ready'` when a command goes out at once. Once the client was ready, calls fail fast
   * in any other state (`'reconnecting'`, `'connecting'`, `'end'`...) rather than wait in ioredis's
   * offline queue; before its first connection (`'wait'` of a `lazyConnect` client, which a
   * command connects, `'connecting'`, `'connect'`) they wait for it, within the store's timeout.
   */
  readonly status: string;
  /** ioredis: any command, its arguments in one array. */
  call(command: string, args: (string | number)[]): Promise<unknown>;
  /**
   * ioredis `Cluster`: its nodes. The function library is loaded on every master, since any of
   * them may serve a key.
   */
  nodes?(role: 'master'): { call(command: string, args: (string | number)[]): Promise<unknown> }[];
}

/** A client `RedisStore` takes: node-redis 5 or 6, or ioredis 5 or 6; one node or a cluster. */
export type RedisStoreClient = RedisScriptingClient | IoRedisScriptingClient;

/** The calls the runner makes, the same for every client (see {@link scriptCalls}). */
export interface ScriptCalls {
  /** Whether a call would go out now: `false` while the client is not connected. */
  ready(): boolean;
  evalSha(sha: string, keys: string[], args: string[]): Promise<unknown>;
  eval(source: string, keys: string[], args: string[]): Promise<unknown>;
  /** `FCALL`, or `undefined` when the client has no way to call a function. */
  readonly fcall: ((name: string, keys: string[], args: string[]) => Promise<unknown>) | undefined;
  /**
   * `FUNCTION LOAD REPLACE source` on the node that serves `key`: the one node of a single
   * Redis, the node of the key's slot (node-redis cluster) or every master (ioredis cluster).
   * Loads of the same library at once share one call where the node does not depend on the key.
   */
  load(source: string, key: string): Promise<unknown>;
}

/** Whether `value` is a client `RedisStore` takes (by its shape: see {@link scriptCalls}). */
export function isStoreClient(value: unknown): value is RedisStoreClient {
  return isNodeRedis(value) || isIoRedis(value);
}

/**
 * The calls of `client`: a node-redis client by its `evalSha` and `eval`, an ioredis client by its
 * `call` and `status` (a node-redis shape wins, for an object that has both).
 * @throws TypeError for anything else.
 */
export function scriptCalls(client: RedisStoreClient): ScriptCalls {
  if (isNodeRedis(client)) return new NodeRedisCalls(client);
  if (isIoRedis(client)) return new IoRedisCalls(client);
  throw new TypeError(NOT_A_CLIENT);
}

/** The message of the `TypeError` thrown for something that is not a client the store takes. */
export const NOT_A_CLIENT =
  'RedisStore: expected a connected Redis client: from node-redis 5 or 6 (createClient(), createCluster()) or from ioredis 5 or 6 (new Redis(), new Cluster())';

function isNodeRedis(value: unknown): value is RedisScriptingClient {
  const c = value as RedisScriptingClient | null;
  return (
    typeof c === 'object' &&
    c !== null &&
    typeof c.evalSha === 'function' &&
    typeof c.eval === 'function'
  );
}

function isIoRedis(value: unknown): value is IoRedisScriptingClient {
  const c = value as IoRedisScriptingClient | null;
  return (
    typeof c === 'object' &&
    c !== null &&
    typeof c.call === 'function' &&
    typeof c.status === 'string'
  );
}

/** A client's raw command: `sendCommand(args)` of a node-redis client. */
type SendCommand = (args: string[]) => Promise<unknown>;
/** `sendCommand(firstKey, isReadonly, args)` of a node-redis cluster, which routes by the key. */
type SendClusterCommand = (key: string, isReadonly: boolean, args: string[]) => Promise<unknown>;

/**
 * node-redis: `FCALL` by the raw command (cheaper than `fCall`, which goes through the command's
 * parser) where the client has one, routed by the key on a cluster (told apart by its `masters`).
 */
class NodeRedisCalls implements ScriptCalls {
  readonly fcall: ScriptCalls['fcall'];
  readonly #client: RedisScriptingClient;
  readonly #cluster: boolean;
  /** The library load under way (single node), shared by the calls that found no function. */
  #loading: Promise<unknown> | undefined;

  constructor(client: RedisScriptingClient) {
    this.#client = client;
    this.#cluster = 'masters' in client;
    const send = client.sendCommand?.bind(client) as unknown;
    const fCall = client.fCall?.bind(client);
    if (fCall === undefined) this.fcall = undefined;
    else if (typeof send !== 'function') {
      this.fcall = (name, keys, args) => fCall(name, { keys, arguments: args });
    } else if (this.#cluster) {
      this.fcall = (name, keys, args) =>
        (send as SendClusterCommand)(keys[0] ?? '', false, fcallCommand(name, keys, args));
    } else {
      this.fcall = (name, keys, args) => (send as SendCommand)(fcallCommand(name, keys, args));
    }
  }

  ready(): boolean {
    return this.#client.isReady !== false;
  }

  evalSha(sha: string, keys: string[], args: string[]): Promise<unknown> {
    return this.#client.evalSha(sha, { keys, arguments: args });
  }

  eval(source: string, keys: string[], args: string[]): Promise<unknown> {
    return this.#client.eval(source, { keys, arguments: args });
  }

  load(source: string, key: string): Promise<unknown> {
    const client = this.#client;
    const send = client.sendCommand as unknown;
    const command = ['FUNCTION', 'LOAD', 'REPLACE', source];
    if (this.#cluster && typeof send === 'function') {
      return (send as SendClusterCommand).call(client, key, false, command);
    }
    if (this.#loading === undefined) {
      const load =
        typeof client.functionLoad === 'function'
          ? client.functionLoad(source, { REPLACE: true })
          : typeof send === 'function'
            ? (send as SendCommand).call(client, command)
            : Promise.reject(new Error('ERR unknown command: the client cannot load functions'));
      this.#loading = load.finally(() => {
        this.#loading = undefined;
      });
    }
    return this.#loading;
  }
}

/**
 * ioredis: every command by `call()`, which a cluster routes by the keys it finds in `EVALSHA`,
 * `EVAL` and `FCALL` (their key count tells it where the keys are).
 */
class IoRedisCalls implements ScriptCalls {
  readonly #client: IoRedisScriptingClient;
  /** Whether the client was seen ready: from then on, any other status is a lost connection. */
  #wasReady = false;
  /** The library load under way, shared by the calls that found no function. */
  #loading: Promise<unknown> | undefined;

  constructor(client: IoRedisScriptingClient) {
    this.#client = client;
  }

  /**
   * `'ready'`; or the client's first connection under way, which a call waits for (`new Redis()`
   * connects in the background, and a `lazyConnect` client on its first command), as a call
   * waits for its answer: within the store's timeout. After a lost connection, not ready until
   * ioredis says so: its offline queue would hold calls past the timeout and send them late.
   */
  ready(): boolean {
    const status = this.#client.status;
    if (status === 'ready') {
      this.#wasReady = true;
      return true;
    }
    return !this.#wasReady && FIRST_CONNECTION.has(status);
  }

  readonly fcall = (name: string, keys: string[], args: string[]): Promise<unknown> =>
    this.#client.call('FCALL', withKeys([name], keys, args));

  evalSha(sha: string, keys: string[], args: string[]): Promise<unknown> {
    return this.#client.call('EVALSHA', withKeys([sha], keys, args));
  }

  eval(source: string, keys: string[], args: string[]): Promise<unknown> {
    return this.#client.call('EVAL', withKeys([source], keys, args));
  }

  /**
   * A cluster: on every master (the one serving the key may be any; `REPLACE` makes a second load
   * harmless). A single node: on it.
   */
  load(source: string): Promise<unknown> {
    if (this.#loading === undefined) {
      const client = this.#client;
      const args = ['LOAD', 'REPLACE', source];
      const load =
        typeof client.nodes === 'function'
          ? Promise.all(client.nodes('master').map((node) => node.call('FUNCTION', args)))
          : client.call('FUNCTION', args);
      this.#loading = load.finally(() => {
        this.#loading = undefined;
      });
    }
    return this.#loading;
  }
}

/** The states of an ioredis client on its way to its first connection. */
const FIRST_CONNECTION = new Set(['wait', 'connecting', 'connect']);

/** `FCALL name numkeys keys... args...`, the raw command. */
function fcallCommand(name: string, keys: readonly string[], args: readonly string[]): string[] {
  return withKeys(['FCALL', name], keys, args);
}

/**
 * `head` followed by `numkeys keys... args...`, in `head` (one array per call, no spread): the
 * words of `FCALL`, `EVALSHA` and `EVAL` after their name and their function or script.
 */
function withKeys(head: string[], keys: readonly string[], args: readonly string[]): string[] {
  head.push(keys.length === 1 ? '1' : String(keys.length));
  for (const key of keys) head.push(key);
  for (const arg of args) head.push(arg);
  return head;
}

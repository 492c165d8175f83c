/**
 * The Redis clients the Redis tests run against, one {@link ClientKind} each: node-redis 5 (the
 * `redis` dev dependency), node-redis 6 (`redis6`, an npm alias), ioredis 6 (`ioredis`) and
 * ioredis 5 (`ioredis5`, an alias). A test file takes a kind as its parameter (`describeRedis` in
 * `helpers.ts`) and makes every connection it gives the store through it, so one suite runs on
 * each client. No vitest here: the fleet's child processes use it too.
 */
import { Cluster as IoCluster, Redis as IoRedis } from 'ioredis';
import { Cluster as IoCluster5, Redis as IoRedis5 } from 'ioredis5';
import { createClient, createCluster } from 'redis';
import { createClient as createClient6, createCluster as createCluster6 } from 'redis6';
import type {
  EvalOptions,
  IoRedisScriptingClient,
  RedisScriptingClient,
  RedisStoreClient,
} from '../../src/redis/index.js';

/** The clients, by the name tests print. */
export type ClientName = 'node-redis 5' | 'node-redis 6' | 'ioredis 6' | 'ioredis 5';

/** One script call of a client under test: its command, its keys, and how to send it. */
export interface ScriptCall {
  command: 'EVALSHA' | 'EVAL' | 'FCALL';
  keys: readonly string[];
  send(): Promise<unknown>;
}

/** What a test does with each script call of an intercepted client (send it, late, or not). */
export type ScriptHook = (call: ScriptCall) => Promise<unknown>;

/** One connection (or cluster) of a client under test. */
export interface Connection {
  /** The client itself, as `RedisStore` takes it. */
  readonly client: RedisStoreClient;
  /** Any command, by its words (`['CLIENT', 'ID']`), as the client answers it; a cluster sends it to any node. */
  command(words: string[]): Promise<unknown>;
  /**
   * A client of the same kind over this connection whose script calls (`EVALSHA`, `EVAL`,
   * `FCALL`) go through `hook`, and which says it is not connected while `up()` is false.
   */
  intercept(hook: ScriptHook, up?: () => boolean): RedisStoreClient;
  /** Whether the client says it is connected (node-redis: `isReady`; ioredis: `status`). */
  connected(): boolean;
  /** Closes the connection as its owner would, and resolves once the client says it is closed. */
  close(): Promise<void>;
}

/** A Redis client the tests run against. */
export interface ClientKind {
  readonly name: ClientName;
  /** A new connected client; its reconnection gives up quickly, so a test never waits long. */
  connect(url: string): Promise<Connection>;
  /** A new connected cluster client, from the nodes' URLs. */
  connectCluster(urls: readonly string[]): Promise<Connection>;
  /**
   * ioredis only: a new client whose first connection is under way (`new Redis(url)`), or, `lazy`,
   * not started (`lazyConnect`: its first command starts it). node-redis has none: its client
   * takes no command before `connect()`.
   */
  unconnected?(url: string, lazy: boolean): Connection;
}

/** Reconnects after 100, 200, 400, 500, 500... ms: quick, so that no test waits long. */
const backoff = (attempt: number) => Math.min(50 * 2 ** attempt, 500);

/** What the tests use of a node-redis client or cluster, of either major. */
interface NodeRedisLike {
  evalSha(sha: string, options: EvalOptions): Promise<unknown>;
  eval(script: string, options: EvalOptions): Promise<unknown>;
  fCall(name: string, options: EvalOptions): Promise<unknown>;
  functionLoad(code: string, options?: { REPLACE?: boolean }): Promise<unknown>;
  readonly isReady?: boolean;
  destroy(): void;
}

/** A node-redis connection: `command` as the raw command of the client or of the cluster. */
function nodeRedisConnection(
  client: NodeRedisLike & RedisStoreClient,
  command: (words: string[]) => Promise<unknown>,
): Connection {
  return {
    client,
    command,
    intercept(hook, up = () => true): RedisScriptingClient {
      return {
        get isReady() {
          return up() && client.isReady !== false;
        },
        evalSha: (sha, options) =>
          hook({
            command: 'EVALSHA',
            keys: options.keys,
            send: () => client.evalSha(sha, options),
          }),
        eval: (script, options) =>
          hook({ command: 'EVAL', keys: options.keys, send: () => client.eval(script, options) }),
        fCall: (name, options) =>
          hook({ command: 'FCALL', keys: options.keys, send: () => client.fCall(name, options) }),
        functionLoad: (code, options) => client.functionLoad(code, options),
      };
    },
    connected: () => client.isReady !== false,
    close: async () => client.destroy(),
  };
}

/** What the tests use of an ioredis client or cluster, of either major. */
interface IoRedisLike extends IoRedisScriptingClient {
  on(event: 'error' | 'end', listener: () => void): unknown;
  once(event: 'end', listener: () => void): unknown;
  connect(): Promise<unknown>;
  disconnect(): void;
}

const SCRIPT_COMMANDS = new Set(['EVALSHA', 'EVAL', 'FCALL']);

function ioRedisConnection(client: IoRedisLike): Connection {
  return {
    client,
    command: ([name, ...args]) => client.call(name as string, args),
    intercept(hook, up = () => true): IoRedisScriptingClient {
      return {
        get status() {
          return up() ? client.status : 'reconnecting';
        },
        call(command, args) {
          if (!SCRIPT_COMMANDS.has(command)) return client.call(command, args);
          // `name numkeys key... arg...`
          const keys = args.slice(2, 2 + Number(args[1])).map(String);
          return hook({
            command: command as ScriptCall['command'],
            keys,
            send: () => client.call(command, args),
          });
        },
        nodes: client.nodes?.bind(client),
      };
    },
    connected: () => client.status === 'ready',
    close: () =>
      new Promise<void>((resolve) => {
        if (client.status === 'end') return resolve();
        client.once('end', () => resolve());
        client.disconnect();
      }),
  };
}

/** ioredis's nodes from `redis://host:port` URLs. */
function hostsOf(urls: readonly string[]) {
  return urls.map((url) => {
    const { hostname, port } = new URL(url);
    return { host: hostname, port: Number(port || 6379) };
  });
}

const nodeRedis5: ClientKind = {
  name: 'node-redis 5',
  async connect(url) {
    const client = createClient({ url, socket: { reconnectStrategy: backoff } });
    // Without an error listener a connection error would throw; tests watch calls instead.
    client.on('error', () => {});
    await client.connect();
    return nodeRedisConnection(client, (words) => client.sendCommand(words));
  },
  async connectCluster(urls) {
    const cluster = createCluster({ rootNodes: urls.map((url) => ({ url })) });
    cluster.on('error', () => {});
    await cluster.connect();
    return nodeRedisConnection(cluster, (words) => cluster.sendCommand(undefined, false, words));
  },
};

const nodeRedis6: ClientKind = {
  name: 'node-redis 6',
  async connect(url) {
    const client = createClient6({ url, socket: { reconnectStrategy: backoff } });
    client.on('error', () => {});
    await client.connect();
    return nodeRedisConnection(client, (words) => client.sendCommand(words));
  },
  async connectCluster(urls) {
    const cluster = createCluster6({ rootNodes: urls.map((url) => ({ url })) });
    cluster.on('error', () => {});
    await cluster.connect();
    return nodeRedisConnection(cluster, (words) => cluster.sendCommand(undefined, false, words));
  },
};

/** An ioredis kind, from its package's `Redis` and `Cluster` classes. */
function ioRedisKind(
  name: ClientName,
  Redis: new (url: string, options: object) => IoRedisLike,
  Cluster: new (nodes: object[], options: object) => IoRedisLike,
): ClientKind {
  return {
    name,
    async connect(url) {
      // Connected here, not on the first command: the store is given a connected client.
      const client = new Redis(url, { lazyConnect: true, retryStrategy: backoff });
      client.on('error', () => {});
      await client.connect();
      return ioRedisConnection(client);
    },
    unconnected(url, lazy) {
      const client = new Redis(url, { lazyConnect: lazy, retryStrategy: backoff });
      client.on('error', () => {});
      return ioRedisConnection(client);
    },
    async connectCluster(urls) {
      const cluster = new Cluster(hostsOf(urls), {
        lazyConnect: true,
        clusterRetryStrategy: backoff,
      });
      cluster.on('error', () => {});
      await cluster.connect();
      return ioRedisConnection(cluster);
    },
  };
}

/** Every client, in the order the tests run them. */
export const CLIENT_KINDS: readonly ClientKind[] = [
  nodeRedis5,
  nodeRedis6,
  ioRedisKind('ioredis 6', IoRedis, IoCluster),
  ioRedisKind('ioredis 5', IoRedis5, IoCluster5),
];

/** The kind named `name`; throws, naming the kinds, for any other name. */
export function clientKind(name: string): ClientKind {
  const kind = CLIENT_KINDS.find((k) => k.name === name);
  if (kind === undefined) {
    throw new Error(
      `unknown Redis client ${JSON.stringify(name)}: one of ${CLIENT_KINDS.map((k) => k.name).join(', ')}`,
    );
  }
  return kind;
}

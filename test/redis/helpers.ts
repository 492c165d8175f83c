/**
 * Shared by the Redis tests: the real Redis at `REDIS_URL` (never a mock), each file run once per
 * Redis client (`describeRedis`, see `clients.ts`), a unique key prefix per test file run, and
 * cleanup. Without `REDIS_URL` the files skip, saying why once.
 *
 * Two kinds of connections: those of the client under test (`kind.connect()`), which the store
 * is given, are killed or are closed; and the test's own `admin` connection (always node-redis 5),
 * which looks at the keys, pauses Redis and cleans up, whatever the client under test.
 */
import { randomUUID } from 'node:crypto';
import { createClient, type RedisClientType } from 'redis';
import { describe, expect } from 'vitest';
import { isStoreUnavailableError, type StoreUnavailableError } from '../../src/redis/index.js';
import {
  CLIENT_KINDS,
  type ClientKind,
  type ClientName,
  type Connection,
  clientKind,
} from './clients.js';

export type { ClientKind, Connection } from './clients.js';

/** The Redis the tests use, or `undefined` to skip them. */
export const REDIS_URL = process.env.REDIS_URL;

/**
 * How many clients a file runs against. `'full'`: every client (the store, the differential test,
 * the cluster, outages and error replies: what differs from one client to another). `'subset'`:
 * node-redis 5 and ioredis 6, one of each family (the rest, which runs through the same adapter:
 * the full matrix there would add the slowest files twice more, about 45 s; see docs/redis.md).
 */
export type Matrix = 'full' | 'subset';

/** The clients of the `'subset'` matrix. */
const SUBSET: readonly ClientName[] = ['node-redis 5', 'ioredis 6'];

/**
 * The clients a file of `matrix` runs against: see {@link Matrix}; `REDIS_CLIENTS=all` runs every
 * file against every client, and `REDIS_CLIENTS='ioredis 5,node-redis 6'` against those named.
 */
export function kindsFor(matrix: Matrix): readonly ClientKind[] {
  const named = process.env.REDIS_CLIENTS?.trim();
  if (named === 'all') return CLIENT_KINDS;
  if (named) return named.split(',').map((name) => clientKind(name.trim()));
  return matrix === 'full' ? CLIENT_KINDS : SUBSET.map(clientKind);
}

let warned = false;

/**
 * `describe(name, body)` once per Redis client of `matrix` (`name (node-redis 5)`, ...), `body`
 * given the client's kind, when `REDIS_URL` is set; otherwise `describe.skip`, with one printed
 * reason.
 */
export function describeRedis(
  name: string,
  body: (kind: ClientKind) => void,
  matrix: Matrix = 'subset',
): void {
  if (REDIS_URL) {
    for (const kind of kindsFor(matrix)) describe(`${name} (${kind.name})`, () => body(kind));
    return;
  }
  if (!warned) {
    warned = true;
    console.warn(
      'Redis tests skipped: REDIS_URL is not set. Start Redis (redis-server --daemonize yes --port 6379 --save "" --appendonly no) and run REDIS_URL=redis://127.0.0.1:6379 npm test.',
    );
  }
  describe.skip(name, () => body(CLIENT_KINDS[0] as ClientKind));
}

/** A new connection of the client under test to `REDIS_URL`. */
export function connect(kind: ClientKind): Promise<Connection> {
  return kind.connect(REDIS_URL as string);
}

/** A key prefix no other run uses: `lc-test:<file>:<random>:`. */
export function uniquePrefix(label: string): string {
  return `lc-test:${label}:${randomUUID().slice(0, 8)}:`;
}

/**
 * The test's own connection (node-redis 5, whatever the client under test): to look at keys,
 * pause Redis, clean up. Its reconnection gives up quickly, so a test never waits long.
 */
export async function connectAdmin(): Promise<RedisClientType> {
  const client = createClient({
    url: REDIS_URL,
    socket: { reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 500) },
  });
  // A client without an error listener would throw on a connection error; tests watch calls instead.
  client.on('error', () => {});
  await client.connect();
  return client as RedisClientType;
}

/** Deletes every key under `prefix`. */
export async function deleteKeys(client: RedisClientType, prefix: string): Promise<number> {
  let deleted = 0;
  for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
    if (keys.length > 0) deleted += await client.del(keys);
  }
  return deleted;
}

/**
 * The end of a file: deletes every key under `prefix` (on an admin connection of its own) and
 * closes `connections`.
 */
export async function cleanUp(prefix: string, connections: readonly Connection[]): Promise<void> {
  const admin = await connectAdmin();
  try {
    await deleteKeys(admin, prefix);
  } finally {
    admin.destroy();
    for (const connection of connections) await connection.close();
  }
}

/** Resolves to the error `promise` rejects with; fails the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<StoreUnavailableError> {
  try {
    await promise;
  } catch (error) {
    expect(isStoreUnavailableError(error), String(error)).toBe(true);
    return error as StoreUnavailableError;
  }
  throw new Error('expected a rejection');
}

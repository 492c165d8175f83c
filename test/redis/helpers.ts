/**
 * Shared by the Redis tests: the real Redis at `REDIS_URL` (never a mock), a unique key prefix per
 * test file run, and cleanup. Without `REDIS_URL` the files skip, saying why once.
 */
import { randomUUID } from 'node:crypto';
import { createClient, type RedisClientType } from 'redis';
import { describe, expect } from 'vitest';
import { isStoreUnavailableError, type StoreUnavailableError } from '../../src/redis/index.js';

/** The Redis the tests use, or `undefined` to skip them. */
export const REDIS_URL = process.env.REDIS_URL;

let warned = false;

/** `describe` when `REDIS_URL` is set; otherwise `describe.skip`, with one printed reason. */
export function describeRedis(name: string, body: () => void): void {
  if (REDIS_URL) {
    describe(name, body);
    return;
  }
  if (!warned) {
    warned = true;
    console.warn(
      'Redis tests skipped: REDIS_URL is not set. Start Redis (redis-server --daemonize yes --port 6379 --save "" --appendonly no) and run REDIS_URL=redis://127.0.0.1:6379 npm test.',
    );
  }
  describe.skip(name, body);
}

/** A key prefix no other run uses: `lc-test:<file>:<random>:`. */
export function uniquePrefix(label: string): string {
  return `lc-test:${label}:${randomUUID().slice(0, 8)}:`;
}

/** A new connected client. Its reconnection gives up quickly, so a test never waits long. */
export async function connect(): Promise<RedisClientType> {
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

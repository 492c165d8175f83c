/**
 * Which failures mean "Redis is down" (the store fails fast and fires `down`) and which fail one
 * call only: an error Redis answers about a key or a script leaves the store up. Against the real
 * Redis for the errors it really answers, and against clients that fail on purpose for the rest.
 */
import { ReplyError } from 'ioredis';
import type { RedisClientType } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisStoreClient } from '../../src/redis/index.js';
import { RedisStore } from '../../src/redis/index.js';
import { luaScript } from '../../src/redis/lua/index.js';
import { ScriptRunner } from '../../src/redis/runner.js';
import { ConcurrencyLimit, SlidingLog, TokenBucket } from '../../src/server/index.js';
import {
  type Connection,
  connect,
  connectAdmin,
  deleteKeys,
  describeRedis,
  rejection,
  uniquePrefix,
} from './helpers.js';

describeRedis(
  'errors Redis answers',
  (kind) => {
    const prefix = uniquePrefix('errors');
    /** Writes the wrong things; the store is on `connection`, of the client under test. */
    let admin: RedisClientType;
    let connection: Connection;

    beforeAll(async () => {
      admin = await connectAdmin();
      connection = await connect(kind);
    });
    afterAll(async () => {
      await deleteKeys(admin, prefix);
      admin.destroy();
      await connection.close();
    });

    it('refuses to listen to an event it does not have', () => {
      const store = new RedisStore(connection.client, { prefix });
      expect(() => store.on('__proto__' as 'down', () => {})).toThrow(
        "unknown event \"__proto__\": 'down', 'up' or 'store-error'",
      );
      expect(() => store.on('down', () => {})).not.toThrow();
    });

    it('a key of the wrong type under the prefix is read as a fresh key and overwritten', async () => {
      const store = new RedisStore(connection.client, {
        prefix,
        timeoutMs: 5000,
        recheckMs: 60_000,
      });
      const events: string[] = [];
      store.on('down', (error) => events.push(`down: ${error.message}`));
      store.on('up', () => events.push('up'));
      const garbage: [string, (key: string) => Promise<unknown>][] = [
        ['a string that is no state', (key) => admin.set(key, 'not limiter state')],
        ['a hash', (key) => admin.hSet(key, 'tokens', '1')],
        ['a list', (key) => admin.rPush(key, 'x')],
      ];
      for (const [what, write] of garbage) {
        for (const limiter of [
          new ConcurrencyLimit({ limit: 2, store, name: 'wrong-cc' }),
          new SlidingLog({ limit: 2, windowMs: 1000, store, name: 'wrong-sl' }),
          new TokenBucket({ capacity: 2, refillPerSecond: 1, store, name: 'wrong-tb' }),
        ]) {
          const key = store.keyOf(limiter.name, 'k');
          await admin.del(key);
          await write(key);
          expect(await limiter.peek('k'), `${limiter.name}, ${what}`).toMatchObject({
            allowed: true,
            remaining: 2,
          });
          expect((await limiter.take('k')).remaining, `${limiter.name}, ${what}`).toBe(1);
          expect((await limiter.take('k')).remaining, `${limiter.name}, ${what}`).toBe(0);
          expect((await limiter.take('k')).allowed, `${limiter.name}, ${what}`).toBe(false);
        }
      }
      expect(events).toEqual([]);
      expect(store.health()).toMatchObject({ available: true, failed: 0, refused: 0 });
    });

    it('an error Redis answers about a key (WRONGTYPE) fails its own call, not the store', async () => {
      const events: string[] = [];
      const runner = new ScriptRunner(
        connection.client,
        { timeoutMs: 5000, recheckMs: 60_000 },
        { down: () => events.push('down'), up: () => events.push('up') },
      );
      const key = `${prefix}wrongtype`;
      await admin.hSet(key, 'x', '1');
      const get = luaScript(`return redis.call('GET', KEYS[1]) -- ${prefix}`);
      const error = await rejection(runner.run(get, [key], [], 'take'));
      expect(error.message).toMatch(/^store take: Redis failed: WRONGTYPE /);
      await admin.del(key);
      await admin.set(key, 'fine');
      expect(await runner.run(get, [key], [], 'take')).toBe('fine');
      expect(events).toEqual([]);
      expect(runner.health()).toMatchObject({ available: true, succeeded: 1, failed: 1 });
    });

    it('so does a Lua runtime error', async () => {
      const events: string[] = [];
      const runner = new ScriptRunner(
        connection.client,
        { timeoutMs: 5000, recheckMs: 60_000 },
        { down: () => events.push('down'), up: () => events.push('up') },
      );
      const broken = luaScript(`local t = nil; return t.x -- ${prefix}`);
      const error = await rejection(runner.run(broken, [`${prefix}lua`], [], 'take'));
      expect(error.message).toMatch(/^store take: Redis failed: ERR user_script/);
      const fine = luaScript(`return ARGV[1] -- ${prefix}`);
      expect(await runner.run(fine, [`${prefix}lua`], ['ok'], 'take')).toBe('ok');
      expect(events).toEqual([]);
      expect(runner.health()).toMatchObject({ available: true, succeeded: 1, failed: 1 });
    });
  },
  'full',
);

/**
 * A client of each shape whose every call fails with the error `error()` makes: node-redis's
 * (`ErrorReply` and connection errors are `Error`s whose message is what counts), and ioredis's
 * (`ReplyError` for what Redis answered).
 */
const SHAPES: [string, (fail: () => Promise<never>) => RedisStoreClient][] = [
  ['node-redis', (fail) => ({ evalSha: fail, eval: fail })],
  ['ioredis', (fail) => ({ status: 'ready', call: fail })],
];

/** An error as the client makes it: ioredis's replies are `ReplyError`s. */
function errorOf(shape: string, message: string): Error {
  const reply = /^[A-Z]+ /.test(message) && shape === 'ioredis';
  return reply ? (new ReplyError(message) as Error) : new Error(message);
}

describe.each(SHAPES)('what counts as Redis being down (a %s client)', (shape, client) => {
  /** A runner on a client whose every call fails with `message`. */
  function failing(message: string) {
    const events: string[] = [];
    const fail = () => Promise.reject(errorOf(shape, message));
    const runner = new ScriptRunner(
      client(fail),
      { timeoutMs: 1000, recheckMs: 60_000 },
      { down: (error) => events.push(`down: ${error.message}`), up: () => events.push('up') },
    );
    return { runner, events };
  }
  const script = luaScript('return 1');

  for (const message of [
    'Socket closed unexpectedly',
    'connect ECONNREFUSED 127.0.0.1:6379',
    'LOADING Redis is loading the dataset in memory',
    'BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.',
    'READONLY You can not write against a read only replica.',
    // ioredis's own: a closed connection, its offline queue turned off, a command retried past
    // maxRetriesPerRequest, its commandTimeout, a cluster with no node to ask.
    'Connection is closed.',
    "Stream isn't writeable and enableOfflineQueue options is false",
    'Reached the max retries per request limit (which is 20). Refer to "maxRetriesPerRequest" option for details.',
    'Command timed out',
    'None of startup nodes is available',
  ]) {
    it(`down: ${message}`, async () => {
      const { runner, events } = failing(message);
      await rejection(runner.run(script, ['k'], [], 'take'));
      expect(events).toEqual([`down: store take: Redis failed: ${message}`]);
      // Failing fast from then on, without asking.
      const refused = await rejection(runner.run(script, ['k'], [], 'take'));
      expect(refused.message).toMatch(/^store take: not tried: Redis is down/);
    });
  }

  for (const message of [
    'WRONGTYPE Operation against a key holding the wrong kind of value',
    'ERR user_script:1: attempt to index local (a nil value)',
  ]) {
    it(`not down: ${message}`, async () => {
      const { runner, events } = failing(message);
      for (let i = 0; i < 2; i++) {
        const error = await rejection(runner.run(script, ['k'], [], 'take'));
        expect(error.message).toBe(`store take: Redis failed: ${message}`);
      }
      expect(events).toEqual([]);
      expect(runner.health()).toMatchObject({ available: true, failed: 2, refused: 0 });
    });
  }

  it('a probe answered with an error ends the outage: Redis is answering', async () => {
    const events: string[] = [];
    let next = 'Socket closed unexpectedly';
    const fail = () => Promise.reject(errorOf(shape, next));
    const runner = new ScriptRunner(
      client(fail),
      { timeoutMs: 1000, recheckMs: 0 },
      { down: () => events.push('down'), up: () => events.push('up') },
    );
    await rejection(runner.run(script, ['k'], [], 'take'));
    next = 'WRONGTYPE Operation against a key holding the wrong kind of value';
    await rejection(runner.run(script, ['k'], [], 'take'));
    expect(events).toEqual(['down', 'up']);
    expect(runner.health().available).toBe(true);
  });
});

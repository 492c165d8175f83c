/**
 * How the store tells the Redis clients apart (`src/redis/clients.ts`), without Redis: what it
 * refuses, and the states of an ioredis client in which a call must not be sent (it would wait in
 * ioredis's offline queue, past the store's timeout, and be sent late). What each client does
 * against the real Redis is the rest of test/redis, run once per client; the types of the real
 * clients are checked here at compile time.
 */
import type { Cluster as IoCluster, Redis as IoRedis } from 'ioredis';
import type { Cluster as IoCluster5, Redis as IoRedis5 } from 'ioredis5';
import type { createClient, createCluster } from 'redis';
import type { createClient as createClient6, createCluster as createCluster6 } from 'redis6';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { RedisStore, type RedisStoreClient } from '../../src/redis/index.js';
import { type LuaScript, luaScript } from '../../src/redis/lua/index.js';
import { ScriptRunner } from '../../src/redis/runner.js';
import { rejection } from './helpers.js';

describe('the clients RedisStore takes', () => {
  it('takes node-redis 5 and 6 and ioredis 5 and 6, single or cluster, as they are typed', () => {
    expectTypeOf<ReturnType<typeof createClient>>().toExtend<RedisStoreClient>();
    expectTypeOf<ReturnType<typeof createCluster>>().toExtend<RedisStoreClient>();
    expectTypeOf<ReturnType<typeof createClient6>>().toExtend<RedisStoreClient>();
    expectTypeOf<ReturnType<typeof createCluster6>>().toExtend<RedisStoreClient>();
    expectTypeOf<IoRedis>().toExtend<RedisStoreClient>();
    expectTypeOf<IoCluster>().toExtend<RedisStoreClient>();
    expectTypeOf<IoRedis5>().toExtend<RedisStoreClient>();
    expectTypeOf<IoCluster5>().toExtend<RedisStoreClient>();
  });

  it.each([
    ['null', null],
    ['an empty object', {}],
    ['a node-redis shape without eval', { evalSha: () => Promise.resolve() }],
    ['an ioredis shape without a status', { call: () => Promise.resolve() }],
    ['an ioredis shape whose status is not text', { call: () => Promise.resolve(), status: 1 }],
    ['an ioredis shape without call', { status: 'ready' }],
  ])('refuses %s with a TypeError naming the clients it takes', (_what, value) => {
    expect(() => new RedisStore(value as never)).toThrow(
      new TypeError(
        'RedisStore: expected a connected Redis client: from node-redis 5 or 6 (createClient(), createCluster()) or from ioredis 5 or 6 (new Redis(), new Cluster())',
      ),
    );
  });
});

describe('an ioredis client', () => {
  /** A script whose function `f` is in the library `lib`. */
  const script: LuaScript = {
    ...luaScript('return 1'),
    function: { name: 'f', library: { name: 'lib', source: '#!lua name=lib' } },
  };

  /** A runner on an ioredis-shaped client in `status`, recording each command it is sent. */
  function runnerOn(status: string, answer: (command: string, args: unknown[]) => unknown) {
    const sent: string[] = [];
    const client = {
      status,
      call(command: string, args: (string | number)[]) {
        sent.push([command, ...args].join(' '));
        try {
          return Promise.resolve(answer(command, args));
        } catch (error) {
          return Promise.reject(error);
        }
      },
    };
    const runner = new ScriptRunner(
      client,
      { timeoutMs: 60_000, recheckMs: 0 },
      { down: () => {}, up: () => {} },
    );
    return { runner, sent, client };
  }

  it.each(['reconnecting', 'close', 'end'])(
    "status '%s' (a lost or closed connection): not sent (ioredis would queue it), refused at once",
    async (status) => {
      const { runner, sent } = runnerOn(status, () => 'sent');
      const error = await rejection(runner.run(script, ['k'], ['a'], 'take'));
      expect(error.message).toBe('store take: not tried: the client is not connected');
      expect(sent).toEqual([]);
      expect(runner.health()).toMatchObject({ available: false, refused: 1 });
    },
  );

  it.each(['wait', 'connecting', 'connect'])(
    "status '%s': sent before the first connection (it waits for it), refused once the client was ready",
    async (status) => {
      const { runner, sent, client } = runnerOn(status, () => 'sent');
      expect(await runner.run(script, ['k'], ['a'], 'take')).toBe('sent');
      client.status = 'ready';
      expect(await runner.run(script, ['k'], ['a'], 'take')).toBe('sent');
      // Connected once: now the same state is a reconnection.
      client.status = status;
      const error = await rejection(runner.run(script, ['k'], ['a'], 'take'));
      expect(error.message).toBe('store take: not tried: the client is not connected');
      expect(sent).toHaveLength(2);
    },
  );

  it("status 'ready': FCALL with its key count, keys and arguments; FUNCTION LOAD when Redis lacks the function", async () => {
    let loaded = false;
    const { runner, sent } = runnerOn('ready', (command) => {
      if (command === 'FUNCTION') loaded = true;
      else if (!loaded) throw new Error('ERR Function not found');
      return 'ok';
    });
    expect(await runner.run(script, ['k'], ['a', 'b'], 'take')).toBe('ok');
    expect(sent).toEqual([
      'FCALL f 1 k a b',
      'FUNCTION LOAD REPLACE #!lua name=lib',
      'FCALL f 1 k a b',
    ]);
  });

  it('a Cluster: the library is loaded on every master, once for the calls that lack it at once', async () => {
    const loads: string[] = [];
    const master = (name: string) => ({
      call: (command: string, args: string[]) => {
        loads.push(`${name}: ${command} ${args.join(' ')}`);
        return Promise.resolve('lib');
      },
    });
    let loaded = false;
    const cluster = {
      status: 'ready',
      call: (command: string) =>
        loaded || command !== 'FCALL'
          ? Promise.resolve('ok')
          : Promise.reject(new Error('ERR Function not found')),
      nodes: (role: 'master') => {
        expect(role).toBe('master');
        loaded = true;
        return [master('a'), master('b'), master('c')];
      },
    };
    const runner = new ScriptRunner(
      cluster,
      { timeoutMs: 60_000, recheckMs: 0 },
      { down: () => {}, up: () => {} },
    );
    const replies = await Promise.all(
      ['k1', 'k2', 'k3'].map((key) => runner.run(script, [key], [], 'take')),
    );
    expect(replies).toEqual(['ok', 'ok', 'ok']);
    expect(loads).toEqual([
      'a: FUNCTION LOAD REPLACE #!lua name=lib',
      'b: FUNCTION LOAD REPLACE #!lua name=lib',
      'c: FUNCTION LOAD REPLACE #!lua name=lib',
    ]);
  });
});

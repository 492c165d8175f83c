/**
 * The server's in-memory bookkeeping stays bounded: stats keys and idempotency entries.
 */
import { describe, expect, it } from 'vitest';
import { IdempotencyStore } from '../../../src/server/http/idempotency.js';
import { MAX_KEYS_PER_ROUTE, StatsRecorder } from '../../../src/server/http/stats.js';

const held = {
  connections: 0,
  requests: 0,
  bodyBytes: 0,
  limiterKeys: 0,
  idempotencyKeys: 0,
  idempotencyBytes: 0,
};

describe('StatsRecorder', () => {
  it(`lists ${MAX_KEYS_PER_ROUTE} client keys per route, then counts the rest under (other)`, () => {
    const stats = new StatsRecorder();
    for (let i = 0; i < MAX_KEYS_PER_ROUTE + 5; i++) stats.count('GET /', `ip:${i}`, 'admitted');
    stats.count('GET /', 'ip:0', 'rejected');
    const route = stats.snapshot(held).routes['GET /'];
    expect(Object.keys(route?.keys ?? {})).toHaveLength(MAX_KEYS_PER_ROUTE + 1);
    expect(route?.keys['(other)']).toEqual({ admitted: 5, rejected: 0, sideEffects: 0 });
    expect(route?.keys['ip:0']).toEqual({ admitted: 1, rejected: 1, sideEffects: 0 });
    expect(stats.snapshot(held)).toMatchObject({ admitted: MAX_KEYS_PER_ROUTE + 5, rejected: 1 });
    stats.reset();
    expect(stats.snapshot(held).routes['GET /']).toMatchObject({ admitted: 0, keys: {} });
  });
});

describe('IdempotencyStore', () => {
  const response = { execution: 1, json: false };

  it('keeps at most maxEntries keys, dropping the oldest', () => {
    const store = new IdempotencyStore({ ttlMs: 60_000, maxEntries: 2, maxBytes: 1e9 });
    for (const key of ['a', 'b', 'c']) {
      expect(store.begin(key, 'print', 0)).toEqual({ kind: 'new' });
      store.complete(key, response, 0);
    }
    expect(store.size).toBe(2);
    expect(store.begin('a', 'print', 1).kind).toBe('new');
    expect(store.begin('c', 'print', 1)).toEqual({ kind: 'replay', response });
  });

  it('forgets a key after its time to live, and frees an abandoned claim at once', () => {
    const store = new IdempotencyStore({ ttlMs: 1000, maxEntries: 10, maxBytes: 1e9 });
    store.begin('a', 'print', 0);
    store.complete('a', response, 0);
    expect(store.begin('a', 'print', 999).kind).toBe('replay');
    expect(store.begin('a', 'other', 1000).kind).toBe('new');
    expect(store.begin('b', 'print', 0).kind).toBe('new');
    expect(store.begin('b', 'print', 0).kind).toBe('in-progress');
    store.abandon('b');
    expect(store.begin('b', 'print', 0).kind).toBe('new');
  });
});

import { describe, expect, it } from 'vitest';
import { HostRegistry } from '../../src/client/host/registry.js';
import { FakeClock } from './helpers.js';

class Item {
  busy = false;
  constructor(readonly key: string) {}
}

describe('host registry', () => {
  it('keeps at most maxHosts while a crawler touches 100 000 hosts', () => {
    const clock = new FakeClock(0);
    const evicted: string[] = [];
    const r = new HostRegistry<Item>(clock, 1000, 300_000, (k) => evicted.push(k));
    let peak = 0;
    for (let i = 0; i < 100_000; i++) {
      r.get(`https://host-${i}.example`, () => new Item(String(i)));
      peak = Math.max(peak, r.size);
    }
    expect(peak).toBeLessThanOrEqual(1001);
    expect(r.size).toBeLessThanOrEqual(1000);
    expect(evicted.length).toBe(100_000 - r.size);
    expect(evicted[0]).toBe('https://host-0.example');
  });

  it('keeps at most maxHosts plus the busy ones, when the least recently used are busy (long polls)', () => {
    const clock = new FakeClock(0);
    const r = new HostRegistry<Item>(clock, 1000, 300_000, () => {});
    // Eight long polls started first: the front of the recency order, busy throughout.
    for (let i = 0; i < 8; i++)
      r.get(`poll-${i}`, () => Object.assign(new Item('poll'), { busy: true }));
    let peak = 0;
    for (let i = 0; i < 30_000; i++) {
      r.get(`https://host-${i}.example`, () => new Item(String(i)));
      peak = Math.max(peak, r.size);
    }
    expect(peak).toBeLessThanOrEqual(1000 + 8 + 1);
    for (let i = 0; i < 8; i++) expect(r.peek(`poll-${i}`)?.busy).toBe(true);
  });

  it('never evicts the entry it hands out, even when every other entry is busy', () => {
    const clock = new FakeClock(0);
    const evicted: string[] = [];
    const r = new HostRegistry<Item>(clock, 1, 300_000, (k) => evicted.push(k));
    r.get('poll', () => Object.assign(new Item('poll'), { busy: true }));
    // Past maxHosts, the new entry is the only idle one: it is kept until it has been used.
    r.get('new', () => new Item('new'));
    expect(evicted).toEqual([]);
    expect(r.peek('new')).toBeDefined();
    // An existing entry at the front, touched again within the second: kept too.
    r.get('new', () => new Item('again'));
    expect(evicted).toEqual([]);
    // Once the poll is over, the next sweep brings the registry back to maxHosts.
    (r.peek('poll') as Item).busy = false;
    r.get('third', () => new Item('third'));
    expect(r.size).toBe(1);
    expect(r.peek('third')).toBeDefined();
  });

  it('creates lazily, once per key, and keeps used hosts over unused ones', async () => {
    const clock = new FakeClock(0);
    const r = new HostRegistry<Item>(clock, 2, 300_000, () => {});
    let created = 0;
    const make = (k: string) => () => {
      created++;
      return new Item(k);
    };
    const a = r.get('a', make('a'));
    r.get('b', make('b'));
    await clock.advance(1000); // recency is kept to the second
    expect(r.get('a', make('a'))).toBe(a); // a is now the most recent
    r.get('c', make('c')); // evicts b, the least recently used
    expect(created).toBe(3);
    expect(r.peek('b')).toBeUndefined();
    expect(r.peek('a')).toBe(a);
  });

  it('drops hosts idle for idleMs', async () => {
    const clock = new FakeClock(0);
    const r = new HostRegistry<Item>(clock, 1000, 60_000, () => {});
    for (let i = 0; i < 5; i++) r.get(`h${i}`, () => new Item(`h${i}`));
    await clock.advance(60_000);
    r.get('fresh', () => new Item('fresh'));
    expect(r.size).toBe(1);
  });

  it('never drops a busy host', async () => {
    const clock = new FakeClock(0);
    const r = new HostRegistry<Item>(clock, 1, 1000, () => {});
    const busy = r.get('busy', () => new Item('busy'));
    busy.busy = true;
    await clock.advance(5000);
    r.get('other', () => new Item('other'));
    expect(r.peek('busy')).toBe(busy);
    busy.busy = false;
    r.get('third', () => new Item('third'));
    expect(r.peek('busy')).toBeUndefined();
  });
});

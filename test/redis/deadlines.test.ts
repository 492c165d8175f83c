/**
 * The one timer behind every Redis call's timeout (`src/redis/deadlines.ts`), on fake time: waits
 * expire in the order they started, after their duration, never once marked done, and the queue
 * empties as they settle. (No Redis needed.)
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { Deadlines } from '../../src/redis/deadlines.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/**
 * A wait that records when it expired, as the time it was due when it expired no more than a
 * millisecond late (the sweep runs on the next `setImmediate`, which fake time counts as one).
 */
function recorder(deadlines: Deadlines, log: string[], name: string) {
  const wait = deadlines.start({
    expire: () => {
      const late = Date.now() - wait.at;
      log.push(late >= 0 && late <= 1 ? `${name} at ${wait.at}` : `${name} ${late} ms late`);
    },
  });
  return wait;
}

it('expires each wait once, its duration after it started, in order, and not those done', async () => {
  vi.setSystemTime(0);
  const deadlines = new Deadlines(100);
  const log: string[] = [];
  const a = recorder(deadlines, log, 'a');
  await vi.advanceTimersByTimeAsync(30);
  const b = recorder(deadlines, log, 'b');
  const c = recorder(deadlines, log, 'c');
  await vi.advanceTimersByTimeAsync(20);
  recorder(deadlines, log, 'd');
  b.done = true;
  await vi.advanceTimersByTimeAsync(60);
  expect(log).toEqual(['a at 100']);
  expect(a.done).toBe(true);
  await vi.advanceTimersByTimeAsync(100);
  // c at 130 (b was done), d at 150.
  expect(log).toEqual(['a at 100', 'c at 130', 'd at 150']);
  expect(c.done).toBe(true);
  await vi.advanceTimersByTimeAsync(1000);
  expect(log).toHaveLength(3);
});

it('holds no timer once every wait is done, and starts one again for the next wait', async () => {
  vi.setSystemTime(0);
  const deadlines = new Deadlines(50);
  const log: string[] = [];
  for (let i = 0; i < 5000; i++) recorder(deadlines, log, `w${i}`).done = true;
  await vi.advanceTimersByTimeAsync(60);
  expect(vi.getTimerCount()).toBe(0);
  expect(log).toEqual([]);
  recorder(deadlines, log, 'late');
  expect(vi.getTimerCount()).toBe(1);
  await vi.advanceTimersByTimeAsync(60);
  expect(log).toEqual(['late at 110']);
  expect(vi.getTimerCount()).toBe(0);
});

it('drops settled waits as new ones start: a long timeout does not hold every settled call', async () => {
  vi.setSystemTime(0);
  const deadlines = new Deadlines(10_000);
  const log: string[] = [];
  // 32 calls in flight, each settled after the next 32 started, as a busy store does.
  const inFlight: { done: boolean }[] = [];
  for (let i = 0; i < 100_000; i++) {
    inFlight.push(recorder(deadlines, log, `w${i}`));
    if (inFlight.length > 32) (inFlight.shift() as { done: boolean }).done = true;
    expect(deadlines.size).toBeLessThanOrEqual(2 * 1024 + 33);
  }
  // One settled out of order (an early one still pending) keeps the rest behind it until it ends.
  const slow = recorder(deadlines, log, 'slow');
  for (let i = 0; i < 2000; i++) recorder(deadlines, log, `x${i}`).done = true;
  expect(deadlines.size).toBeGreaterThan(2000);
  slow.done = true;
  for (const wait of inFlight) wait.done = true;
  recorder(deadlines, log, 'last').done = true;
  expect(deadlines.size).toBe(1);
  await vi.advanceTimersByTimeAsync(10_001);
  expect(log).toEqual([]);
});

it('a wait started while the sweep expires others (by an expiry listener) is kept and expires', async () => {
  vi.setSystemTime(0);
  const deadlines = new Deadlines(100);
  const log: string[] = [];
  for (let i = 0; i < 3; i++) {
    deadlines.start({
      expire: () => {
        log.push(`a${i} at ${Date.now()}`);
        if (i === 0) recorder(deadlines, log, 'started by a0');
      },
    });
  }
  await vi.advanceTimersByTimeAsync(101);
  expect(log).toEqual(['a0 at 101', 'a1 at 101', 'a2 at 101']);
  await vi.advanceTimersByTimeAsync(101);
  expect(log).toEqual(['a0 at 101', 'a1 at 101', 'a2 at 101', 'started by a0 at 201']);
});

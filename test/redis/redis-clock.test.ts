/**
 * `RedisClock`: deadlines in Redis's clock from the offset measured on quick replies; the text of
 * a deadline is reused within a millisecond and made again in the next.
 */
import { describe, expect, it } from 'vitest';
import { RedisClock } from '../../src/redis/redis-clock.js';

describe('RedisClock', () => {
  it('has no deadline before a quick reply, then half the timeout after sending, in Redis time', () => {
    const clock = new RedisClock(200);
    expect(clock.deadline(1000)).toBe('');
    // A round trip longer than a quarter of the timeout dates nothing.
    clock.calibrate(1000, 1051, 5_000_000);
    expect(clock.deadline(1000)).toBe('');
    clock.calibrate(1000, 1050, 5_000_000);
    // Offset: Redis's 5,000,000 at the middle of the round trip (1025).
    const offset = 5_000_000 - 1025;
    for (const sentAt of [2000, 2000.4, 2000.9, 2001, 2001.5, 2000, 1999.99]) {
      expect(clock.deadline(sentAt), String(sentAt)).toBe(
        String(Math.floor(sentAt + offset + 100)),
      );
    }
  });

  it('reads Redis’s time from the reply with the shortest round trip, a slower one replacing it as it ages', () => {
    const clock = new RedisClock(200);
    expect(clock.redisNow()).toBeUndefined();
    // Any reply dates it at first, a slow one too (off by half its round trip at most).
    clock.calibrate(1000, 1300, 5_000_000);
    const offsetOf = () => (clock.redisNow() as number) - clock.now();
    expect(offsetOf()).toBeCloseTo(5_000_000 - 1150, 1);
    // A quicker one replaces it; a slower one right after does not (it dates less well).
    clock.calibrate(2000, 2002, 5_001_000);
    expect(offsetOf()).toBeCloseTo(5_001_000 - 2001, 1);
    clock.calibrate(2100, 2110, 5_002_000);
    expect(offsetOf()).toBeCloseTo(5_001_000 - 2001, 1);
    // Twenty seconds on, a round trip of 10 ms is within the 2 ms and a millisecond a second.
    clock.calibrate(22_000, 22_010, 5_030_000);
    expect(offsetOf()).toBeCloseTo(5_030_000 - 22_005, 1);
  });
});

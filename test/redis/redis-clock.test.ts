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
});

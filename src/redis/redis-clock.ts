/**
 * Redis's clock as this process sees it: an offset measured on replies, deadlines in Redis's time
 * for the scripts (limiters and client state), and Redis's time now for the client state's time
 * line (`RedisStore.now`).
 *
 * @module
 */
import { performance } from 'node:perf_hooks';

/**
 * Deadlines in Redis's clock, from an offset measured on earlier replies against this process's
 * monotonic clock ({@link RedisClock.now}), so that a step of the wall clock here changes nothing.
 */
export class RedisClock {
  readonly #timeoutMs: number;
  /** Redis's epoch milliseconds minus {@link RedisClock.now}; unknown until a first quick reply. */
  #offsetMs: number | undefined;
  /**
   * The same, for the client state's time line ({@link RedisClock.redisNow}), from the reply with
   * the shortest round trip (the least uncertain: off by half of it at most), which a later reply
   * replaces only when its round trip is as short, give or take a millisecond per second since.
   * Processes on one machine then read Redis's time within a millisecond of each other, where the
   * last quick reply (what deadlines take) could put them tens of milliseconds apart on a busy
   * machine: enough to stall a shared client bucket refilling every 25 ms.
   */
  #timeOffsetMs: number | undefined;
  #bestRttMs = Number.POSITIVE_INFINITY;
  #bestAt = 0;
  /** The last deadline made, and its text. */
  #lastMs = Number.NaN;
  #lastText = '';

  /** @param timeoutMs the runner's timeout: a call's deadline is half of it after sending. */
  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  /** This process's monotonic clock, in milliseconds: what `sentAt` and `receivedAt` are read on. */
  now(): number {
    return performance.now();
  }

  /**
   * The deadline of a call sent at `sentAt` ({@link RedisClock.now}), in Redis's epoch
   * milliseconds, as a script argument: half the timeout after sending, leaving the other half for
   * the reply to come back. `''` (no deadline) while the offset is unknown.
   */
  deadline(sentAt: number): string {
    if (this.#offsetMs === undefined) return '';
    const ms = Math.floor(sentAt + this.#offsetMs + this.#timeoutMs / 2);
    // Calls sent within the same millisecond share the text (made once, not per call).
    if (ms !== this.#lastMs) {
      this.#lastMs = ms;
      this.#lastText = String(ms);
    }
    return this.#lastText;
  }

  /**
   * Takes Redis's clock (`redisNow`, from a reply): for deadlines, from a call whose round trip
   * was short enough to date it (within a quarter of the timeout, so the offset is off by an
   * eighth of it at most); for the time line, from the shortest round trip (see `#timeOffsetMs`).
   */
  calibrate(sentAt: number, receivedAt: number, redisNow: number): void {
    if (!Number.isFinite(redisNow)) return;
    const rttMs = receivedAt - sentAt;
    const offset = redisNow - (sentAt + receivedAt) / 2;
    if (rttMs <= this.#timeoutMs / 4) this.#offsetMs = offset;
    if (rttMs <= this.#bestRttMs + (receivedAt - this.#bestAt) / 1000) {
      this.#bestRttMs = rttMs;
      this.#bestAt = receivedAt;
      this.#timeOffsetMs = offset;
    }
  }

  /**
   * Redis's time now, epoch milliseconds, as this process estimates it (its monotonic clock plus
   * the offset: a step of the wall clock here changes nothing); `undefined` before any reply.
   */
  redisNow(): number | undefined {
    const offset = this.#timeOffsetMs;
    return offset === undefined ? undefined : this.now() + offset;
  }
}

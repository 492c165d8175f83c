/**
 * Test doubles: a fake clock that moves only when told, and a scripted fetch.
 */
import type { Clock } from '../../src/shared/clock.js';

interface Timer {
  at: number;
  seq: number;
  resolve: () => void;
  cleanup: () => void;
}

/** Lets every pending promise callback run (one macrotask turn drains the microtask queue). */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A deterministic PRNG (mulberry32) for `random()`. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A clock whose time moves only with {@link FakeClock.advance}. */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];
  readonly random: () => number;

  constructor(start = 1_700_000_000_000, seed = 42) {
    this.t = start;
    this.random = seeded(seed);
  }

  now(): number {
    return this.t;
  }

  /** Pending sleeps. */
  get pending(): number {
    return this.timers.length;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const timer: Timer = {
        at: this.t + Math.max(0, ms),
        seq: this.seq++,
        resolve,
        cleanup: () => {},
      };
      const onAbort = () => {
        this.timers = this.timers.filter((x) => x !== timer);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      timer.cleanup = () => signal?.removeEventListener('abort', onAbort);
      this.timers.push(timer);
    });
  }

  /** Moves time forward by `ms`, firing due sleeps in order and letting their callbacks run. */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    await flush();
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > target) break;
      this.timers.shift();
      this.t = Math.max(this.t, next.at);
      next.cleanup();
      next.resolve();
      await flush();
    }
    this.t = target;
    await flush();
  }

  /**
   * Sets the time `ms` milliseconds back, as an NTP step does to a wall clock; pending sleeps keep
   * their durations (a timer runs on its own clock, not the wall clock).
   */
  stepBack(ms: number): void {
    this.t -= ms;
    for (const timer of this.timers) timer.at -= ms;
  }

  /** Advances in steps until `promise` settles (or `maxMs` passes); returns how long it took. */
  async until<T>(promise: Promise<T>, maxMs = 3_600_000, stepMs = 10): Promise<number> {
    let done = false;
    promise.then(
      () => {
        done = true;
      },
      () => {
        done = true;
      },
    );
    const start = this.t;
    await flush();
    while (!done && this.t - start < maxMs) await this.advance(stepMs);
    return this.t - start;
  }
}

/** One recorded call of a {@link scriptedFetch}. */
export interface Call {
  url: string;
  method: string;
  headers: Headers;
  body: string | undefined;
  at: number;
}

/** What the script answers: a response, or a thrown error (a network error), maybe later. */
export type Handler = (call: Call, index: number) => Response | Promise<Response>;

/**
 * A fetch that records calls and answers with `handler`. Honors the signal: an abort rejects with
 * its reason, even while the handler is pending.
 */
export function scriptedFetch(clock: Clock, handler: Handler) {
  const calls: Call[] = [];
  const fn = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const signal = init?.signal ?? undefined;
    if (signal?.aborted) throw signal.reason;
    const body = request.body ? await request.text() : undefined;
    const call: Call = {
      url: request.url,
      method: request.method,
      headers: request.headers,
      body,
      at: clock.now(),
    };
    calls.push(call);
    const answer = Promise.resolve().then(() => handler(call, calls.length - 1));
    if (!signal) return answer;
    return new Promise<Response>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      answer.then(
        (r) => {
          signal.removeEventListener('abort', onAbort);
          resolve(r);
        },
        (e) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      );
    });
  };
  return Object.assign(fn as typeof fetch, { calls });
}

/** A network error shaped as undici's: `TypeError('fetch failed')` with a coded cause. */
export function networkError(code = 'ECONNRESET'): TypeError {
  const cause = Object.assign(new Error(`read ${code}`), { code });
  return new TypeError('fetch failed', { cause });
}

/** A response with `status` and headers. */
export function respond(status: number, headers: Record<string, string> = {}, body = ''): Response {
  return new Response(status === 204 || status === 304 ? null : body, { status, headers });
}

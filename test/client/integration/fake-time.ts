/**
 * Real HTTP on loopback, on fake time: the client and the mock server share one {@link FakeClock},
 * and time moves only while no request is on the wire. A run's duration is then counted in the
 * clock's milliseconds, the same on a quiet machine and a loaded one, so a test can bound it
 * without flaking: a slow round trip costs real time, never fake time.
 */
import type { Clock } from '../../../src/shared/clock.js';
import { FakeClock, flush } from '../helpers.js';

/** A fetch that counts its requests in flight, each until its body has been read whole. */
export interface CountingFetch {
  fetch: typeof fetch;
  /** Requests sent whose answer (headers and body) has not all arrived yet. */
  readonly inFlight: number;
}

/**
 * Wraps `base` so that each request counts as in flight until its whole body has arrived: the
 * body is read before the response is handed on, so no byte is still on its way when the clock
 * moves.
 */
export function countingFetch(base: typeof fetch = fetch): CountingFetch {
  let inFlight = 0;
  const wrapped = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    inFlight++;
    try {
      const response = await base(input, init);
      const body =
        response.status === 204 || response.status === 304 ? null : await response.arrayBuffer();
      return new Response(body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    } finally {
      inFlight--;
    }
  };
  return {
    fetch: wrapped as typeof fetch,
    get inFlight() {
      return inFlight;
    },
  };
}

/**
 * Real time a request may stay in flight before the driver gives up: only a request the server
 * holds until its (fake) clock moves stays that long. A hang detector, not a speed bound.
 */
const STUCK_MS = 15_000;

/** Resolves after `ms` of real time. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Waits (in real time) until nothing is in flight and the callbacks it let loose have run: the
 * client is then waiting on the fake clock or done.
 */
async function quiet(wire: CountingFetch): Promise<void> {
  for (;;) {
    const since = Date.now();
    while (wire.inFlight > 0) {
      // A request the server holds on the fake clock would wait here for ever: say so.
      if (Date.now() - since > STUCK_MS) throw new Error(`a request in flight for ${STUCK_MS} ms`);
      await pause(1);
    }
    // A few turns for what an answer set off (the call's settle, its next attempt) to reach the
    // wire or a sleep of the fake clock.
    for (let i = 0; i < 3; i++) await flush();
    if (wire.inFlight === 0) return;
  }
}

/**
 * Waits (in real time) until `condition` holds, checking every millisecond: for an event of the
 * wire or the server (a request reached its handler, an aborted attempt left the wire), never for
 * a duration. Throws past {@link STUCK_MS}, naming `what` (a hang detector, not a speed bound).
 */
export async function until(condition: () => boolean, what: string): Promise<void> {
  const since = Date.now();
  while (!condition()) {
    if (Date.now() - since > STUCK_MS) throw new Error(`waited ${STUCK_MS} ms for ${what}`);
    await pause(1);
  }
}

/** The mock server's side of a shared {@link FakeClock}, counting the sleeps it holds. */
export interface ServerClock extends Clock {
  /** Sleeps pending now: requests the server holds on the clock (a handler's `latencyMs`). */
  readonly sleeping: number;
}

/**
 * `clock` for the mock server: the same time, with its pending sleeps counted, so that a test can
 * tell a request held by the server on the fake clock (it waits for time to move) from one still
 * on its way (it waits for the wire).
 */
export function serverClock(clock: FakeClock): ServerClock {
  let sleeping = 0;
  return {
    now: () => clock.now(),
    random: () => clock.random(),
    sleep(ms, signal) {
      sleeping++;
      return clock.sleep(ms, signal).finally(() => {
        sleeping--;
      });
    },
    get sleeping() {
      return sleeping;
    },
  };
}

/**
 * `response` with its `Date` on `clock`: a server stamps the machine's time, and the client reads
 * epoch resets (Anthropic's RFC 3339 ones) against the server's `Date` where it has one.
 */
export async function datedBy(clock: FakeClock, response: Response): Promise<Response> {
  const headers = new Headers(response.headers);
  headers.set('date', new Date(clock.now()).toUTCString());
  return new Response(await response.arrayBuffer(), { status: response.status, headers });
}

/**
 * Moves `clock` forward in steps of `stepMs` until `work` settles, each step only once the wire
 * is quiet; returns the fake milliseconds it took. Throws past `maxMs` of fake time (a hang).
 */
export async function runOnFakeTime(
  clock: FakeClock,
  wire: CountingFetch,
  work: Promise<unknown>,
  { stepMs = 10, maxMs = 3_600_000 }: { stepMs?: number; maxMs?: number } = {},
): Promise<number> {
  let done = false;
  work.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  const start = clock.now();
  for (;;) {
    await quiet(wire);
    if (done) return clock.now() - start;
    if (clock.now() - start >= maxMs) throw new Error(`not settled after ${maxMs} ms of fake time`);
    await clock.advance(stepMs);
  }
}

export { FakeClock };

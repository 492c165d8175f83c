/**
 * Issue 24, item 3: a wall clock that steps back (NTP) must not turn a short wait into a long one.
 * The client records the moments of its waits (a hold's end, a reset, its bucket's last refill, the
 * breaker's opening) on the host's state time, which never goes back: a step of the wall clock
 * moves it on, so a 1 s hold still lasts 1 s. Over loopback against scripted servers, on fake time
 * (the durations are the clock the client runs on; `FakeClock.stepBack` moves it back by an hour).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isCircuitOpenError, LimitedClient } from '../../src/index.js';
import { FakeClock } from '../client/helpers.js';
import { type Scripted, type ScriptedServer, scriptedServer } from './helpers.js';

const HOUR_MS = 3_600_000;
const OK: Scripted = { status: 200, body: 'ok' };

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** What a call ends with: its status, or its error's name. */
async function outcome(promise: Promise<Response>): Promise<number | string> {
  try {
    const response = await promise;
    await response.text();
    return response.status;
  } catch (error) {
    return (error as Error).name;
  }
}

/**
 * Makes a call, steps the clock back an hour while the client holds the host, and returns the next
 * call's outcome and the fake time it took.
 */
async function afterStepBack(client: LimitedClient, clock: FakeClock) {
  clock.stepBack(HOUR_MS);
  const next = outcome(client.get('/after'));
  const took = await clock.until(next, 2 * HOUR_MS, 50);
  return { took, outcome: await next };
}

describe('a wall clock stepped back an hour', () => {
  it('a 1 s hold (429, Retry-After: 1) still lasts about a second', async () => {
    server = await scriptedServer((_req, i) =>
      i === 0 ? { status: 429, headers: [['retry-after', '1']] } : OK,
    );
    const clock = new FakeClock();
    const client = new LimitedClient(server.url, { clock, retry: false, coldStart: false });
    expect(await outcome(client.get('/first'))).toBe(429);
    const { took, outcome: next } = await afterStepBack(client, clock);
    expect(next).toBe(200);
    // The hold and its jitter (at most 5 %, 1 s), not an hour (RateLimitError before: 3,601 s
    // is past maxRetryAfterMs).
    expect(took).toBeLessThanOrEqual(1100);
    await client.close();
  });

  it('a spent policy whose reset is 2 s away still waits about 2 s', async () => {
    server = await scriptedServer((_req, i) => ({
      status: 200,
      headers: [
        ['ratelimit-policy', '"p";q=1;w=60'],
        ['ratelimit', `"p";r=${i === 0 ? 0 : 1};t=2`],
      ],
      body: 'ok',
    }));
    const clock = new FakeClock();
    const client = new LimitedClient(server.url, { clock, coldStart: false });
    expect(await outcome(client.get('/first'))).toBe(200);
    const { took, outcome: next } = await afterStepBack(client, clock);
    expect(next).toBe(200);
    expect(took).toBeGreaterThanOrEqual(2000);
    expect(took).toBeLessThanOrEqual(2100);
    await client.close();
  });

  it('the client bucket (1 a second) keeps refilling', async () => {
    server = await scriptedServer(() => OK);
    const clock = new FakeClock();
    const client = new LimitedClient(server.url, { clock, rate: 1, coldStart: false });
    expect(await outcome(client.get('/first'))).toBe(200);
    // Before: its last refill an hour ahead of the clock, the bucket refilled nothing for an hour.
    const { took, outcome: next } = await afterStepBack(client, clock);
    expect(next).toBe(200);
    expect(took).toBeLessThanOrEqual(1050);
    await client.close();
  });

  it('an open circuit breaker lets a probe through, not an hour of refusals', async () => {
    server = await scriptedServer((_req, i) => (i < 2 ? { status: 500 } : OK));
    const clock = new FakeClock();
    const client = new LimitedClient(server.url, {
      clock,
      retry: false,
      coldStart: false,
      circuitBreaker: { consecutiveFailures: 2, coolDownMs: 1000 },
    });
    expect(await outcome(client.get('/a'))).toBe(500);
    expect(await outcome(client.get('/b'))).toBe(500);
    const refused = await client.get('/c').catch((error: unknown) => error);
    expect(isCircuitOpenError(refused)).toBe(true);
    clock.stepBack(HOUR_MS);
    // Before: open until an hour and a second from now. How long it has been open is unknown
    // after the step: it half-opens, and one probe decides.
    expect(await outcome(client.get('/probe'))).toBe(200);
    await client.close();
  });
});

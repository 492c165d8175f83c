/**
 * Issue 24, item 1: a server that says "come back now" forever. `Retry-After: 0` (or `0.001`)
 * switched off every protection: 20 callers sent it 2,300-3,150 requests a second, the refusing
 * host rule brought that to about 1,000 a second after 10 s (its one probe at a time had no gap),
 * a 503 with it never opened the breaker, and `0.001` walked past the retry budget (every call used
 * its 3 retries). A "come back now" now goes through the pace, the breaker and the budget like any
 * refusal that gives no time.
 *
 * Real HTTP against a loopback server, with the client on fake time: the server stamps each
 * request with the client's clock, so requests are counted per second of the time the client runs
 * on, whatever the machine's load.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isCircuitOpenError, LimitedClient } from '../../src/index.js';
import { FakeClock } from '../client/helpers.js';
import { type ScriptedServer, scriptedServer } from './helpers.js';

const CALLERS = 20;
const RUN_MS = 30_000;
const ORIGIN_START = 1_700_000_000_000;

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** 20 callers calling back to back for 30 s of the client's time; what the server saw. */
async function hammer(status: number, retryAfter: string) {
  const clock = new FakeClock(ORIGIN_START);
  const stamps: number[] = [];
  server = await scriptedServer(() => {
    stamps.push(clock.now());
    return { status, headers: [['Retry-After', retryAfter]], body: 'come back now' };
  });
  const client = new LimitedClient(server.url, { clock });
  const outcomes = new Map<string, number>();
  const note = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
  let calls = 0;
  const callers = Array.from({ length: CALLERS }, async () => {
    while (clock.now() - ORIGIN_START < RUN_MS) {
      calls++;
      try {
        const response = await client.get('/x');
        await response.arrayBuffer();
        note(String(response.status));
      } catch (error) {
        note(isCircuitOpenError(error) ? 'CircuitOpenError' : (error as Error).name);
      }
      // A turn of the caller's own between calls (a call refused at once would spin otherwise).
      await clock.sleep(10);
    }
  });
  // Steps of 10 ms of the client's time, each letting loopback I/O through.
  await clock.until(Promise.all(callers), RUN_MS + 120_000, 10);
  const stats = client.stats().hosts[server.url];
  await client.close();
  /** Requests the server received in each second of the client's time. */
  const perSecond = new Array<number>(Math.ceil(RUN_MS / 1000) + 1).fill(0);
  for (const at of stamps) {
    const second = Math.floor((at - ORIGIN_START) / 1000);
    if (second < perSecond.length) perSecond[second] = (perSecond[second] ?? 0) + 1;
  }
  return { perSecond, received: stamps.length, calls, outcomes, stats };
}

describe('a server that answers "come back now" forever, 20 callers', { timeout: 60_000 }, () => {
  it.each([
    [429, '0'],
    [429, '0.001'],
    [503, '0'],
  ])(
    '%i + Retry-After: %s: at most a few requests a second after the first seconds',
    async (status, after) => {
      const { perSecond, received } = await hammer(status, after);
      // Thousands a second before; now the pace's lockout spaces its probes.
      expect(Math.max(...perSecond.slice(5))).toBeLessThanOrEqual(3);
      expect(received).toBeLessThan(200);
    },
  );

  it('503 + Retry-After: 0: the breaker opens (a come-back-now 5xx spares nothing)', async () => {
    const { outcomes, stats } = await hammer(503, '0');
    expect(stats?.circuitOpen).toBeGreaterThan(0);
    expect(outcomes.get('CircuitOpenError') ?? 0).toBeGreaterThan(0);
  });

  it('429 + Retry-After: 0.001: retries stay within what the retry budget allows', async () => {
    const { stats, calls } = await hammer(429, '0.001');
    // The budget: 10 % of the requests plus 1 a second (the defaults), over the run. Before, every
    // call used its 3 retries, as if each wait of 1 ms were the server's pacing.
    const allowed = 0.1 * calls + RUN_MS / 1000;
    expect(stats?.retries).toBeLessThanOrEqual(allowed);
    expect(stats?.attempts).toBeLessThan(2 * calls);
  });
});

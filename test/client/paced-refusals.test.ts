/**
 * A Stripe-like account limit (a bucket of 25 refilled at 25 a second, a bare 429 with no header)
 * shared with a neighbour that takes what it can at about 22-24 a second: the client's retries
 * after those 429s wait for the host's adaptive pace. They used to ask the retry budget too
 * (10 + 10 % of the requests over 10 s): some 20 refusals in a few seconds spent it, and a call's
 * first 429 was handed back (`budget-exhausted` after one attempt) while the host still accepted
 * at its rate. The pace bounds what the host is sent, so these retries spend no budget. Nor do
 * they spend the call's `retries`: counted, four pace-spaced bare 429s ended a call
 * (`retries-exhausted after 4`, seed 3) while the host accepted the others; they are bounded by
 * time instead (`maxRetryAfterMs` from the call's first one).
 */
import { describe, expect, it } from 'vitest';
import { LimitedClient } from '../../src/index.js';
import { TokenBucket } from '../peers/provider-shapes.js';
import { FakeClock, respond, scriptedFetch } from './helpers.js';

/** A seeded linear congruential generator in [0, 1): the neighbour's own randomness. */
function lcg(seed: number): () => number {
  let x = seed * 7919;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

/** 100 calls, 10 in flight, next to a neighbour taking `neighbourRate` a second (Poisson). */
async function sharedAccount(neighbourRate: number, seed: number) {
  const clock = new FakeClock(1_700_000_000_000, seed);
  const random = lcg(seed);
  const bucket = new TokenBucket(25, 1000);
  let refused = 0;
  const fetch = scriptedFetch(clock, async () => {
    await clock.sleep(1 + Math.floor(random() * 10));
    const t = clock.now();
    if (bucket.fits(t, 1)) {
      bucket.spend(t, 1);
      return respond(200, {}, 'ok');
    }
    refused++;
    return respond(429, {}, '{"error":{"code":"rate_limit"}}');
  });
  let stop = false;
  const neighbour = (async () => {
    while (!stop) {
      await clock.sleep(Math.max(1, Math.round((-Math.log(1 - random()) * 1000) / neighbourRate)));
      const t = clock.now();
      if (bucket.fits(t, 1)) bucket.spend(t, 1);
    }
  })();
  const client = new LimitedClient('https://api.example.com', { fetch, clock });
  const gaveUp: string[] = [];
  client.on('give-up', (e) => gaveUp.push(`${e.reason} after ${e.attempts}`));
  let next = 0;
  const statuses: number[] = [];
  const run = Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < 100) {
        next++;
        const response = await client.get('/v1/customers/cus_1');
        await response.arrayBuffer();
        statuses.push(response.status);
      }
    }),
  );
  await clock.until(run, 120_000, 1);
  stop = true;
  await clock.advance(5000);
  await neighbour;
  await client.close();
  return { gaveUp, statuses, refused };
}

describe('bare 429s of a shared account limit', () => {
  // Seeds where, before, the budget ran out (20-24 refusals in the first seconds), and one where a
  // call met four paced 429s in a row and ran out of retries (24/s, seed 3).
  it.each([
    [22, 4],
    [24, 2],
    [24, 3],
  ])('completes every call next to a neighbour at %i/s (seed %i)', async (rate, seed) => {
    const { gaveUp, statuses, refused } = await sharedAccount(rate, seed);
    expect(gaveUp).toEqual([]);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    // The scenario does what it says: the neighbour makes the host refuse the client often.
    expect(refused).toBeGreaterThanOrEqual(10);
  });
});

/**
 * Cold start and the ramp over the whole pipeline, on fake time: a slow request to a host that
 * has not answered yet (or that declares nothing) holds the others back for a bounded time only.
 */
import { describe, expect, it } from 'vitest';
import { LimitedClient } from '../../src/index.js';
import { FakeClock, flush, respond, scriptedFetch } from './helpers.js';

function setup(slowMs: number) {
  const clock = new FakeClock();
  const fetch = scriptedFetch(clock, (call) =>
    call.url.endsWith('/slow') ? clock.sleep(slowMs).then(() => respond(200)) : respond(200),
  );
  const client = new LimitedClient('https://api.example.com', { fetch, clock });
  const sentAt = (path: string) => fetch.calls.find((c) => c.url.endsWith(path))?.at;
  return { clock, fetch, client, sentAt };
}

describe('cold start', () => {
  it('a call behind a slow first request to a new host waits one second, not the slow one', async () => {
    const { clock, client, sentAt } = setup(3000);
    const start = clock.now();
    const slow = client.get('/slow');
    await clock.advance(20);
    const fast = client.get('/fast');
    await clock.until(fast);
    expect((await fast).status).toBe(200);
    expect((sentAt('/fast') ?? 0) - start).toBe(1000);
    await clock.until(slow);
  });

  it('on a host that declares nothing, long polls hold a call back for twice the round trip at most', async () => {
    const { clock, client, fetch, sentAt } = setup(30_000);
    for (let i = 0; i < 3; i++) await client.get(`/warm/${i}`); // answered at once: window 2
    const polls = [client.get('/slow'), client.get('/slow'), client.get('/slow')];
    await flush();
    const asked = clock.now();
    const fast = client.get('/fast');
    await clock.until(fast);
    // Answers took 0 ms here, so a request counts for the floor of 100 ms.
    expect((sentAt('/fast') ?? 0) - asked).toBeLessThanOrEqual(100);
    expect(fetch.calls.filter((c) => c.url.endsWith('/slow'))).toHaveLength(3);
    await clock.until(Promise.all(polls), 60_000, 1000);
  });
});

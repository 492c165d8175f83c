/**
 * Issue 24, item 2: one answer declaring a limit below a call's cost must not lock the host out
 * for good. `CostTooHighError` holds while the limit is current (until its reset); past the reset
 * the limit is no longer known and one probe goes, so a server that raised its limit is heard.
 * Fake time: the bound is on the clock the client runs on.
 */
import { describe, expect, it } from 'vitest';
import { isCostTooHighError, LimitedClient, wrapFetch } from '../../src/index.js';
import { FakeClock, respond, scriptedFetch } from '../client/helpers.js';

describe('a declared limit below a call cost, past its reset', () => {
  it('X-RateLimit-Limit: 0 once: refused until the reset, then one probe, then served', async () => {
    const clock = new FakeClock();
    const fetch = scriptedFetch(clock, (_call, i) =>
      i === 0
        ? respond(200, {
            'x-ratelimit-limit': '0',
            'x-ratelimit-remaining': '0',
            'x-ratelimit-reset': '1',
          })
        : respond(200, {
            'x-ratelimit-limit': '100',
            'x-ratelimit-remaining': '99',
            'x-ratelimit-reset': '1',
          }),
    );
    const client = new LimitedClient('https://api.example.com', { fetch, clock });
    expect((await client.get('/first')).status).toBe(200);
    // The limit of 0 holds until its reset, a second away: refused at once, nothing sent.
    const refused = await client.get('/now').catch((e: unknown) => e);
    expect(isCostTooHighError(refused)).toBe(true);
    expect(fetch.calls).toHaveLength(1);
    await clock.advance(1000);
    // Past the reset: one probe goes, the server's new limit answers it, and the host is open.
    const later = client.get('/later');
    await clock.until(later, 10_000, 10);
    expect((await later).status).toBe(200);
    const next = client.get('/next');
    await clock.until(next, 10_000, 10);
    expect((await next).status).toBe(200);
    expect(fetch.calls).toHaveLength(3);
    await client.close();
  });

  it('a token policy of 1,000 that the server later raises: calls of 1,200 tokens go again', async () => {
    const clock = new FakeClock();
    let tokenLimit = 1000;
    const fetch = scriptedFetch(clock, () =>
      respond(200, {
        'x-ratelimit-limit-requests': '60',
        'x-ratelimit-remaining-requests': '59',
        'x-ratelimit-reset-requests': '1s',
        'x-ratelimit-limit-tokens': String(tokenLimit),
        'x-ratelimit-remaining-tokens': String(tokenLimit),
        'x-ratelimit-reset-tokens': '6s',
      }),
    );
    const call = wrapFetch(fetch, { clock });
    const URL_ = 'https://llm.example.com/v1/chat';
    expect((await call(URL_, { cost: { requests: 1, tokens: 10 } })).status).toBe(200);
    // The server raises its limit; the client still believes 1,000 until the reset, 6 s away.
    tokenLimit = 2000;
    const early = await call(URL_, { cost: { requests: 1, tokens: 1200 } }).catch((e) => e);
    expect(isCostTooHighError(early)).toBe(true);
    // Two simulated hours of such calls, one a minute: before the fix every one was refused.
    let served = 0;
    for (let minute = 0; minute < 120; minute++) {
      await clock.advance(60_000);
      const response = call(URL_, { cost: { requests: 1, tokens: 1200 } }).catch((e) => e);
      await clock.until(response, 10_000, 10);
      if ((await response) instanceof Response) served++;
    }
    expect(served).toBe(120);
    await call.close();
  });
});

/**
 * Issue 26 §6, the IETF draft's partition key over real HTTP on fake time. Two routes with their
 * own limits are two budgets, and say so with two policy names; a limit with `partitionKey: true`
 * adds `pk`, a byte sequence naming the request's budget under it (one per API key here), and
 * never the key itself. What the fields declare is true.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../../src/headers/index.js';
import { createMockServer, type MockServer } from '../../../src/server/index.js';
import { all, call, pacedStatuses } from './budgets.js';
import { FakeClock } from './helpers.js';

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const byToken = { header: 'authorization' } as const;

async function ietf(clock: FakeClock, partitionKey = true): Promise<string> {
  server = await createMockServer({
    clock,
    routes: [
      {
        path: '/search',
        limits: [
          { algorithm: 'fixed-window', limit: 3, windowMs: 6000, key: byToken, partitionKey },
        ],
      },
      {
        path: '/repos/:repo',
        limits: [
          { algorithm: 'fixed-window', limit: 10, windowMs: 10_000, key: byToken, partitionKey },
        ],
      },
    ],
  });
  return server.url;
}

const as = (token: string) => ({ headers: { authorization: token } });
const PK = /;pk=:([A-Za-z0-9+/]{16}):/;

describe('the mock server with IETF partition keys', () => {
  it('names each budget: a policy per route, a pk per key, never the key', async () => {
    const clock = new FakeClock();
    const url = await ietf(clock);
    const alice = await call(`${url}/search`, as('token-alice'));
    const policy = alice.headers.get('ratelimit-policy') as string;
    const current = alice.headers.get('ratelimit') as string;
    expect(policy).toMatch(/^"\* \/search fixed-window";q=3;w=6;pk=:[^:]+:$/);
    expect(current).toMatch(/^"\* \/search fixed-window";r=2;t=6;pk=:[^:]+:$/);
    const pk = PK.exec(policy)?.[1];
    expect(PK.exec(current)?.[1]).toBe(pk);
    expect(Buffer.from(pk as string, 'base64').toString('latin1')).not.toContain('alice');
    // The same key again: the same pk. Another key: another pk. Another route: another name and pk.
    const again = await call(`${url}/search`, as('token-alice'));
    expect(PK.exec(again.headers.get('ratelimit') as string)?.[1]).toBe(pk);
    const bob = await call(`${url}/search`, as('token-bob'));
    expect(PK.exec(bob.headers.get('ratelimit') as string)?.[1]).not.toBe(pk);
    expect(bob.headers.get('ratelimit')).toContain(';r=2;');
    const repo = await call(`${url}/repos/x`, as('token-alice'));
    expect(repo.headers.get('ratelimit-policy')).toContain('"* /repos/:repo fixed-window";q=10;');
    expect(PK.exec(repo.headers.get('ratelimit') as string)?.[1]).not.toBe(pk);
    const parsed = parseRateLimitHeaders(alice.headers, { now: clock.now() });
    expect(parsed?.source).toBe('ietf');
    expect(parsed?.policies[0]).toMatchObject({ partitionKey: pk, limit: 3, remaining: 2 });
  });

  it('without partitionKey the fields are as before: no pk', async () => {
    const clock = new FakeClock();
    const url = await ietf(clock, false);
    const answer = await call(`${url}/search`, as('token-alice'));
    expect(answer.headers.get('ratelimit-policy')).toBe('"* /search fixed-window";q=3;w=6');
    expect(answer.headers.get('ratelimit')).toBe('"* /search fixed-window";r=2;t=6');
  });

  it('a refusal names the spent budget with its pk; the other budgets go on', async () => {
    const clock = new FakeClock();
    const url = await ietf(clock);
    for (let i = 0; i < 3; i++) await call(`${url}/search`, as('a'));
    const refused = await call(`${url}/search`, as('a'));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit')).toMatch(/;r=0;t=6;pk=:/);
    expect((await call(`${url}/search`, as('b'))).status).toBe(200);
    expect((await call(`${url}/repos/r`, as('a'))).status).toBe(200);
  });

  it('declares the truth: paced at q per w, never refused; one more per w is', async () => {
    const clock = new FakeClock();
    const url = await ietf(clock);
    const first = await call(`${url}/search`, as('a'));
    const info = parseRateLimitHeaders(first.headers, { now: clock.now() });
    const limit = info?.limit as number;
    const windowMs = info?.windowMs as number;
    expect([limit, windowMs]).toEqual([3, 6000]);
    clock.advance(windowMs);
    const send = () => call(`${url}/search`, as('a'));
    expect(await pacedStatuses(clock, limit, windowMs, 4, send)).toEqual(all(200, 12));
    clock.advance(windowMs - (clock.now() % windowMs));
    expect(await pacedStatuses(clock, limit + 1, windowMs, 1, send)).toEqual([200, 200, 200, 429]);
  });
});

/**
 * Issue 11, items 1 and 4, over real HTTP: a server names its policies whatever it likes. A name
 * that is a property of `Object.prototype` must not reach it, nor stop the limit from holding; and a
 * server that sends a fresh name on every answer must not make the client keep them all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isRateLimitError, LimitedClient } from '../../src/index.js';
import {
  PROTOTYPE_NAMES,
  prototypeSnapshot,
  type ScriptedServer,
  scriptedServer,
} from './helpers.js';

let server: ScriptedServer | undefined;
const clients: LimitedClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await server?.close();
  server = undefined;
});

function client(url: string): LimitedClient {
  const c = new LimitedClient(url, { coldStart: false, retry: false });
  clients.push(c);
  return c;
}

describe('policy names from a hostile server', () => {
  it('a policy named __proto__ does not reach Object.prototype, and the client still works', async () => {
    const before = prototypeSnapshot();
    server = await scriptedServer(() => ({
      status: 200,
      headers: [
        ['RateLimit-Policy', '"__proto__";q=100;w=60'],
        ['RateLimit', '"__proto__";r=5;t=30'],
      ],
    }));
    const api = client(server.url);
    expect((await api.get('/a')).status).toBe(200);
    expect((await api.get('/b')).status).toBe(200);
    expect(prototypeSnapshot()).toEqual(before);
    expect(({} as Record<string, unknown>).remaining).toBeUndefined();
    // Another client, another host: nothing leaked into option parsing or other pipelines.
    const other = client('http://127.0.0.1:9');
    expect(other).toBeInstanceOf(LimitedClient);
    const policies = api.stats().hosts[server.url]?.policies ?? [];
    expect(policies.map((p) => [p.name, p.remaining])).toEqual([['__proto__', 5]]);
  });

  it.each(PROTOTYPE_NAMES)(
    'a spent policy named %s holds the host like any other',
    async (name) => {
      const before = prototypeSnapshot();
      server = await scriptedServer(() => ({
        status: 200,
        headers: [
          ['RateLimit-Policy', `"${name}";q=10;w=100`],
          ['RateLimit', `"${name}";r=0;t=100`],
        ],
      }));
      const api = client(server.url);
      expect((await api.get('/a')).status).toBe(200);
      // Spent for 100 s, past maxRetryAfterMs (60 s): refused at once, nothing sent.
      const refused = await api.get('/b').catch((error: unknown) => error);
      expect(isRateLimitError(refused)).toBe(true);
      expect((refused as { policy?: string }).policy).toBe(name);
      expect(server.received).toBe(1);
      expect(prototypeSnapshot()).toEqual(before);
    },
  );
});

describe('a server that names a fresh policy on every answer', () => {
  it('keeps a bounded number of policies per host, the most restrictive', async () => {
    let n = 0;
    server = await scriptedServer(() => {
      // 50 fresh names per answer, all roomy, and one tight policy that stays.
      const names = Array.from({ length: 50 }, () => `p${n++}`);
      const policy = [...names.map((x) => `"${x}";q=1000;w=60`), '"tight";q=100;w=60'];
      const left = [...names.map((x) => `"${x}";r=999;t=30`), '"tight";r=90;t=30'];
      return {
        status: 200,
        headers: [
          ['RateLimit-Policy', policy.join(', ')],
          ['RateLimit', left.join(', ')],
        ],
      };
    });
    const api = client(server.url);
    for (let i = 0; i < 40; i++) expect((await api.get(`/x${i}`)).status).toBe(200);
    const policies = api.stats().hosts[server.url]?.policies ?? [];
    expect(policies.length).toBeLessThanOrEqual(8);
    expect(policies.map((p) => p.name)).toContain('tight');
  });
});

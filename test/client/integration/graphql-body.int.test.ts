/**
 * Issue 26 §7, limits reported in the body: the client against test/peers/provider-shapes.ts's
 * Shopify GraphQL simulation (a leaky bucket of cost points, reported only in `extensions.cost`,
 * `THROTTLED` answered with HTTP 200), over real HTTP on loopback, on one fake clock shared by the
 * client and the server (`fake-time.ts`), so the bounds on time hold on a loaded machine.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { wrapFetch } from '../../../src/index.js';
import {
  isThrottled,
  leastMs,
  SHOPIFY,
  SHOPIFY_QUERY_COST,
  type ShapeServer,
  shapeScenarios,
  startShopify,
} from '../../peers/provider-shapes.js';
import { countingFetch, FakeClock, runOnFakeTime } from './fake-time.js';

const servers: ShapeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const QUERY = JSON.stringify({ query: '{ shop { name } }' });
const PATH = '/admin/api/2025-01/graphql.json';

/** `calls` queries, `concurrency` at a time, through `send`; each answer's status and body. */
async function queries(
  send: typeof fetch,
  url: string,
  calls: number,
  concurrency: number,
  init: RequestInit = {},
): Promise<{ status: number; body: string }[]> {
  const out: { status: number; body: string }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < calls) {
        const r = await send(`${url}${PATH}`, {
          method: 'POST',
          body: QUERY,
          headers: { 'content-type': 'application/json' },
          ...init,
        });
        out.push({ status: r.status, body: await r.text() });
      }
    }),
  );
  return out;
}

async function shopify(clock: FakeClock) {
  const server = await startShopify({ now: () => clock.now() });
  servers.push(server);
  return server;
}

describe('GraphQL limits in the body (Shopify simulation, fake time)', () => {
  it("the issue's workload: every call a real answer, refusals bounded, near the least time", async () => {
    const scenario = shapeScenarios().find((s) => s.id === 'shopify');
    const least = leastMs(scenario as NonNullable<typeof scenario>);
    const clock = new FakeClock();
    const wire = countingFetch();
    const server = await shopify(clock);
    const send = wrapFetch(wire.fetch, { clock });
    const running = queries(send, server.url, 30, 4);
    const tookMs = await runOnFakeTime(clock, wire, running, { maxMs: 20 * least });
    const answers = await running;
    await send.close();
    expect(answers).toHaveLength(30);
    expect(answers.filter((a) => a.status !== 200 || isThrottled(a.body))).toEqual([]);
    expect(server.refusals()).toBeLessThanOrEqual(2);
    expect(tookMs).toBeGreaterThanOrEqual(least);
    expect(tookMs).toBeLessThanOrEqual(least * 1.2);
  }, 60_000);
});

/**
 * Amplification benchmark (issue 5): an open-loop stream of GETs (one logical request every
 * `1000 / rate` ms) against the in-repo mock server, which answers 503 for `--outage` ms after
 * `--before` ms. For LimitedClient (defaults: retry budget, circuit breaker) and for a plain
 * p-retry loop over fetch with the same retry count and backoff, in one run, it prints:
 *
 * - attempts per logical request, for the requests started during the outage;
 * - recovery: from the end of the outage to the first success of a request started after it;
 * - drain: from the end of the outage until every request started during it has settled.
 *
 *   npm run bench:amplification -- [--rate 50] [--before 1000] [--outage 3000] [--after 3000]
 *
 * Loopback only, bounded in requests and time; it stops by itself.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pRetry from 'p-retry';
import { LimitedClient } from '../../src/index.js';
import { createMockServer } from '../../src/server/index.js';
import { markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '50' },
    before: { type: 'string', default: '1000' },
    outage: { type: 'string', default: '3000' },
    after: { type: 'string', default: '3000' },
    json: { type: 'string' },
  },
});
const RATE = Number(values.rate);
const BEFORE = Number(values.before);
const OUTAGE = Number(values.outage);
const AFTER = Number(values.after);
const RETRIES = 3;
const BASE_MS = 100;

interface Logical {
  startedAt: number;
  settledAt?: number;
  ok?: boolean;
  attempts: number;
}

type Send = (url: string, count: () => void) => Promise<boolean>;

function countingFetch(counter: Map<string, number>): typeof fetch {
  return (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    counter.set(url, (counter.get(url) ?? 0) + 1);
    return fetch(input, init);
  };
}

async function scenario(
  name: string,
  make: (f: typeof fetch) => { send: Send; close(): Promise<void> },
) {
  const server = await createMockServer({
    routes: [{ path: '/data/:id', faults: { unavailable: { afterMs: BEFORE, forMs: OUTAGE } } }],
  });
  const counter = new Map<string, number>();
  const contender = make(countingFetch(counter));
  const t0 = performance.now();
  const logical: Logical[] = [];
  const pending: Promise<void>[] = [];
  const total = BEFORE + OUTAGE + AFTER;
  for (let i = 0; performance.now() - t0 < total; i++) {
    const url = `${server.url}/data/${i}`;
    const entry: Logical = { startedAt: performance.now() - t0, attempts: 0 };
    logical.push(entry);
    pending.push(
      contender
        .send(url, () => {})
        .then(
          (ok) => {
            entry.ok = ok;
            entry.settledAt = performance.now() - t0;
          },
          () => {
            entry.ok = false;
            entry.settledAt = performance.now() - t0;
          },
        ),
    );
    const due = (i + 1) * (1000 / RATE);
    const wait = due - (performance.now() - t0);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await Promise.all(pending);
  logical.forEach((entry, i) => {
    entry.attempts = counter.get(`${server.url}/data/${i}`) ?? 0;
  });
  await contender.close();
  await server.close();

  const outageEnd = BEFORE + OUTAGE;
  const during = logical.filter((l) => l.startedAt >= BEFORE && l.startedAt < outageEnd);
  const after = logical.filter((l) => l.startedAt >= outageEnd);
  const firstOk = after.find((l) => l.ok)?.settledAt;
  const drain = Math.max(...during.map((l) => l.settledAt ?? 0));
  const attempts = during.reduce((s, l) => s + l.attempts, 0);
  const sent = logical.reduce((s, l) => s + l.attempts, 0);
  return {
    client: name,
    logicalDuringOutage: during.length,
    attemptsPerRequestDuringOutage: Number((attempts / during.length).toFixed(3)),
    sentToServer: sent,
    recoveryMs: firstOk === undefined ? null : Math.round(firstOk - outageEnd),
    drainMs: Math.round(drain - outageEnd),
    failedAfterOutage: after.filter((l) => !l.ok).length,
  };
}

const results = [];
results.push(
  await scenario('LimitedClient (defaults)', (f) => {
    const client = new LimitedClient('http://127.0.0.1', { fetch: f });
    return {
      send: async (url) => {
        const r = await client.request(url);
        await r.arrayBuffer();
        return r.ok;
      },
      close: () => client.close(),
    };
  }),
);
results.push(
  await scenario('LimitedClient (retry budget only, no breaker)', (f) => {
    const client = new LimitedClient('http://127.0.0.1', { fetch: f, circuitBreaker: false });
    return {
      send: async (url) => {
        const r = await client.request(url);
        await r.arrayBuffer();
        return r.ok;
      },
      close: () => client.close(),
    };
  }),
);
results.push(
  await scenario(`p-retry over fetch (${RETRIES} retries, ${BASE_MS} ms x2, randomized)`, (f) => ({
    send: async (url) => {
      const r = await pRetry(
        async () => {
          const res = await f(url);
          if (res.status >= 500) {
            await res.arrayBuffer();
            throw new Error(`status ${res.status}`);
          }
          return res;
        },
        { retries: RETRIES, minTimeout: BASE_MS, factor: 2, randomize: true },
      ).catch(() => undefined);
      if (!r) return false;
      await r.arrayBuffer();
      return r.ok;
    },
    close: async () => {},
  })),
);

console.log(
  `amplification: ${RATE} requests/s, 503s from ${BEFORE} ms for ${OUTAGE} ms, then ${AFTER} ms healthy`,
);
console.log(
  markdownTable(
    [
      'client',
      'requests during outage',
      'attempts / request during outage',
      'attempts sent in all',
      'recovery ms',
      'drain ms',
      'failed after outage',
    ],
    results.map((r) => [
      r.client,
      r.logicalDuringOutage,
      r.attemptsPerRequestDuringOutage,
      r.sentToServer,
      r.recoveryMs ?? '-',
      r.drainMs,
      r.failedAfterOutage,
    ]),
  ),
);
if (values.json) {
  writeFileSync(
    values.json,
    `${JSON.stringify({ RATE, BEFORE, OUTAGE, AFTER, results }, null, 2)}\n`,
  );
}

/**
 * Per-host options: one client, two hosts, each with its own concurrency, retry budget and
 * breaker. `hosts` keys are exact hosts, host:port, or `*.domain` patterns.
 *
 *   npx tsx examples/per-host.ts
 */
import { LimitedClient } from 'limited-client';
import { createMockServer } from 'limited-client/server';

const fast = await createMockServer({ routes: [{ path: '*', faults: { latencyMs: 20 } }] });
const fragile = await createMockServer({
  routes: [{ path: '*', faults: { unavailable: { probability: 0.5 } } }],
});

const client = new LimitedClient(fast.url, {
  hosts: {
    [`127.0.0.1:${fast.port}`]: { concurrency: 16 },
    [`127.0.0.1:${fragile.port}`]: {
      concurrency: 2,
      retry: { retries: 5, baseDelayMs: 20 },
      retryBudget: { ratio: 0.5, minPerSecond: 5 },
      // Half the answers fail here by design: open only past 80 % failures, or 10 in a row.
      circuitBreaker: { failureRatio: 0.8, consecutiveFailures: 10 },
    },
  },
});

const settled = await Promise.allSettled([
  ...Array.from({ length: 40 }, (_, i) => client.get(`/fast/${i}`)),
  ...Array.from({ length: 20 }, (_, i) => client.request(`${fragile.url}/fragile/${i}`)),
]);
// A call resolves to its last response whatever the status, and rejects only where the client
// refused to send (an open circuit, a spent budget) or fetch failed.
const outcomes = new Map<string, number>();
for (const r of settled) {
  const what = r.status === 'fulfilled' ? String(r.value.status) : (r.reason as Error).name;
  outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
}
console.log('outcomes:', Object.fromEntries(outcomes));

for (const [origin, s] of Object.entries(client.stats().hosts)) {
  console.log(origin, {
    requests: s.requests,
    attempts: s.attempts,
    retries: s.retries,
    budgetExhausted: s.budgetExhausted,
    circuit: s.circuit,
  });
}
await client.close();
await Promise.all([fast.close(), fragile.close()]);

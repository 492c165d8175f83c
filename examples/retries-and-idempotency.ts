/**
 * Retries that cannot charge a card twice, and cannot turn an outage into a storm.
 *
 *   npx tsx examples/retries-and-idempotency.ts
 *
 * 1. A POST /payments to a host that honours Idempotency-Key (declared here, as it would be for
 *    your own API; Stripe is on the client's list, and a host that echoes the key back is learned),
 *    whose first attempt runs its side effect and then loses the connection: the client retries
 *    with the same key, the server replays the stored response, and the payment runs exactly once.
 * 2. The same POST to a host that ignores the key (as most APIs do), which answers a plain 503
 *    after its side effect ran: the write is not sent again, the caller gets the 503, and the
 *    side effect ran once. The key was still attached (harmless where it is ignored).
 * 3. A host that answers 503 to everything: the retry budget and the circuit breaker keep the
 *    attempts close to one per call, and calls fail fast while the circuit is open.
 */
import { isCircuitOpenError, LimitedClient } from 'limited-client';
import { createMockServer } from 'limited-client/server';

const payments = await createMockServer({
  routes: [
    // The first attempt of each key runs the side effect, then the connection is reset.
    { method: 'POST', path: '/payments', faults: { reset: { when: 'after-handler', times: 1 } } },
  ],
});
const ignoring = await createMockServer({
  routes: [
    {
      method: 'POST',
      path: '/payments',
      idempotency: false, // the key is ignored, and never echoed
      faults: { serverError: { status: 503, when: 'after-handler', times: 1 } },
    },
  ],
});
const client = new LimitedClient(payments.url, {
  // host:port, as in options.hosts: this one deduplicates by Idempotency-Key.
  hosts: { [new URL(payments.url).host]: { idempotency: { honoured: true } } },
});
client.on('retry', (e) =>
  console.log(
    `  retry #${e.attempt - 1} in ${e.delayMs} ms (${e.error ? 'connection lost' : e.status})`,
  ),
);

const paid = await client.post('payments', { amount: 4200, currency: 'EUR' });
console.log(
  `1. POST /payments -> ${paid.status}, replayed: ${paid.headers.get('idempotent-replayed') ?? 'no'}`,
);
console.log(`   side effects run on the server: ${payments.stats().sideEffects} (exactly once)`);

const answer = await client.request(`${ignoring.url}/payments`, {
  method: 'POST',
  body: JSON.stringify({ amount: 4200, currency: 'EUR' }),
});
console.log(
  `2. to a host that ignores the key: ${answer.status}, not retried; side effects: ${ignoring.stats().sideEffects}`,
);

const down = await createMockServer({ routes: [{ path: '*', faults: { unavailable: {} } }] });
let refused = 0;
for (let i = 0; i < 40; i++) {
  try {
    const r = await client.request(`${down.url}/status`);
    await r.arrayBuffer();
  } catch (error) {
    if (isCircuitOpenError(error)) refused++;
  }
}
const host = client.stats().hosts[down.url];
console.log(
  `3. 40 calls to a host that is down: ${host?.attempts} attempts reached it, ${host?.retries} retries, ` +
    `${host?.budgetExhausted} refused by the budget, ${refused} failed fast on the open circuit`,
);

await client.close();
await Promise.all([payments.close(), ignoring.close(), down.close()]);

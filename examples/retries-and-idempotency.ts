/**
 * Retries that cannot charge a card twice, and cannot turn an outage into a storm.
 *
 *   npx tsx examples/retries-and-idempotency.ts
 *
 * 1. A POST /payments whose first attempt runs its side effect and then loses the connection: the
 *    client retries with the same Idempotency-Key, the server replays the stored response, and the
 *    payment runs exactly once.
 * 2. The same POST without a key (idempotencyKey: false) is not retried after the reset: it may
 *    have been processed, so the caller gets the error.
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
const client = new LimitedClient(payments.url);
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

const unsafe = await createMockServer({
  routes: [
    { method: 'POST', path: '/payments', faults: { reset: { when: 'after-handler', times: 1 } } },
  ],
});
try {
  await client.request(`${unsafe.url}/payments`, {
    method: 'POST',
    body: '{}',
    idempotencyKey: false,
  });
} catch (error) {
  console.log(
    `2. without a key: ${(error as Error).message}; side effects: ${unsafe.stats().sideEffects}, not retried`,
  );
}

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
await Promise.all([payments.close(), unsafe.close(), down.close()]);

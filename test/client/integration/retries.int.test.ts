/**
 * Issue 5 over real HTTP, against the in-repo mock server: amplification during an outage stays
 * within the budget, a POST whose side effect ran before the connection dropped runs once and
 * finally succeeds on a host that honours keys, a POST without a key is not retried, and the
 * breaker opens during an outage and closes within one cool-down after it. What a write does on
 * a host that ignores keys: writes.int.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { isTransientNetworkError } from '../../../src/client/call/network-errors.js';
import { type CircuitState, LimitedClient } from '../../../src/index.js';
import { countingFetch, FakeClock, runOnFakeTime, serverClock, until } from './fake-time.js';
import { closeAll, pause, start } from './server.js';

afterAll(closeAll);

describe.concurrent('retries against the mock server', () => {
  it('during a full outage, attempts per request stay within 1 + ratio, plus the floor', async () => {
    const server = await start({
      routes: [{ path: '/data/:id', faults: { unavailable: { afterMs: 0 } } }],
    });
    const client = new LimitedClient(server.url, { circuitBreaker: false });
    const calls: Promise<Response>[] = [];
    for (let i = 0; i < 200; i++) {
      calls.push(client.get(`/data/${i}`));
      await pause(10);
    }
    const responses = await Promise.all(calls);
    expect(responses.every((r) => r.status === 503)).toBe(true);
    const { requests, attempts, budgetExhausted } = client.stats().totals;
    const route = server.stats().routes['* /data/:id'];
    expect(route?.unavailable).toBe(attempts); // what the server saw is what the client sent
    // ratio 0.1 of the requests, plus 1 per second over the 10 s window.
    const bound = requests * 1.1 + 10;
    expect(attempts).toBeLessThanOrEqual(bound);
    expect(attempts / requests).toBeLessThanOrEqual(1.1 + 10 / requests);
    expect(budgetExhausted).toBeGreaterThan(0);
    await client.close();
  });

  it('a POST whose side effect ran before the connection dropped runs once and succeeds, on a host that honours keys', async () => {
    const server = await start({
      routes: [
        {
          method: 'POST',
          path: '/payments',
          faults: { reset: { when: 'after-handler', times: 1 } },
        },
      ],
    });
    const client = new LimitedClient(server.url, { idempotency: { honoured: true } });
    const errors: unknown[] = [];
    client.on('retry', (e) => errors.push(e.error));
    const response = await client.post('/payments', { amount: 4200, currency: 'EUR' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { execution: number };
    expect(body.execution).toBe(1);
    const route = server.stats().routes['POST /payments'];
    expect(route).toMatchObject({ sideEffects: 1, resets: 1, replays: 1 });
    expect(errors).toHaveLength(1);
    expect(isTransientNetworkError(errors[0])).toBe(true);
    await client.close();
  });

  it('a POST whose attempt timed out while a server that honours keys still runs it gets the stored answer, not a 409', async () => {
    // Fake time shared by the server (the handler's 600 ms) and the client (its 200 ms attempt
    // timeout, its backoff), over real HTTP: a loaded machine cannot change which comes first.
    const clock = new FakeClock();
    const held = serverClock(clock);
    const server = await start({
      clock: held,
      routes: [{ method: 'POST', path: '/pay', faults: { latencyMs: 600 } }],
    });
    const wire = countingFetch();
    // Pinned chance: retries after 50, 100, 200, 200... ms of backoff.
    const client = new LimitedClient(server.url, {
      clock: {
        now: () => clock.now(),
        sleep: (ms, signal) => clock.sleep(ms, signal),
        random: () => 0.5,
      },
      fetch: wire.fetch,
      coldStart: false,
      attemptTimeoutMs: 200,
      retry: { retries: 8, maxDelayMs: 400 },
      idempotency: { honoured: true },
    });
    const statuses: (number | undefined)[] = [];
    client.on('retry', (e) => statuses.push(e.status));
    const call = client.post('/pay', { amount: 100 });
    // The first attempt is held by the handler; it times out at 200 ms, the handler goes on.
    await until(() => held.sleeping === 1, 'the handler to start');
    await clock.advance(200);
    await until(() => wire.inFlight === 0, 'the timed-out attempt to leave the wire');
    // From here no request is held: a retry gets a 409 while the handler runs, then its answer.
    await runOnFakeTime(clock, wire, call);
    const response = await call;
    expect(response.status).toBe(200);
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    expect(statuses).toContain(409);
    expect(server.stats().routes['POST /pay']).toMatchObject({ sideEffects: 1 });
    await client.close();
  });

  it('a POST without a key is not retried after a reset', async () => {
    const server = await start({
      routes: [
        {
          method: 'POST',
          path: '/payments',
          faults: { reset: { when: 'after-handler', times: 1 } },
        },
      ],
    });
    const client = new LimitedClient(server.url);
    const error = await client
      .post('/payments', { amount: 1 }, { idempotencyKey: false })
      .catch((e) => e);
    expect(isTransientNetworkError(error)).toBe(true);
    expect(server.stats().routes['POST /payments']).toMatchObject({ sideEffects: 1, resets: 1 });
    expect(client.stats().totals.attempts).toBe(1);
    await client.close();
  });

  it("a stream body goes without the caller's duplex, and caller mistakes do not open the breaker", async () => {
    const server = await start({ routes: [{ path: '*' }] });
    const client = new LimitedClient(server.url, { coldStart: false });
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('chunk'));
        c.close();
      },
    });
    expect((await client.put('/upload', stream)).status).toBe(200);
    // fetch refuses these before sending: the host did nothing wrong.
    for (let i = 0; i < 8; i++) {
      await expect(client.get('/x', { body: 'not for a GET' })).rejects.toThrow(TypeError);
    }
    expect(client.stats().hosts[server.url]?.circuit).toBe('closed');
    expect((await client.get('/ok')).status).toBe(200);
    expect(server.stats().admitted).toBe(2);
    await client.close();
  });

  it('the breaker opens during an outage and closes within one cool-down after it', async () => {
    const outageMs = 1500;
    const coolDownMs = 1000;
    // Fake time shared by the server (its outage) and the client (its breaker), over real HTTP:
    // time moves only while nothing is on the wire, so the moments below are exact.
    const clock = new FakeClock();
    const wire = countingFetch();
    const server = await start({
      clock,
      routes: [{ path: '/x', faults: { unavailable: { afterMs: 0, forMs: outageMs } } }],
    });
    const started = clock.now();
    const client = new LimitedClient(server.url, {
      clock,
      fetch: wire.fetch,
      retry: false,
      // A fixed cool-down (no doubling after failed probes), so "within one cool-down" is exact;
      // the doubling is the unit tests' (test/client/circuit-breaker.test.ts).
      circuitBreaker: { consecutiveFailures: 5, coolDownMs, maxCoolDownMs: coolDownMs },
    });
    const transitions: { to: CircuitState; at: number }[] = [];
    client.on('circuit-state', (e) => transitions.push({ to: e.to, at: clock.now() - started }));
    let refused = 0;
    let sent = 0;
    const calls = (async () => {
      while (clock.now() - started < outageMs + coolDownMs + 1000) {
        try {
          sent++;
          const r = await client.get('/x');
          await r.arrayBuffer();
        } catch (error) {
          if ((error as { code?: string }).code === 'ERR_CIRCUIT_OPEN') refused++;
          else throw error;
        }
        await clock.sleep(20);
      }
    })();
    await runOnFakeTime(clock, wire, calls);
    await calls;
    const opened = transitions.find((t) => t.to === 'open');
    expect(opened).toBeDefined();
    // After the fifth failure: five calls 20 ms apart, all in the outage.
    expect(opened?.at).toBeLessThan(5 * 20 + 20);
    expect(refused).toBeGreaterThan(0);
    const last = transitions.at(-1);
    expect(last?.to).toBe('closed');
    // Closed no later than one cool-down after the outage ended (plus the next call, 20 ms on).
    expect(last?.at).toBeGreaterThanOrEqual(outageMs);
    expect(last?.at).toBeLessThanOrEqual(outageMs + coolDownMs + 20);
    // The server answered the calls that opened the breaker with its outage.
    expect(server.stats().routes['* /x']?.unavailable).toBeGreaterThanOrEqual(5);
    expect(sent).toBeGreaterThan(refused);
    await client.close();
  });
});

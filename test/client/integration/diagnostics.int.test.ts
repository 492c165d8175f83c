/**
 * Issue 27, item 3: the client's life-cycle on Node's `diagnostics_channel`, over loopback against
 * the mock server, on fake time where a limit holds calls. A subscriber gets, on the documented
 * channel, a copy of each event the client's listeners get, plus the call's opaque identity; it
 * needs no option and no listener; nothing of the request beyond the event's fields reaches it.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type ClientEvents,
  LimitedClient,
  MemoryStateStore,
  type StateStore,
  wrapFetch,
} from '../../../src/index.js';
import { limited } from '../../../src/undici/index.js';
import { type CountingFetch, countingFetch, FakeClock, runOnFakeTime } from './fake-time.js';
import { closeAll, start } from './server.js';

afterAll(closeAll);

/** The channels as docs/observability.md lists them, written out (not read from the source). */
const CHANNELS: Record<keyof ClientEvents, string> = {
  queued: 'limited-client:call:queued',
  held: 'limited-client:call:held',
  sent: 'limited-client:call:sent',
  answered: 'limited-client:call:answered',
  'rate-limited': 'limited-client:call:rateLimited',
  retry: 'limited-client:call:retry',
  'budget-exhausted': 'limited-client:call:budgetExhausted',
  'circuit-open': 'limited-client:call:circuitOpen',
  'store-error': 'limited-client:call:storeError',
  'give-up': 'limited-client:call:giveUp',
  done: 'limited-client:call:done',
  'circuit-state': 'limited-client:host:circuitState',
};
const EVENTS = Object.keys(CHANNELS) as (keyof ClientEvents)[];

interface Message {
  channel: string;
  message: Record<string, unknown>;
}

/** Subscribes to every channel; keeps the messages about `origin()` (read when one arrives). */
function subscribeAll(origin: () => string) {
  const messages: Message[] = [];
  const handler = (message: unknown, name: string | symbol) => {
    const m = message as Record<string, unknown>;
    if (m.origin === origin()) messages.push({ channel: String(name), message: m });
  };
  for (const name of Object.values(CHANNELS)) subscribe(name, handler);
  return {
    messages,
    stop: () => {
      for (const name of Object.values(CHANNELS)) unsubscribe(name, handler);
    },
  };
}

/** Listens to every event of `client`, as the channel and the payload a subscriber should get. */
function listenAll(client: LimitedClient, events: Message[] = []) {
  for (const name of EVENTS)
    client.on(name, (event) =>
      events.push({
        channel: CHANNELS[name],
        message: event as unknown as Record<string, unknown>,
      }),
    );
  return events;
}

/** The message without its `call` identity. */
function withoutCall({ channel, message }: Message): Message {
  const { call: _call, ...rest } = message;
  return { channel, message: rest };
}

/** The channels each call's messages went to, in order, by the call's identity. */
function byCall(messages: Message[]): Map<unknown, string[]> {
  const calls = new Map<unknown, string[]>();
  for (const { channel, message } of messages) {
    if (!('call' in message)) continue;
    const list = calls.get(message.call) ?? [];
    list.push(channel.slice(channel.lastIndexOf(':') + 1));
    calls.set(message.call, list);
  }
  return calls;
}

/** 30 calls at once to `/down`, on fake time; their bodies read. */
async function outage(client: LimitedClient, clock: FakeClock, wire: CountingFetch) {
  const calls = Promise.allSettled(Array.from({ length: 30 }, () => client.get('/down')));
  await runOnFakeTime(clock, wire, calls);
  for (const r of await calls) if (r.status === 'fulfilled') await r.value.arrayBuffer();
}

describe('diagnostics_channel', () => {
  it('a limited host: queued, held, sent, answered, done, each a copy of its event', async () => {
    const clock = new FakeClock();
    const server = await start({
      clock,
      routes: [
        {
          path: '/items/:id',
          limits: [{ algorithm: 'fixed-window', limit: 3, windowMs: 1000, name: 'w' }],
        },
      ],
    });
    const sub = subscribeAll(() => server.url);
    const wire = countingFetch();
    const client = new LimitedClient(server.url, { clock, fetch: wire.fetch });
    const events = listenAll(client);
    const calls = Promise.all(Array.from({ length: 8 }, (_, i) => client.get(`/items/${i}`)));
    await runOnFakeTime(clock, wire, calls);
    const responses = await calls;
    await Promise.all(responses.map((r) => r.arrayBuffer()));
    sub.stop();
    await client.close();

    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
    // Same order, same payloads: the subscriber sees what the listeners see.
    expect(sub.messages.map(withoutCall)).toEqual(events);
    // Copies: a subscriber cannot change what a listener got.
    for (const [i, { message }] of sub.messages.entries()) expect(message).not.toBe(events[i]);
    const seen = new Set(sub.messages.map((m) => m.channel));
    for (const name of ['queued', 'held', 'sent', 'answered', 'done'] as const)
      expect(seen).toContain(CHANNELS[name]);
    // One identity per call, in every message of it; each call is sent, answered and done once.
    const perCall = byCall(sub.messages);
    expect(perCall.size).toBe(8);
    for (const [identity, channels] of perCall) {
      expect(Object.isFrozen(identity)).toBe(true);
      expect(channels.filter((c) => c === 'sent')).toHaveLength(1);
      expect(channels.at(-2)).toBe('answered');
      expect(channels.at(-1)).toBe('done');
      expect(channels.indexOf('sent')).toBeGreaterThan(channels.lastIndexOf('held'));
    }
    const held = sub.messages.filter((m) => m.channel === CHANNELS.held).map((m) => m.message);
    expect(held.some((m) => m.reason === 'learned-limit' && m.policy === 'w')).toBe(true);
  });

  it('needs no listener: a client nobody listens to publishes to subscribers, with waitReason', async () => {
    const clock = new FakeClock();
    const server = await start({
      clock,
      routes: [
        {
          path: '/x',
          limits: [{ algorithm: 'fixed-window', limit: 2, windowMs: 1000, name: 'w' }],
        },
      ],
    });
    const sub = subscribeAll(() => server.url);
    const wire = countingFetch();
    const client = new LimitedClient(server.url, { clock, fetch: wire.fetch });
    const calls = Promise.all(Array.from({ length: 6 }, () => client.get('/x')));
    await runOnFakeTime(clock, wire, calls);
    await Promise.all((await calls).map((r) => r.arrayBuffer()));
    sub.stop();
    await client.close();

    const sent = sub.messages.filter((m) => m.channel === CHANNELS.sent).map((m) => m.message);
    expect(sent).toHaveLength(6);
    // The wait of a held call is known to its `sent` message, as to the event's listeners.
    expect(sent.filter((m) => m.waitReason === 'learned-limit').length).toBeGreaterThan(0);
    const done = sub.messages.filter((m) => m.channel === CHANNELS.done).map((m) => m.message);
    expect(done.map((m) => m.status)).toEqual(Array(6).fill(200));
    expect(byCall(sub.messages).size).toBe(6);
  });

  it('a 429, then an outage: rateLimited, retry, budgetExhausted, giveUp, circuitOpen and the circuit state', async () => {
    const clock = new FakeClock();
    const server = await start({
      clock,
      routes: [
        {
          path: '/limited',
          headers: 'none',
          limits: [{ algorithm: 'fixed-window', limit: 1, windowMs: 2000 }],
        },
        { path: '/down', faults: { unavailable: { afterMs: 0 } } },
      ],
    });
    const sub = subscribeAll(() => server.url);
    const wire = countingFetch();
    // Without the breaker, a small budget is spent in the outage; with it, the circuit opens.
    const lenient = new LimitedClient(server.url, {
      clock,
      fetch: wire.fetch,
      circuitBreaker: false,
      retryBudget: { ratio: 0.05, minPerSecond: 0 },
    });
    const events = listenAll(lenient);
    const limited = Promise.all([lenient.get('/limited'), lenient.get('/limited')]);
    await runOnFakeTime(clock, wire, limited);
    await Promise.all((await limited).map((r) => r.arrayBuffer()));
    await outage(lenient, clock, wire);
    await lenient.close();
    const strict = new LimitedClient(server.url, { clock, fetch: wire.fetch });
    listenAll(strict, events);
    await outage(strict, clock, wire);
    sub.stop();
    await strict.close();

    expect(sub.messages.map(withoutCall)).toEqual(events);
    const seen = new Set(sub.messages.map((m) => m.channel));
    for (const name of [
      'rate-limited',
      'retry',
      'budget-exhausted',
      'give-up',
      'circuit-open',
      'circuit-state',
    ] as const)
      expect(seen).toContain(CHANNELS[name]);
    const states = sub.messages.filter((m) => m.channel === CHANNELS['circuit-state']);
    // The host's channel: no call, no method, no URL.
    for (const { message } of states)
      expect(Object.keys(message).sort()).toEqual(['from', 'origin', 'to']);
    expect(states[0]?.message).toMatchObject({ from: 'closed', to: 'open' });
  });

  it('a store that fails: storeError, and the call still done', async () => {
    const server = await start({ routes: [{ path: '/ok' }] });
    const memory = new MemoryStateStore();
    let updates = 0;
    // Every update after the first few fails, as a store that went down during the call would.
    const store: StateStore = {
      update(key, transaction, ttlMs) {
        updates++;
        if (updates > 1) return Promise.reject(new Error('store down'));
        return Promise.resolve(memory.update(key, transaction, ttlMs));
      },
      delete: (key) => memory.delete(key),
    };
    const sub = subscribeAll(() => server.url);
    const client = new LimitedClient(server.url, { store });
    const response = await client.get('/ok');
    await response.arrayBuffer();
    await client.close();
    sub.stop();

    const failed = sub.messages.filter((m) => m.channel === CHANNELS['store-error']);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]?.message).toMatchObject({ operation: 'settle', method: 'GET' });
    expect(sub.messages.at(-1)?.message).toMatchObject({ status: 200 });
  });

  it('carries no header, key, token or body: only the fields of the event, and the call', async () => {
    // On fake time: the window must not turn between the two POSTs, whatever the machine's load.
    const clock = new FakeClock();
    const server = await start({
      clock,
      routes: [
        {
          method: 'POST',
          path: '/pay',
          headers: 'none',
          limits: [{ algorithm: 'fixed-window', limit: 1, windowMs: 200 }],
        },
      ],
    });
    const sub = subscribeAll(() => server.url);
    const wire = countingFetch();
    const client = new LimitedClient(server.url, {
      clock,
      fetch: wire.fetch,
      maxRetryAfterMs: 60_000,
    });
    const headers = { authorization: 'Bearer tok-SECRET-1', 'idempotency-key': 'key-SECRET-2' };
    const posts = Promise.all([
      client.post('/pay', { card: 'body-SECRET-3' }, { headers }),
      client.post('/pay', { card: 'body-SECRET-3' }, { headers }),
    ]);
    await runOnFakeTime(clock, wire, posts);
    const responses = await posts;
    await Promise.all(responses.map((r) => r.arrayBuffer()));
    await client.close();
    sub.stop();

    expect(sub.messages.some((m) => m.channel === CHANNELS['rate-limited'])).toBe(true);
    const text = JSON.stringify(sub.messages);
    expect(text).not.toMatch(/SECRET/);
    const allowed: Record<string, string[]> = {
      base: ['origin', 'partition', 'method', 'url', 'call'],
      'limited-client:call:queued': ['queueLength'],
      'limited-client:call:held': ['reason', 'waitMs', 'policy'],
      'limited-client:call:sent': ['attempt', 'waitedMs', 'waitReason'],
      'limited-client:call:answered': ['attempt', 'status', 'error', 'durationMs'],
      'limited-client:call:rateLimited': ['status', 'retryAfterMs', 'policy'],
      'limited-client:call:retry': ['attempt', 'delayMs', 'delaySource', 'status', 'error'],
      'limited-client:call:giveUp': ['reason', 'attempts', 'status', 'error'],
      'limited-client:call:done': ['status', 'error', 'durationMs'],
    };
    for (const { channel, message } of sub.messages) {
      const fields = [...(allowed.base ?? []), ...(allowed[channel] ?? [])];
      for (const key of Object.keys(message)) expect(fields, `${channel}: ${key}`).toContain(key);
      expect(message.url).toBe(`${server.url}/pay`);
    }
  });

  it('wrapFetch and the undici interceptor publish too, each call with its own identity', async () => {
    const server = await start({ routes: [{ path: '/ok' }] });
    const sub = subscribeAll(() => server.url);
    const wrapped = wrapFetch();
    await (await wrapped(`${server.url}/ok`)).arrayBuffer();
    await wrapped.close();
    const interceptor = limited();
    const agent = new Agent().compose(interceptor);
    const answer = await request(`${server.url}/ok`, { dispatcher: agent });
    await answer.body.text();
    await interceptor.close();
    await agent.close();
    sub.stop();

    const done = sub.messages.filter((m) => m.channel === CHANNELS.done);
    expect(done.map((m) => m.message.status)).toEqual([200, 200]);
    expect(byCall(sub.messages).size).toBe(2);
  });

  it('publishes nothing once unsubscribed, and the client keeps working', async () => {
    const server = await start({ routes: [{ path: '/ok' }] });
    const sub = subscribeAll(() => server.url);
    const client = new LimitedClient(server.url);
    await (await client.get('/ok')).arrayBuffer();
    const before = sub.messages.length;
    expect(before).toBeGreaterThan(0);
    sub.stop();
    const late: unknown[] = [];
    const spy = (message: unknown) => late.push(message);
    // A subscriber of another channel does not make these publish.
    subscribe('limited-client:call:other', spy);
    await (await client.get('/ok')).arrayBuffer();
    unsubscribe('limited-client:call:other', spy);
    await client.close();
    expect(sub.messages.length).toBe(before);
    expect(late).toEqual([]);
  });
});

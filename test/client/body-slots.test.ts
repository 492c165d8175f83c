/**
 * A call holds its concurrency slot until its response's body ends (read to the end, cancelled or
 * failed), not until its headers arrive; a body nobody reads gives it back after the grace
 * (`BODY_GRACE_MS`). On fake time, through `wrapFetch` and `LimitedClient` with a scripted fetch
 * whose bodies the test controls; the same over real HTTP is in
 * `test/hostile/client-body-slots.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import { BODY_GRACE_MS, OpenBodies } from '../../src/client/call/open-bodies.js';
import { LimitedClient, wrapFetch } from '../../src/index.js';
import { FakeClock, flush, respond, scriptedFetch } from './helpers.js';

const URL_ = 'https://api.example.com';

/** A body whose chunks the test pushes, and which it ends. */
function controlledBody() {
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  const c = () => controller as ReadableStreamDefaultController<Uint8Array>;
  return {
    stream,
    push: (text: string) => c().enqueue(new TextEncoder().encode(text)),
    end: () => c().close(),
    fail: (error: Error) => c().error(error),
  };
}

/**
 * `concurrency: 1` over a fetch whose first answer has `body` and every later one an empty body:
 * `sent()` counts what reached the fetch.
 */
function oneSlot(first: () => Response, options: Parameters<typeof wrapFetch>[1] = {}) {
  const clock = new FakeClock();
  const fetch = scriptedFetch(clock, (_call, index) =>
    index === 0 ? first() : respond(200, { 'content-length': '0' }),
  );
  const f = wrapFetch(fetch, { clock, concurrency: 1, coldStart: false, ...options });
  const inFlight = () => f.stats().hosts[URL_]?.inFlight;
  return { clock, fetch, f, inFlight, sent: () => fetch.calls.length };
}

describe('a slot lasts as long as its body', () => {
  it('a body nobody reads keeps the slot for the grace, to the millisecond, then gives it back', async () => {
    expect(BODY_GRACE_MS).toBe(1000);
    const { clock, f, inFlight, sent } = oneSlot(() => respond(200, {}, 'unread'));
    const first = await f(`${URL_}/a`);
    const second = f(`${URL_}/b`);
    await clock.advance(BODY_GRACE_MS - 1);
    expect(sent()).toBe(1);
    expect(inFlight()).toBe(1);
    await clock.advance(1);
    expect(sent()).toBe(2);
    expect((await second).status).toBe(200);
    // Given back, not taken: the body is still whole.
    expect(await first.text()).toBe('unread');
  });

  it('text(), json() and arrayBuffer() give the slot back when they settle, before the caller goes on', async () => {
    for (const read of ['text', 'json', 'arrayBuffer'] as const) {
      const { f, inFlight } = oneSlot(() => respond(200, {}, '{"a":1}'));
      const r = await f(`${URL_}/a`);
      expect(inFlight()).toBe(1);
      await r[read]();
      expect(inFlight()).toBe(0);
    }
  });

  it('a body being read as a stream keeps the slot past the grace, until its end', async () => {
    const body = controlledBody();
    const { clock, f, sent } = oneSlot(() => new Response(body.stream));
    const r = await f(`${URL_}/events`);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    const next = f(`${URL_}/b`);
    // A read is pending for ten graces: the caller reads, the server still counts the request.
    const pending = reader.read();
    await clock.advance(10 * BODY_GRACE_MS);
    expect(sent()).toBe(1);
    body.push('data: 1\n\n');
    expect(new TextDecoder().decode((await pending).value)).toBe('data: 1\n\n');
    const last = reader.read();
    body.end();
    expect((await last).done).toBe(true);
    await flush();
    expect(sent()).toBe(2);
    expect((await next).status).toBe(200);
  });

  it('between two reads of a stream the grace runs', async () => {
    const body = controlledBody();
    const { clock, f, sent } = oneSlot(() => new Response(body.stream));
    const r = await f(`${URL_}/events`);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    body.push('one');
    await reader.read(); // read once, then never again
    const next = f(`${URL_}/b`);
    await clock.advance(BODY_GRACE_MS - 1);
    expect(sent()).toBe(1);
    await clock.advance(1);
    expect(sent()).toBe(2);
    await next;
  });

  it('a cancelled body, or one that fails, gives the slot back at once', async () => {
    const cancelled = oneSlot(() => respond(200, {}, 'x'.repeat(100)));
    const a = await cancelled.f(`${URL_}/a`);
    await (a.body as ReadableStream).cancel();
    expect(cancelled.inFlight()).toBe(0);

    const body = controlledBody();
    const failing = oneSlot(() => new Response(body.stream));
    const b = await failing.f(`${URL_}/b`);
    const read = b.text().catch((e: unknown) => e);
    body.fail(new Error('connection lost'));
    expect(((await read) as Error).message).toBe('connection lost');
    expect(failing.inFlight()).toBe(0);
  });

  it('a response without a body (HEAD, 204, 304) or with an empty one gives the slot back at once', async () => {
    for (const first of [
      () => respond(204),
      () => respond(304),
      () => new Response(null, { status: 200 }),
      () => respond(200, { 'content-length': '0' }),
    ]) {
      const { f, inFlight } = oneSlot(first);
      await f(`${URL_}/a`, { method: 'HEAD' });
      expect(inFlight()).toBe(0);
    }
  });

  it('keeps the response as it was: the same object, its class, its body read once', async () => {
    const { f } = oneSlot(() => respond(200, { 'x-a': '1' }, 'payload'));
    const r = await f(`${URL_}/a`);
    expect(r).toBeInstanceOf(Response);
    expect(r.headers.get('x-a')).toBe('1');
    expect(r.body).toBe(r.body);
    expect(r.bodyUsed).toBe(false);
    expect(await new Response(r.body).text()).toBe('payload');
    expect(r.bodyUsed).toBe(true);
    await expect(r.text()).rejects.toThrow(TypeError);
  });

  it('a retry lets the answer it discards go with its slot: one slot is enough', async () => {
    const clock = new FakeClock();
    const fetch = scriptedFetch(clock, (_call, index) =>
      index === 0 ? respond(503, { 'retry-after': '1' }, 'busy') : respond(200, {}, 'ok'),
    );
    const f = wrapFetch(fetch, { clock, concurrency: 1, coldStart: false });
    const call = f(`${URL_}/a`);
    await clock.until(call, 5000);
    const r = await call;
    expect(r.status).toBe(200);
    expect(fetch.calls).toHaveLength(2);
    expect(await r.text()).toBe('ok');
    expect(f.stats().hosts[URL_]?.inFlight).toBe(0);
  });

  it('a LimitedClient over wrapFetch, both capped: the inner one holds the body, the outer passes through', async () => {
    const clock = new FakeClock();
    const fetch = scriptedFetch(clock, () => respond(200, {}, 'watched once'));
    const inner = wrapFetch(fetch, { clock, concurrency: 1, coldStart: false });
    const outer = new LimitedClient(URL_, {
      clock,
      fetch: inner,
      concurrency: 1,
      coldStart: false,
    });
    const r = await outer.get('/a');
    expect(inner.stats().hosts[URL_]?.inFlight).toBe(1);
    // A stacked pipeline runs nothing of its own (see docs/client.md): no host, no slot held.
    expect(outer.stats().hosts[URL_]).toBeUndefined();
    expect(await r.text()).toBe('watched once');
    expect(inner.stats().hosts[URL_]?.inFlight).toBe(0);
  });

  it('without a cap or a declared concurrency policy, nothing is held and nothing is watched', async () => {
    const clock = new FakeClock();
    const fetch = scriptedFetch(clock, () => respond(200, {}, 'free'));
    const f = wrapFetch(fetch, { clock, coldStart: false });
    const r = await f(`${URL_}/a`);
    expect(Object.getPrototypeOf(r)).toBe(Response.prototype);
    expect(f.stats().hosts[URL_]?.inFlight).toBe(0);
  });
});

describe('OpenBodies', () => {
  it('rings once for many bodies, and counts the grace from a clock that stepped back', async () => {
    const clock = new FakeClock();
    const ended: string[] = [];
    const bodies = new OpenBodies<string>(clock, (name) => ended.push(name), 100);
    const idle = (name: string) => {
      const slot = bodies.hold(name);
      slot.idle();
      return slot;
    };
    idle('a');
    await clock.advance(50);
    const b = idle('b');
    expect(clock.pending).toBe(1);
    await clock.advance(50);
    expect(ended).toEqual(['a']);
    b.reading(); // b is read from here: no grace
    await clock.advance(1000);
    expect(ended).toEqual(['a']);
    b.end();
    b.end();
    expect(ended).toEqual(['a', 'b']);
    // An idle time ahead of the clock (it stepped back) waits the grace from now, not longer.
    const c = idle('c');
    c.idleSince = clock.now() + 3_600_000;
    await clock.advance(100);
    await clock.advance(100);
    expect(ended).toEqual(['a', 'b', 'c']);
  });

  it('a slot held and let go without being watched ends once, and never enters the grace', async () => {
    const clock = new FakeClock();
    const ended: string[] = [];
    const bodies = new OpenBodies<string>(clock, (name) => ended.push(name), 100);
    const held = bodies.hold('held');
    await clock.advance(1000);
    expect(ended).toEqual([]);
    expect(clock.pending).toBe(0);
    held.end();
    held.idle();
    held.end();
    expect(ended).toEqual(['held']);
    expect(held.ended).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { isClientClosedError, wrapFetch } from '../../src/index.js';
import { FakeClock, flush, respond, scriptedFetch } from './helpers.js';

describe('wrapFetch', () => {
  it('has the signature of fetch and passes the call through', async () => {
    const clock = new FakeClock();
    const inner = scriptedFetch(clock, () => respond(201, { 'x-a': 'b' }, 'made'));
    const fetch = wrapFetch(inner, { clock });
    const r = await fetch('https://api.example.com/things?x=1', {
      method: 'PUT',
      headers: { 'x-mine': '1' },
      body: 'payload',
    });
    expect(r.status).toBe(201);
    expect(await r.text()).toBe('made');
    expect(inner.calls[0]).toMatchObject({
      url: 'https://api.example.com/things?x=1',
      method: 'PUT',
      body: 'payload',
    });
    expect(inner.calls[0]?.headers.get('x-mine')).toBe('1');
  });

  it('accepts URL objects and Requests', async () => {
    const clock = new FakeClock();
    const inner = scriptedFetch(clock, () => respond(200));
    const fetch = wrapFetch(inner, { clock });
    await fetch(new URL('https://a.example.com/u'));
    await fetch(new Request('https://a.example.com/r', { method: 'POST', body: 'x' }));
    expect(inner.calls.map((c) => `${c.method} ${c.url} ${c.body ?? ''}`)).toEqual([
      'GET https://a.example.com/u ',
      'POST https://a.example.com/r x',
    ]);
    expect(inner.calls[1]?.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keeps one pipeline per origin: scheme, host and port', async () => {
    const clock = new FakeClock();
    const inner = scriptedFetch(clock, () => respond(200));
    const fetch = wrapFetch(inner, { clock });
    await fetch('https://a.example.com/1');
    await fetch('https://a.example.com:8443/2');
    await fetch('http://a.example.com/3');
    await fetch('https://a.example.com/4');
    const hosts = fetch.stats().hosts;
    expect(Object.keys(hosts).sort()).toEqual([
      'http://a.example.com',
      'https://a.example.com',
      'https://a.example.com:8443',
    ]);
    expect(hosts['https://a.example.com']?.requests).toBe(2);
  });

  it('rejects a relative URL as fetch does', async () => {
    const fetch = wrapFetch(scriptedFetch(new FakeClock(), () => respond(200)));
    await expect(fetch('/relative')).rejects.toThrow(TypeError);
  });

  it('uses the global fetch at call time when given none', async () => {
    const original = globalThis.fetch;
    const clock = new FakeClock();
    const inner = scriptedFetch(clock, () => respond(204));
    globalThis.fetch = inner;
    try {
      const fetch = wrapFetch(undefined, { clock });
      expect((await fetch('https://g.example.com/')).status).toBe(204);
    } finally {
      globalThis.fetch = original;
    }
  });

  it('exposes on/off/stats/close', async () => {
    const clock = new FakeClock();
    const inner = scriptedFetch(clock, () => clock.sleep(100).then(() => respond(200)));
    const fetch = wrapFetch(inner, { clock, concurrency: 1 });
    const queued: string[] = [];
    const stop = fetch.on('queued', (e) => queued.push(e.url));
    const a = fetch('https://a.example.com/1');
    const b = fetch('https://a.example.com/2');
    await flush();
    expect(queued).toEqual(['https://a.example.com/2']);
    stop();
    await clock.until(Promise.all([a, b]));
    await fetch.close();
    await expect(fetch('https://a.example.com/3')).rejects.toSatisfy(isClientClosedError);
  });
});

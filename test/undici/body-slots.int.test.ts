/**
 * Issue 24, item 6, through `new Agent().compose(limited())` over real HTTP on loopback: a call's
 * slot lasts until its body has ended on the wire (or failed, or was let go), not until its
 * headers. Six calls with `concurrency: 2` against the mock server's concurrency limit of 2 with
 * slow bodies get 0 x 429 (they got 429s when the slot came back with the headers), and so do
 * calls without a cap against the limit the server declares. A caller that holds a body paused
 * and never reads it gives the slot back after the grace (on the interceptor's fake clock).
 */
import { Agent, type Dispatcher, request, fetch as undiciFetch } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { BODY_GRACE_MS } from '../../src/client/call/open-bodies.js';
import type { LimitedClientOptions } from '../../src/index.js';
import { type LimitedInterceptor, limited } from '../../src/undici/index.js';
import { FakeClock, flush } from '../client/helpers.js';
import { closeMockServers, closePlainServers, pause, start, startPlain } from './servers.js';

const agents: Dispatcher[] = [];
afterAll(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  await closeMockServers();
  await closePlainServers();
});

function limitedAgent(options?: LimitedClientOptions): {
  agent: Dispatcher;
  interceptor: LimitedInterceptor;
} {
  const interceptor = limited(options);
  const base = new Agent();
  agents.push(base);
  return { agent: base.compose(interceptor), interceptor };
}

/** What the mock server sends: a JSON string, one byte every 40 ms (about half a second). */
const BODY = JSON.stringify('abcdefghij');

/** The mock server with two concurrent slots, declared, and slow bodies. */
function slowSlots() {
  return start({
    routes: [
      {
        path: '*',
        limits: [{ algorithm: 'concurrency', limit: 2, key: 'global', name: 'slots' }],
        response: { body: 'abcdefghij' },
        faults: { slowBody: { chunkBytes: 1, intervalMs: 40 } },
      },
    ],
  });
}

/** Resolves once `check` holds, polling every 10 ms of real time (at most `ms`). */
async function eventually(check: () => boolean, ms = 5000): Promise<void> {
  for (let waited = 0; !check() && waited < ms; waited += 10) await pause(10);
}

describe.concurrent('a slot lasts as long as its body, through the interceptor', () => {
  it('six undici.request calls with concurrency: 2 against a limit of 2 with slow bodies: 0 x 429', async () => {
    const server = await slowSlots();
    const { agent } = limitedAgent({ concurrency: 2 });
    const bodies = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const r = await request(`${server.url}/items/${i}`, { dispatcher: agent });
        expect(r.statusCode).toBe(200);
        if (i % 2 === 0) return r.body.text();
        let text = '';
        for await (const chunk of r.body) text += String(chunk);
        return text;
      }),
    );
    expect(bodies).toEqual(Array(6).fill(BODY));
    expect(server.stats().rejected).toBe(0);
  });

  it("six of undici's fetch with concurrency: 2: 0 x 429", async () => {
    const server = await slowSlots();
    const { agent } = limitedAgent({ concurrency: 2 });
    const bodies = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const r = await undiciFetch(`${server.url}/f/${i}`, { dispatcher: agent });
        return r.text();
      }),
    );
    expect(bodies).toEqual(Array(6).fill(BODY));
    expect(server.stats().rejected).toBe(0);
  });

  it('without a cap of its own, the limit the server declares holds until each body ends: 0 x 429', async () => {
    const server = await slowSlots();
    const { agent } = limitedAgent();
    const bodies = await Promise.all(
      Array.from({ length: 6 }, async (_, i) =>
        (await request(`${server.url}/free/${i}`, { dispatcher: agent })).body.text(),
      ),
    );
    expect(bodies).toEqual(Array(6).fill(BODY));
    expect(server.stats().rejected).toBe(0);
  });

  it('a body that fails on the wire gives its slot back', async () => {
    const { url } = await startPlain((req, res) => {
      if (req.url === '/cut') {
        res.writeHead(200, { 'content-length': '1000' });
        res.write('partial');
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      res.end('whole');
    });
    const { agent, interceptor } = limitedAgent({ concurrency: 1, retry: false });
    const cut = await request(`${url}/cut`, { dispatcher: agent });
    const next = request(`${url}/next`, { dispatcher: agent });
    await expect(cut.body.text()).rejects.toThrow();
    expect(await (await next).body.text()).toBe('whole');
    expect(interceptor.stats().hosts[url]?.inFlight).toBe(0);
  });

  it('a body held paused and never read gives its slot back after the grace', async () => {
    const clock = new FakeClock();
    const received: string[] = [];
    const { url } = await startPlain((req, res) => {
      received.push(req.url ?? '');
      if (req.url !== '/big') {
        res.end('small');
        return;
      }
      res.writeHead(200, { 'content-length': String(8 * 1024 * 1024) });
      const block = Buffer.alloc(64 * 1024, 1);
      const write = () => {
        while (res.write(block)) if (res.writableLength > 8 * 1024 * 1024) return;
      };
      res.on('drain', write);
      write();
    });
    const { agent, interceptor } = limitedAgent({ clock, concurrency: 1, coldStart: false });
    const unread = await request(`${url}/big`, { dispatcher: agent });
    const next = request(`${url}/next`, { dispatcher: agent });
    // The caller's stream fills and pauses the body; only then does the grace count.
    await pause(300);
    await clock.advance(BODY_GRACE_MS - 1);
    await pause(100);
    expect(received).toEqual(['/big']);
    expect(interceptor.stats().hosts[url]?.inFlight).toBe(1);
    await clock.advance(1);
    await eventually(() => received.length === 2);
    expect(received).toEqual(['/big', '/next']);
    expect(await (await next).body.text()).toBe('small');
    unread.body.destroy();
    await flush();
  });
});

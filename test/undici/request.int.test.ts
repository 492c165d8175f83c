/**
 * `undici.request` through `new Agent().compose(limited())`, over real HTTP on loopback against
 * the in-repo mock server (and plain servers for a live stream and a large body): the limits, a
 * retried POST and its idempotency key, streamed request bodies, streaming responses, aborts,
 * timeouts, close(), and both handler APIs.
 */
import { Readable } from 'node:stream';
import { Agent, Client, type Dispatcher, interceptors, request, upgrade } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { isClientClosedError, isTimeoutError } from '../../src/index.js';
import {
  type LimitedInterceptor,
  limited,
  MAX_REPLAYABLE_BODY_BYTES,
} from '../../src/undici/index.js';
import { FakeClock } from '../client/helpers.js';
import { RecordingHandler } from './helpers.js';
import { closeMockServers, closePlainServers, pause, start, startPlain } from './servers.js';
import { forLegacyHandlers, UNDICI_MAJOR } from './undici-major.js';

const agents: Dispatcher[] = [];
afterAll(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  await closeMockServers();
  await closePlainServers();
});

/** An Agent composed with a fresh interceptor; both closed after the file. */
function limitedAgent(options?: Parameters<typeof limited>[0]): {
  agent: Dispatcher;
  interceptor: LimitedInterceptor;
} {
  const interceptor = limited(options);
  const base = new Agent();
  agents.push(base);
  return { agent: base.compose(interceptor), interceptor };
}

function bareAgent(): Dispatcher {
  const agent = new Agent();
  agents.push(agent);
  return agent;
}

const bucket = {
  algorithm: 'token-bucket' as const,
  capacity: 5,
  refillPerSecond: 20,
  key: 'global' as const,
  name: 'tb',
};

describe.concurrent('undici.request through the interceptor', () => {
  it('a GraphQL answer goes to the caller whole: the interceptor does not look at bodies', async () => {
    // The look at GraphQL bodies (docs/body-limits.md) is the fetch path's: here the body goes to
    // the caller's handler from the dispatcher's callbacks, and a THROTTLED in it is handed back.
    let calls = 0;
    const body = `{"errors":[{"extensions":{"code":"THROTTLED"}}],"pad":"${'z'.repeat(5000)}"}`;
    const { url } = await startPlain((req, res) => {
      calls++;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    const { agent } = limitedAgent();
    const r = await request(`${url}/graphql`, {
      method: 'POST',
      body: '{"query":"{ a }"}',
      dispatcher: agent,
    });
    expect(r.statusCode).toBe(200);
    expect(await r.body.text()).toBe(body);
    expect(calls).toBe(1);
  });

  it('a hook sees each attempt as a Response: its headers whole, its body readable', async () => {
    let calls = 0;
    const { url } = await startPlain((_req, res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(418, { 'x-try-again': 'yes', 'set-cookie': ['a=1', 'b=2'] });
        res.end('first');
      } else res.end('second');
    });
    const seen: { instance: boolean; cookies: string[]; status: number }[] = [];
    let firstBody: Promise<string> | undefined;
    const { agent } = limitedAgent({
      retry: {
        shouldRetry: ({ response }) => {
          if (!response) return false;
          seen.push({
            instance: response instanceof Response,
            cookies: response.headers.getSetCookie(),
            status: response.status,
          });
          if (response.headers.get('x-try-again') !== 'yes') return false;
          firstBody = response.text();
          return true;
        },
      },
    });
    const r = await request(`${url}/x`, { dispatcher: agent });
    expect(await r.body.text()).toBe('second');
    expect(r.statusCode).toBe(200);
    expect(seen).toEqual([
      { instance: true, cookies: ['a=1', 'b=2'], status: 418 },
      { instance: true, cookies: [], status: 200 },
    ]);
    expect(await firstBody).toBe('first');
  });

  it('the caller gets the headers as a bare Agent gives them: raw, in the server’s case, repeated fields apart', async () => {
    // undici 7's request() takes the raw list (its legacy handler API): the answer goes to it as
    // the parser made it, not converted to an object and back (which lower-cases every name and
    // nests a repeated field's values in one entry). undici 8's reads the list on its controller.
    const { url } = await startPlain((_req, res) => {
      res.setHeader('X-Mixed-Case', 'v');
      res.setHeader('Set-Cookie', ['a=1', 'b=2']);
      res.setHeader('RateLimit-Policy', '"min";q=100;w=60');
      res.end('ok');
    });
    const raw = async (dispatcher: Dispatcher) => {
      const r = await request(`${url}/raw`, { dispatcher, responseHeaders: 'raw' });
      await r.body.dump();
      const headers = r.headers as unknown as string[];
      // The date moves between the two calls; the rest is the same list.
      return headers.map((item, i) => (headers[i - 1] === 'Date' ? '(date)' : item));
    };
    const { agent } = limitedAgent();
    const expected = await raw(bareAgent());
    expect(expected).toContain('X-Mixed-Case');
    expect(await raw(agent)).toEqual(expected);
  });

  it('stays under a declared limit: every call answered, 0 x 429 (a bare Agent gets 429s)', async () => {
    // The server and the interceptor on one fake clock: the server's refills come at the times
    // the client paced for, whatever the machine's load does to loopback.
    const clock = new FakeClock();
    const server = await start({ clock, routes: [{ path: '/items/:id', limits: [bucket] }] });
    const { agent, interceptor } = limitedAgent({ clock });
    const held: string[] = [];
    interceptor.on('held', (e) => held.push(e.reason));
    const calls = Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const r = await request(`${server.url}/items/${i}`, { dispatcher: agent });
        await r.body.dump();
        return r.statusCode;
      }),
    );
    await clock.until(calls, 60_000, 5);
    const statuses = await calls;
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(server.stats().rejected).toBe(0);
    const host = interceptor.stats().hosts[server.url];
    expect(host).toMatchObject({ requests: 30, attempts: 30, responses: 30, mode: 'declared' });
    expect(held.length).toBeGreaterThan(0);

    // The same limit, its clock stopped: 30 at once against a burst of 5.
    const control = await start({
      clock: new FakeClock(),
      routes: [{ path: '/items/:id', limits: [bucket] }],
    });
    const bare = bareAgent();
    await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const r = await request(`${control.url}/items/${i}`, { dispatcher: bare });
        await r.body.dump();
      }),
    );
    expect(control.stats().rejected).toBe(25);
  });

  it('keeps a pipeline per origin', async () => {
    const a = await start({ routes: [{ path: '*' }] });
    const b = await start({ routes: [{ path: '*' }] });
    const { agent, interceptor } = limitedAgent();
    for (const url of [a.url, b.url, a.url]) {
      await (await request(`${url}/x`, { dispatcher: agent })).body.dump();
    }
    const hosts = interceptor.stats().hosts;
    expect(Object.keys(hosts).sort()).toEqual([a.url, b.url].sort());
    expect(hosts[a.url]?.requests).toBe(2);
  });

  it('a retried POST to a host that honours keys keeps its key: its side effect runs once', async () => {
    const server = await start({
      routes: [
        {
          method: 'POST',
          path: '/payments',
          faults: { reset: { when: 'after-handler', times: 1 } },
        },
      ],
    });
    const { agent, interceptor } = limitedAgent({ idempotency: { honoured: true } });
    const retries: unknown[] = [];
    interceptor.on('retry', (e) => retries.push(e.error));
    const r = await request(`${server.url}/payments`, {
      dispatcher: agent,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 4200 }),
    });
    expect(r.statusCode).toBe(200);
    const body = (await r.body.json()) as { execution: number; body: unknown };
    expect(body).toMatchObject({ execution: 1, body: { amount: 4200 } });
    expect(server.stats().routes['POST /payments']).toMatchObject({
      sideEffects: 1,
      resets: 1,
      replays: 1,
    });
    expect(retries).toHaveLength(1);
  });

  it(`reads a streamed body of known length up to ${MAX_REPLAYABLE_BODY_BYTES} bytes first, so it is retried; one byte more is sent once`, async () => {
    // The first request to each path loses its connection before an answer; later ones are
    // answered with the number of bytes they carried.
    const attempts = new Map<string, number>();
    const { url } = await startPlain((req, res) => {
      const n = (attempts.get(req.url ?? '') ?? 0) + 1;
      attempts.set(req.url ?? '', n);
      if (n === 1) {
        req.socket.destroy();
        return;
      }
      let bytes = 0;
      req.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      req.on('end', () => res.end(String(bytes)));
    });
    // A host that honours keys: a write whose connection dropped may be sent again.
    const { agent } = limitedAgent({ coldStart: false, idempotency: { honoured: true } });
    const upload = (bytes: number) => ({
      dispatcher: agent,
      method: 'POST' as const,
      headers: { 'content-length': String(bytes), 'content-type': 'application/octet-stream' },
      body: Readable.from([Buffer.alloc(bytes - 1, 'a'), Buffer.from('z')]),
    });
    const atBound = await request(`${url}/at-bound`, upload(MAX_REPLAYABLE_BODY_BYTES));
    expect(atBound.statusCode).toBe(200);
    expect(await atBound.body.text()).toBe(String(MAX_REPLAYABLE_BODY_BYTES));
    const past = await request(`${url}/past-bound`, upload(MAX_REPLAYABLE_BODY_BYTES + 1)).catch(
      (e: unknown) => e,
    );
    expect(past).toBeInstanceOf(Error);
    expect(Object.fromEntries(attempts)).toEqual({ '/at-bound': 2, '/past-bound': 1 });
  });

  it('a slow body arrives whole, in order, in pieces', async () => {
    const items = Array.from({ length: 40 }, (_, i) => ({ id: i, name: `item ${i}` }));
    const server = await start({
      routes: [
        {
          path: '/slow',
          response: { body: { items } },
          faults: { slowBody: { chunkBytes: 64, intervalMs: 5 } },
        },
      ],
    });
    const { agent } = limitedAgent();
    const r = await request(`${server.url}/slow`, { dispatcher: agent });
    const chunks: Buffer[] = [];
    for await (const chunk of r.body) chunks.push(chunk as Buffer);
    expect(chunks.length).toBeGreaterThan(5);
    expect(JSON.parse(Buffer.concat(chunks).toString())).toEqual({ items });
  });

  it('an event stream is live: each event reaches the caller before the server sends the next', async () => {
    let acknowledge: () => void = () => {};
    const { url } = await startPlain(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (let n = 1; n <= 5; n++) {
        const read = new Promise<void>((resolve) => {
          acknowledge = resolve;
        });
        res.write(`id: ${n}\ndata: {"n":${n}}\n\n`);
        // The next event goes only once the caller has read this one: a client that buffered the
        // stream until its end would never see the first one, and the test would time out.
        await read;
      }
      res.end();
    });
    const { agent } = limitedAgent();
    const r = await request(`${url}/events`, { dispatcher: agent });
    expect(r.headers['content-type']).toBe('text/event-stream');
    const events: number[] = [];
    let text = '';
    for await (const chunk of r.body) {
      text += chunk.toString();
      for (let end = text.indexOf('\n\n'); end !== -1; end = text.indexOf('\n\n')) {
        const data = /data: (.*)/.exec(text.slice(0, end))?.[1] ?? '';
        events.push((JSON.parse(data) as { n: number }).n);
        text = text.slice(end + 2);
        acknowledge();
      }
    }
    expect(events).toEqual([1, 2, 3, 4, 5]);
  }, 10_000);

  it('a caller that does not read holds the server back (backpressure), then gets every byte', async () => {
    const total = 128 * 1024 * 1024;
    const block = Buffer.alloc(64 * 1024, 7);
    let written = 0;
    const { url } = await startPlain(async (_req, res) => {
      res.writeHead(200, { 'content-length': String(total) });
      while (written < total) {
        written += block.length;
        if (!res.write(block)) await new Promise((resolve) => res.once('drain', resolve));
      }
      res.end();
    });
    const { agent } = limitedAgent();
    const r = await request(`${url}/big`, { dispatcher: agent });
    // Not read: how far the server gets once it stops moving (or has sent everything).
    let whilePaused = -1;
    for (let i = 0; i < 100 && whilePaused !== written && written < total; i++) {
      whilePaused = written;
      await pause(200);
    }
    let received = 0;
    for await (const chunk of r.body) received += (chunk as Buffer).length;
    expect(received).toBe(total);
    // Socket buffers on loopback hold a few MiB (tens at most); without backpressure the server
    // would send the whole body into this process's memory.
    expect(whilePaused).toBeLessThan(total / 2);
  });

  it('an abort while the call waits in the queue rejects at once, takes no slot and sends nothing', async () => {
    const server = await start({
      routes: [{ path: '/slow', faults: { latencyMs: 1500 } }, { path: '/b' }],
    });
    const { agent, interceptor } = limitedAgent({ concurrency: 1, coldStart: false });
    const first = request(`${server.url}/slow`, { dispatcher: agent });
    const controller = new AbortController();
    const second = request(`${server.url}/b`, { dispatcher: agent, signal: controller.signal });
    await pause(50);
    expect(interceptor.stats().hosts[server.url]?.queueLength).toBe(1);
    controller.abort();
    const error = await second.catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(interceptor.stats().hosts[server.url]?.queueLength).toBe(0);
    await (await first).body.dump();
    expect(server.stats().routes['* /b']?.admitted).toBe(0);
  });

  it('a signal aborted before the call rejects it without sending anything', async () => {
    const server = await start({ routes: [{ path: '*' }] });
    const { agent, interceptor } = limitedAgent();
    const error = await request(`${server.url}/x`, {
      dispatcher: agent,
      signal: AbortSignal.abort(new Error('never mind')),
    }).catch((e: unknown) => e);
    expect((error as Error).message).toBe('never mind');
    expect(server.stats().admitted).toBe(0);
    expect(interceptor.stats().totals.requests).toBe(0);
  });

  it('an abort during the attempt, and during its backoff, rejects the call', async () => {
    const server = await start({
      routes: [
        { path: '/slow', faults: { latencyMs: 2000 } },
        { path: '/down', faults: { unavailable: {} } },
      ],
    });
    const { agent, interceptor } = limitedAgent({
      coldStart: false,
      circuitBreaker: false,
      retry: { baseDelayMs: 5000, maxDelayMs: 5000, retries: 1 },
    });
    const attempt = request(`${server.url}/slow`, {
      dispatcher: agent,
      signal: AbortSignal.timeout(100),
    });
    expect(((await attempt.catch((e: unknown) => e)) as Error).name).toBe('TimeoutError');

    let retrying: () => void = () => {};
    const scheduled = new Promise<void>((resolve) => {
      retrying = resolve;
    });
    interceptor.on('retry', () => retrying());
    const controller = new AbortController();
    const backoff = request(`${server.url}/down`, { dispatcher: agent, signal: controller.signal });
    await scheduled;
    controller.abort(new Error('stop waiting'));
    expect(((await backoff.catch((e: unknown) => e)) as Error).message).toBe('stop waiting');
    expect(server.stats().routes['* /down']?.unavailable).toBe(1);
  });

  it('an abort while the body arrives ends the body with the reason', async () => {
    const server = await start({
      routes: [{ path: '/slow', faults: { slowBody: { chunkBytes: 1, intervalMs: 20 } } }],
    });
    const { agent } = limitedAgent();
    const controller = new AbortController();
    const r = await request(`${server.url}/slow`, { dispatcher: agent, signal: controller.signal });
    const chunks: string[] = [];
    const error = await (async () => {
      for await (const chunk of r.body) {
        chunks.push(chunk.toString());
        if (chunks.length === 3) controller.abort(new Error('enough'));
      }
    })().catch((e: unknown) => e);
    expect((error as Error).message).toBe('enough');
    expect(chunks).toHaveLength(3);
  });

  it('attempt and total timeouts reject with TimeoutError', async () => {
    const server = await start({ routes: [{ path: '/slow', faults: { latencyMs: 1000 } }] });
    const attempt = limitedAgent({ coldStart: false, attemptTimeoutMs: 100, retry: false });
    const a = await request(`${server.url}/slow`, { dispatcher: attempt.agent }).catch(
      (e: unknown) => e,
    );
    expect(isTimeoutError(a) && a.scope).toBe('attempt');
    const total = limitedAgent({ coldStart: false, timeoutMs: 150 });
    const t = await request(`${server.url}/slow`, { dispatcher: total.agent }).catch(
      (e: unknown) => e,
    );
    expect(isTimeoutError(t) && t.scope).toBe('total');
  });

  it('close() rejects waiting and new calls with ClientClosedError; a sent one finishes', async () => {
    const server = await start({ routes: [{ path: '/slow', faults: { latencyMs: 300 } }] });
    const { agent, interceptor } = limitedAgent({ concurrency: 1, coldStart: false });
    const sent = request(`${server.url}/slow`, { dispatcher: agent });
    const waiting = request(`${server.url}/slow`, { dispatcher: agent }).catch((e: unknown) => e);
    await pause(50);
    await interceptor.close();
    expect(isClientClosedError(await waiting)).toBe(true);
    const after = await request(`${server.url}/slow`, { dispatcher: agent }).catch(
      (e: unknown) => e,
    );
    expect(isClientClosedError(after)).toBe(true);
    const done = await sent;
    expect(done.statusCode).toBe(200);
    await done.body.dump();
  });

  it('the new handler API: one start, the body, one end; its pause holds the body until resume', async () => {
    const server = await start({
      routes: [
        {
          path: '/slow',
          response: { body: 'x'.repeat(30) },
          faults: { slowBody: { chunkBytes: 4, intervalMs: 5 } },
        },
      ],
    });
    const { agent } = limitedAgent();
    const handler = new RecordingHandler();
    handler.pauseAfter = 1;
    agent.dispatch({ origin: server.url, path: '/slow', method: 'GET' }, handler);
    // The first chunk, however late a loaded machine lets it come; then time for more to arrive.
    for (let i = 0; i < 500 && handler.chunks.length === 0; i++) await pause(10);
    await pause(100);
    expect(handler.chunks).toHaveLength(1);
    expect(handler.controller?.paused).toBe(true);
    handler.pauseAfter = undefined;
    handler.controller?.resume();
    await handler.done;
    expect(handler.status).toBe(200);
    expect(handler.chunks.join('')).toBe(JSON.stringify('x'.repeat(30)));
    expect(handler.ends).toBe(1);
    expect(handler.error).toBeUndefined();
  });

  it('the legacy handler API works once converted (undici 7: by compose(); 8: by Dispatcher1Wrapper), and is refused given directly', async () => {
    const server = await start({ routes: [{ path: '*' }] });
    const { agent, interceptor } = limitedAgent();
    const heard: string[] = [];
    let body = '';
    await new Promise<void>((resolve, reject) => {
      forLegacyHandlers(agent).dispatch({ origin: server.url, path: '/legacy', method: 'GET' }, {
        onConnect: () => heard.push('connect'),
        onHeaders: (status: number) => {
          heard.push(`headers ${status}`);
          return true;
        },
        onData: (chunk: Buffer) => {
          body += chunk.toString();
          return true;
        },
        onComplete: () => {
          heard.push('complete');
          resolve();
        },
        onError: reject,
      } as Dispatcher.DispatchHandler);
    });
    expect(heard).toEqual(['connect', 'headers 200', 'complete']);
    expect(JSON.parse(body)).toMatchObject({ path: '/legacy' });
    const direct = interceptor(bareAgent().dispatch.bind(bareAgent()));
    expect(() =>
      direct({ origin: server.url, path: '/', method: 'GET' }, {
        onHeaders: () => true,
      } as Dispatcher.DispatchHandler),
    ).toThrow(/legacy API.*undici 7.*compose\(\).*undici 8.*Dispatcher1Wrapper/);
  });

  it("a request without an origin (a Client composed directly): a TypeError naming it on undici 7; undici 8 gives the Client's origin", async () => {
    const server = await start({ routes: [{ path: '*' }] });
    const client = new Client(server.url);
    agents.push(client);
    const composed = client.compose(limited());
    const answer = await composed.request({ path: '/x', method: 'GET' }).catch((e: unknown) => e);
    if (UNDICI_MAJOR === 7) {
      expect(answer).toBeInstanceOf(TypeError);
      expect((answer as Error).message).toMatch(/no origin/);
    } else {
      // undici 8's compose() puts the Client's origin in the options before any interceptor.
      const response = answer as Dispatcher.ResponseData;
      expect(response.statusCode).toBe(200);
      await response.body.dump();
    }
    const ok = await composed.request({ origin: server.url, path: '/x', method: 'GET' });
    expect(ok.statusCode).toBe(200);
    await ok.body.dump();
  });

  it("composed under undici's redirect interceptor, each hop goes through the pipeline", async () => {
    const { url } = await startPlain((req, res) => {
      if (req.url === '/old') res.writeHead(302, { location: '/new' }).end();
      else res.end('moved here');
    });
    const interceptor = limited();
    const base = new Agent();
    agents.push(base);
    const agent = base.compose(interceptor, interceptors.redirect({ maxRedirections: 2 }));
    const r = await request(`${url}/old`, { dispatcher: agent });
    expect(await r.body.text()).toBe('moved here');
    expect(interceptor.stats().totals).toMatchObject({ requests: 2, responses: 2 });
  });

  it('passes an upgrade through without the pipeline', async () => {
    const { server, url } = await startPlain((_req, res) => res.end());
    server.on('upgrade', (_req, socket) => {
      socket.end(
        'HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: echo\r\n\r\n',
      );
    });
    const { agent, interceptor } = limitedAgent();
    const { headers, socket } = await upgrade(`${url}/ws`, { dispatcher: agent, protocol: 'echo' });
    expect(headers.upgrade).toBe('echo');
    socket.destroy();
    expect(interceptor.stats().totals.requests).toBe(0);
  });
});

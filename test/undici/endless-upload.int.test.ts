/**
 * Issue 24, item 8, through `new Agent().compose(limited())` over real HTTP on loopback: a
 * streamed request body that declares a `content-length` (read into memory first, so that it can
 * be retried) and never ends used to hold the call before the pipeline for ever, out of reach of
 * `timeoutMs` and `close()`; now both end it, as the caller's abort does, and the stream is
 * closed.
 */
import { Readable } from 'node:stream';
import { Agent, type Dispatcher, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { isClientClosedError, isTimeoutError, type LimitedClientOptions } from '../../src/index.js';
import { type LimitedInterceptor, limited } from '../../src/undici/index.js';
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

/** Resolves once `check` holds, polling every 10 ms of real time (at most `ms`). */
async function eventually(check: () => boolean, ms = 5000): Promise<void> {
  for (let waited = 0; !check() && waited < ms; waited += 10) await pause(10);
}

describe.concurrent('a streamed request body of declared length that never ends', () => {
  /** A stream that yields one chunk and then nothing, ever; records whether it was closed. */
  function endless() {
    const state = { closed: false };
    const body = new Readable({ read() {} });
    body.push(Buffer.from('first part of 100 bytes'));
    body.on('close', () => {
      state.closed = true;
    });
    return { body, state };
  }

  function upload(agent: Dispatcher, body: Readable) {
    return {
      dispatcher: agent,
      method: 'POST' as const,
      headers: { 'content-length': '100', 'content-type': 'application/octet-stream' },
      body,
    };
  }

  it('times out with timeoutMs (TimeoutError, total), sends nothing, and closes the stream', async () => {
    const server = await start({ routes: [{ path: '*' }] });
    const { agent } = limitedAgent({ timeoutMs: 200 });
    const { body, state } = endless();
    const error = await request(`${server.url}/upload`, upload(agent, body)).catch(
      (e: unknown) => e,
    );
    expect(isTimeoutError(error) && error.scope).toBe('total');
    expect(server.stats().admitted).toBe(0);
    await eventually(() => state.closed);
    expect(state.closed).toBe(true);
  });

  it('ends with ClientClosedError when the interceptor closes', async () => {
    const server = await start({ routes: [{ path: '*' }] });
    const { agent, interceptor } = limitedAgent();
    const { body, state } = endless();
    const call = request(`${server.url}/upload`, upload(agent, body)).catch((e: unknown) => e);
    await pause(50);
    await interceptor.close();
    expect(isClientClosedError(await call)).toBe(true);
    expect(server.stats().admitted).toBe(0);
    await eventually(() => state.closed);
    expect(state.closed).toBe(true);
  });

  it("ends with the caller's abort reason, and closes the stream", async () => {
    const server = await start({ routes: [{ path: '*' }] });
    const { agent } = limitedAgent();
    const { body, state } = endless();
    const controller = new AbortController();
    const call = request(`${server.url}/upload`, {
      ...upload(agent, body),
      signal: controller.signal,
    }).catch((e: unknown) => e);
    await pause(50);
    controller.abort(new Error('no more'));
    expect(((await call) as Error).message).toBe('no more');
    await eventually(() => state.closed);
    expect(state.closed).toBe(true);
  });

  it('a body that does end within timeoutMs is still read first and sent whole', async () => {
    const { url } = await startPlain((req, res) => {
      let bytes = 0;
      req.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      req.on('end', () => res.end(String(bytes)));
    });
    const { agent } = limitedAgent({ timeoutMs: 5000 });
    const body = Readable.from([Buffer.alloc(60, 'a'), Buffer.alloc(40, 'b')]);
    const r = await request(`${url}/upload`, upload(agent, body as Readable));
    expect(await r.body.text()).toBe('100');
  });
});

/**
 * fetch through the interceptor, over real HTTP on loopback: `undici.fetch` with a composed
 * dispatcher, and Node's own global fetch once `setGlobalDispatcher(new Agent().compose(limited()))`
 * is installed (the previous dispatcher is put back after). fetch hands every request body to the
 * dispatcher as a stream: a body of known length is read first, so a POST is retried with its key.
 */
import {
  Agent,
  type Dispatcher,
  getGlobalDispatcher,
  setGlobalDispatcher,
  fetch as undiciFetch,
} from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { limited } from '../../src/undici/index.js';
import { closeMockServers, pause, start } from './servers.js';

const bucket = {
  algorithm: 'token-bucket' as const,
  capacity: 5,
  refillPerSecond: 20,
  key: 'global' as const,
  name: 'tb',
};

const agents: Dispatcher[] = [];
afterAll(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  await closeMockServers();
});

function composed(options?: Parameters<typeof limited>[0]) {
  const interceptor = limited(options);
  const agent = new Agent();
  agents.push(agent);
  return { interceptor, dispatcher: agent.compose(interceptor) };
}

describe('undici.fetch with a composed dispatcher', () => {
  it('stays under a declared limit: every call answered, 0 x 429', async () => {
    const server = await start({ routes: [{ path: '/items/:id', limits: [bucket] }] });
    const { dispatcher, interceptor } = composed();
    const statuses = await Promise.all(
      Array.from({ length: 25 }, async (_, i) => {
        const r = await undiciFetch(`${server.url}/items/${i}`, { dispatcher });
        await r.arrayBuffer();
        return r.status;
      }),
    );
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(server.stats().rejected).toBe(0);
    expect(interceptor.stats().totals.held).toBeGreaterThan(0);
  });
});

describe("Node's global fetch, with setGlobalDispatcher", () => {
  /** Runs `body` with the interceptor installed as the global dispatcher, then puts back the old. */
  async function withGlobal(
    options: Parameters<typeof limited>[0],
    body: (interceptor: ReturnType<typeof limited>) => Promise<void>,
  ): Promise<void> {
    const previous = getGlobalDispatcher();
    const { interceptor, dispatcher } = composed(options);
    setGlobalDispatcher(dispatcher);
    try {
      await body(interceptor);
    } finally {
      setGlobalDispatcher(previous);
    }
    expect(getGlobalDispatcher()).toBe(previous);
  }

  it('stays under a declared limit: every call answered, 0 x 429', async () => {
    const server = await start({ routes: [{ path: '/items/:id', limits: [bucket] }] });
    await withGlobal(undefined, async (interceptor) => {
      const statuses = await Promise.all(
        Array.from({ length: 25 }, async (_, i) => {
          const r = await fetch(`${server.url}/items/${i}`);
          await r.arrayBuffer();
          return r.status;
        }),
      );
      expect(statuses.every((s) => s === 200)).toBe(true);
      expect(interceptor.stats().hosts[server.url]?.requests).toBe(25);
    });
    expect(server.stats().rejected).toBe(0);
  });

  it('a POST to a host that honours keys whose connection dropped after its side effect is retried with its key: it runs once', async () => {
    const server = await start({
      routes: [
        {
          method: 'POST',
          path: '/payments',
          faults: { reset: { when: 'after-handler', times: 1 } },
        },
      ],
    });
    await withGlobal({ idempotency: { honoured: true } }, async (interceptor) => {
      const response = await fetch(`${server.url}/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 4200 }),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ execution: 1, body: { amount: 4200 } });
      expect(interceptor.stats().totals.retries).toBe(1);
    });
    expect(server.stats().routes['POST /payments']).toMatchObject({
      sideEffects: 1,
      resets: 1,
      replays: 1,
    });
  });

  it('a body streamed without a length is sent once: not retried', async () => {
    const server = await start({
      routes: [
        {
          method: 'POST',
          path: '/upload',
          faults: { reset: { when: 'before-handler', times: 1 } },
        },
      ],
    });
    await withGlobal({ coldStart: false }, async () => {
      const body = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('streamed'));
          controller.close();
        },
      });
      const error = await fetch(`${server.url}/upload`, {
        method: 'POST',
        body,
        duplex: 'half',
      } as RequestInit).catch((e: unknown) => e);
      expect((error as Error).message).toBe('fetch failed');
    });
    expect(server.stats().routes['POST /upload']).toMatchObject({ resets: 1, sideEffects: 0 });
  });

  it('a slow body arrives whole, in order, in pieces', async () => {
    const items = Array.from({ length: 30 }, (_, i) => ({ id: i }));
    const server = await start({
      routes: [
        {
          path: '/slow',
          response: { body: { items } },
          faults: { slowBody: { chunkBytes: 32, intervalMs: 5 } },
        },
      ],
    });
    await withGlobal(undefined, async () => {
      const response = await fetch(`${server.url}/slow`);
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const parts: Uint8Array[] = [];
      for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value);
      expect(parts.length).toBeGreaterThan(3);
      expect(JSON.parse(Buffer.concat(parts).toString())).toEqual({ items });
    });
  });

  it('an abort while the call waits for the host rejects at once', async () => {
    const server = await start({ routes: [{ path: '/slow', faults: { latencyMs: 1000 } }] });
    await withGlobal({ concurrency: 1, coldStart: false }, async (interceptor) => {
      const first = fetch(`${server.url}/slow`);
      const controller = new AbortController();
      const second = fetch(`${server.url}/slow`, { signal: controller.signal });
      await pause(50);
      controller.abort();
      expect(((await second.catch((e: unknown) => e)) as Error).name).toBe('AbortError');
      expect(interceptor.stats().hosts[server.url]?.queueLength).toBe(0);
      await (await first).arrayBuffer();
    });
    expect(server.stats().routes['* /slow']?.admitted).toBe(1);
  });
});

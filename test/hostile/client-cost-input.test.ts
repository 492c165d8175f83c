/**
 * The bound on the body a `cost` function is handed (MAX_VIEWED_BODY_BYTES, 1 MiB as sent), and
 * the bodies it is never handed, over loopback: a body above the bound, a stream, FormData, a
 * Blob and invalid JSON each leave the function without a body (never a part of one), and the call
 * still goes, its body whole.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_VIEWED_BODY_BYTES } from '../../src/client/call/request-view.js';
import { type CostContext, wrapFetch } from '../../src/index.js';
import { closeAll, start } from '../client/integration/server.js';

const MAX = MAX_VIEWED_BODY_BYTES;

/**
 * A loopback server answering each request with the number of body bytes it received, for the
 * bodies above the mock server's own bound (1 MiB, answered 413 unread).
 */
async function countingServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => res.end(String(bytes)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const servers: Server[] = [];
afterAll(async () => {
  await closeAll();
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A wrapFetch whose cost function records the body and JSON it saw. */
function recording() {
  const seen: { body: string | undefined; json: unknown }[] = [];
  const fetch = wrapFetch(undefined, {
    cost: (request: CostContext) => {
      seen.push({ body: request.body, json: request.json() });
      return 1;
    },
  });
  return { fetch, seen };
}

/** The mock server's echo route: answers with the request body it parsed. */
async function echoServer() {
  return start({
    routes: [
      { method: 'POST', path: '/echo', limits: [{ algorithm: 'gcra', rate: 1e6, burst: 1e6 }] },
    ],
  });
}

describe('the body a cost function is handed is bounded', () => {
  it(`${MAX} bytes as sent are handed over; one more, none of it; both calls go whole`, async () => {
    const { url, server } = await countingServer();
    servers.push(server);
    const { fetch, seen } = recording();
    // A JSON text of exactly MAX bytes, then one byte longer.
    const json = (n: number) => JSON.stringify({ max_tokens: 5, prompt: 'p'.repeat(n) });
    const at = json(MAX - json(0).length);
    const over = json(MAX - json(0).length + 1);
    expect([Buffer.byteLength(at), Buffer.byteLength(over)]).toEqual([MAX, MAX + 1]);
    for (const body of [at, over]) {
      const res = await fetch(`${url}/upload`, { method: 'POST', body });
      expect(await res.text()).toBe(String(Buffer.byteLength(body)));
    }
    expect(seen[0]?.body).toBe(at);
    expect(seen[0]?.json).toMatchObject({ max_tokens: 5 });
    // Above the bound: no body, not its first MAX bytes (which would not parse, or parse wrong).
    expect(seen[1]).toEqual({ body: undefined, json: undefined });
    await fetch.close();
  });

  it('a stream is not read: the function gets no body, the server gets all of it', async () => {
    const server = await echoServer();
    const { fetch, seen } = recording();
    const text = JSON.stringify({ max_tokens: 9 });
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode(text));
        c.close();
      },
    });
    const res = await fetch(`${server.url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { body: unknown }).body).toEqual({ max_tokens: 9 });
    expect(seen).toEqual([{ body: undefined, json: undefined }]);
    await fetch.close();
  });

  it('FormData and a Blob are not read: no body, and each call goes whole', async () => {
    const { url, server } = await countingServer();
    servers.push(server);
    const { fetch, seen } = recording();
    const form = new FormData();
    form.set('max_tokens', '5');
    const blob = new Blob(['{"max_tokens":5}'], { type: 'application/json' });
    const formRes = await fetch(`${url}/form`, { method: 'POST', body: form });
    expect(Number(await formRes.text())).toBeGreaterThan(0);
    const blobRes = await fetch(`${url}/blob`, { method: 'POST', body: blob });
    expect(await blobRes.text()).toBe(String(blob.size));
    expect(seen).toEqual([
      { body: undefined, json: undefined },
      { body: undefined, json: undefined },
    ]);
    await fetch.close();
  });

  it('invalid JSON: no JSON for the function (its text is still the body), and the call goes', async () => {
    const server = await echoServer();
    const { fetch, seen } = recording();
    const text = '{"max_tokens": 4';
    const res = await fetch(`${server.url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: text,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { body: unknown }).body).toBe(text);
    expect(seen).toEqual([{ body: text, json: undefined }]);
    await fetch.close();
  });
});

/**
 * Issue 24, item 6: `concurrency` freed a request's slot when its headers arrived, not when its
 * body ended. With `concurrency: 2`, six calls whose bodies took half a second each were all in
 * flight at once on the server; against the mock server's own concurrency limit of 2 they got
 * 429s, and event streams were not limited at all. Over real HTTP on loopback: the mock server
 * with a concurrency limit of 2 and slow bodies (`slowBody`) answers 0 x 429 to the client's six
 * calls, read whole or as a stream, with the client's cap and with only the limit the server
 * declares; a plain server counting the event streams it has open sees one at a time with
 * `concurrency: 1`. The grace for a body nobody reads is tested at its bound on fake time
 * (`test/client/body-slots.test.ts`); the undici interceptor in `test/undici/request.int.test.ts`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { LimitedClient, type LimitedClientOptions, wrapFetch } from '../../src/index.js';
import { closeAll, start } from '../client/integration/server.js';

const plain: Server[] = [];
afterAll(async () => {
  await closeAll();
  await Promise.all(
    plain.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

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

type Get = (path: string) => Promise<Response>;

/** The two ways to call through the client, on `url` with `options`. */
const callers: [string, (url: string, options: LimitedClientOptions) => Get][] = [
  [
    'wrapFetch',
    (url, options) => {
      const f = wrapFetch(fetch, options);
      return (path) => f(url + path);
    },
  ],
  [
    'LimitedClient',
    (url, options) => {
      const client = new LimitedClient(url, options);
      return (path) => client.get(path);
    },
  ],
];

/** Reads `r`'s body chunk by chunk from its stream, calling `each` with every chunk's text. */
async function readChunks(r: Response, each: (text: string) => void = () => {}): Promise<string> {
  const reader = (r.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    const chunk = decoder.decode(next.value, { stream: true });
    each(chunk);
    text += chunk;
  }
  return text;
}

/** Reads a body whole, or as a stream chunk by chunk. */
const readers: [string, (r: Response) => Promise<string>][] = [
  ['read whole', (r) => r.text()],
  ['read as a stream', (r) => readChunks(r)],
];

describe.concurrent.each(callers)('%s: a slot lasts as long as its body', (_name, make) => {
  it.each(readers)(
    'six calls with concurrency: 2 against a limit of 2 with slow bodies (%s): 0 x 429',
    async (_reading, read) => {
      const server = await slowSlots();
      const get = make(server.url, { concurrency: 2 });
      const bodies = await Promise.all(
        Array.from({ length: 6 }, async (_, i) => {
          const r = await get(`/items/${i}`);
          expect(r.status).toBe(200);
          return read(r);
        }),
      );
      expect(bodies).toEqual(Array(6).fill(BODY));
      expect(server.stats().rejected).toBe(0);
      expect(server.stats().admitted).toBe(6);
    },
  );

  it('without a cap of its own, the limit the server declares holds until each body ends: 0 x 429', async () => {
    const server = await slowSlots();
    const get = make(server.url, {});
    const bodies = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => (await get(`/free/${i}`)).text()),
    );
    expect(bodies).toEqual(Array(6).fill(BODY));
    expect(server.stats().rejected).toBe(0);
  });
});

describe('event streams and bodyless answers', () => {
  it('concurrency: 1 keeps one event stream open at a time on the server', async () => {
    let open = 0;
    let most = 0;
    const server = createServer(async (_req, res) => {
      open++;
      most = Math.max(most, open);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let n = 1; n <= 3; n++) {
        res.write(`data: {"n":${n}}\n\n`);
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      res.end();
      open--;
    });
    plain.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const f = wrapFetch(fetch, { concurrency: 1 });
    const streams = await Promise.all(
      Array.from({ length: 3 }, async (_, i) => {
        const r = await f(`${url}/v1/chat/${i}`);
        return (await readChunks(r)).split('\n\n').length - 1;
      }),
    );
    expect(streams).toEqual([3, 3, 3]);
    expect(most).toBe(1);
  });

  it('HEAD and 204 give the slot back with their headers; an unread body keeps it', async () => {
    const server = await start({
      routes: [{ path: '/none', response: { status: 204 } }, { path: '*' }],
    });
    const client = new LimitedClient(server.url, { concurrency: 1 });
    const inFlight = () => client.stats().hosts[server.url]?.inFlight;
    await client.head('/x');
    expect(inFlight()).toBe(0);
    await client.get('/none');
    expect(inFlight()).toBe(0);
    const unread = await client.get('/x');
    expect(inFlight()).toBe(1);
    await unread.text();
    expect(inFlight()).toBe(0);
    await client.close();
  });
});

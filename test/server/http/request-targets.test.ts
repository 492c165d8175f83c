/**
 * Request targets in every form HTTP/1.1 allows (RFC 9112 §3.2), over raw sockets: a route and its
 * limits see the same path whichever form the client wrote it in.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../../src/server/index.js';
import { FakeClock } from './helpers.js';
import { get, RawConnection, rawRequest } from './raw.js';

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start() {
  server = await createMockServer({
    clock: new FakeClock(),
    routes: [
      {
        method: 'GET',
        path: '/items/:id',
        limits: [{ algorithm: 'fixed-window', limit: 1, windowMs: 60_000, name: 'items' }],
      },
      { path: '*', name: 'catch-all' },
    ],
  });
  return server;
}

describe('request targets', () => {
  it('routes an absolute-form target on its path, so its limit holds', async () => {
    const s = await start();
    const connection = await RawConnection.open(s.port);
    connection.write(
      get('http://h/items/1') + get('http://h.example:8080/items/1?x=1') + get('HTTP://H/items/1'),
    );
    const responses = await connection.waitFor(3);
    connection.destroy();
    expect(responses.map((r) => r.status)).toEqual([200, 429, 429]);
    expect(JSON.parse(responses[0]?.body ?? '')).toMatchObject({
      route: 'GET /items/:id',
      path: '/items/1',
      params: { id: '1' },
    });
    expect(s.stats().routes['GET /items/:id']).toMatchObject({ admitted: 1, rejected: 2 });
    expect(s.stats().routes['catch-all']?.admitted).toBe(0);
  });

  it('reads the query of an absolute-form target, and an empty path as /', async () => {
    const s = await start();
    const [withQuery, root] = await Promise.all([
      rawRequest(s.port, get('http://h/other?a=1&b=2')),
      rawRequest(s.port, get('http://h')),
    ]);
    expect(JSON.parse(withQuery[0]?.body ?? '')).toMatchObject({
      path: '/other',
      query: { a: '1', b: '2' },
    });
    expect(JSON.parse(root[0]?.body ?? '')).toMatchObject({ path: '/' });
  });

  it('answers 400 to a target in no form a route can match, without running a route', async () => {
    const s = await start();
    // Node's parser refuses some of these itself (a 400 with no body); the server the rest.
    for (const target of ['h.example:443', 'items/1', 'http:/items/1']) {
      const [response] = await rawRequest(s.port, get(target));
      expect({ target, status: response?.status }).toEqual({ target, status: 400 });
    }
    for (const target of ['ftp://h/items/1', 'http:///items/1', '*']) {
      const [response] = await rawRequest(s.port, get(target));
      expect({ target, status: response?.status }).toEqual({ target, status: 400 });
      expect(JSON.parse(response?.body ?? '')).toMatchObject({ error: 'bad_request_target' });
    }
    expect(s.stats()).toMatchObject({ admitted: 0, rejected: 0 });
  });

  it('normalises the path, so that no other spelling of a limited path escapes its limit', async () => {
    const s = await start();
    const connection = await RawConnection.open(s.port);
    connection.write(
      get('/items/1') + get('/%69tems/1') + get('/x/../items/1') + get('http://h/./items/%31'),
    );
    const responses = await connection.waitFor(4);
    connection.destroy();
    expect(responses.map((r) => r.status)).toEqual([200, 429, 429, 429]);
    expect(s.stats().routes['catch-all']?.admitted).toBe(0);
  });

  it('answers OPTIONS * (asterisk-form) for the server as a whole, with no route and no limit', async () => {
    const s = await start();
    const [response] = await rawRequest(s.port, get('*', [], 'OPTIONS'));
    expect(response?.status).toBe(204);
    expect(s.stats()).toMatchObject({ admitted: 0, rejected: 0 });
  });
});

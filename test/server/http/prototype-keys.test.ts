/**
 * Names that are also properties of `Object.prototype` (`__proto__`, `constructor`, `toString`,
 * `hasOwnProperty`), wherever outside data or a config name becomes a key: route names, path
 * parameters, query parameters, keyed headers, the idempotency header, response headers. Over raw
 * sockets, since fetch refuses some of these header names.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../../src/server/index.js';
import { FakeClock } from './helpers.js';
import { get, type RawResponse, rawRequest } from './raw.js';

const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'] as const;

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Every own property of Object.prototype and what it holds, to compare before and after. */
function prototypeSnapshot(): Map<string, unknown> {
  const snapshot = new Map<string, unknown>();
  for (const name of Object.getOwnPropertyNames(Object.prototype)) {
    const descriptor = Object.getOwnPropertyDescriptor(Object.prototype, name);
    snapshot.set(name, descriptor?.value ?? descriptor?.get);
  }
  return snapshot;
}

function json(response: RawResponse | undefined): Record<string, unknown> {
  return JSON.parse(response?.body ?? 'null') as Record<string, unknown>;
}

describe('keys named like Object.prototype properties', () => {
  it('route names and path parameters stay data, and stats count each route apart', async () => {
    const before = prototypeSnapshot();
    // A JSON config, as the CLI reads it: "__proto__" is an own key there.
    const config = JSON.parse(`{
      "routes": [
        { "path": "/a/:__proto__/:constructor", "name": "__proto__",
          "response": { "headers": { "__proto__": "p", "constructor": "c" } } },
        { "path": "/b", "name": "constructor" },
        { "path": "/c", "name": "toString" },
        { "path": "/d", "name": "hasOwnProperty" }
      ]
    }`);
    server = await createMockServer({ ...config, clock: new FakeClock() });
    const [a] = await rawRequest(server.port, get('/a/x/y?__proto__=1&toString=2'));
    expect(a?.status).toBe(200);
    expect(a?.headers.get('__proto__')).toBe('p');
    expect(a?.headers.get('constructor')).toBe('c');
    const echo = json(a);
    expect(Object.entries(echo.params as object)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]);
    expect(Object.entries(echo.query as object)).toEqual([
      ['__proto__', '1'],
      ['toString', '2'],
    ]);
    for (const path of ['/b', '/c', '/c', '/d', '/d', '/d']) {
      expect((await rawRequest(server.port, get(path)))[0]?.status).toBe(200);
    }
    const { routes, admitted } = server.stats();
    expect(admitted).toBe(7);
    expect(Object.keys(routes).sort()).toEqual([...NAMES].sort());
    expect(NAMES.map((name) => Object.hasOwn(routes, name) && routes[name]?.admitted)).toEqual([
      1, 1, 2, 3,
    ]);
    expect(prototypeSnapshot()).toEqual(before);
    expect(({} as Record<string, unknown>).admitted).toBeUndefined();
  });

  it('a keyed header named like a prototype property keys requests by its value', async () => {
    const before = prototypeSnapshot();
    server = await createMockServer({
      clock: new FakeClock(),
      routes: NAMES.map((name) => ({
        path: `/${name}`,
        limits: [
          {
            algorithm: 'fixed-window' as const,
            limit: 1,
            windowMs: 60_000,
            key: { header: name },
          },
        ],
      })),
    });
    const lower = (name: string) => name.toLowerCase();
    for (const name of NAMES) {
      const statuses: number[] = [];
      // Two distinct values, each within its limit of 1; the third repeats the first; the
      // fourth (no header) and fifth (no header) share the empty value.
      for (const value of ['a', 'b', 'a', undefined, undefined]) {
        const header = value === undefined ? [] : [`${name}: ${value}`];
        const [response] = await rawRequest(server.port, get(`/${name}`, header));
        statuses.push(response?.status ?? 0);
      }
      expect({ name, statuses }).toEqual({ name, statuses: [200, 200, 429, 200, 429] });
      expect(Object.keys(server.stats().routes[`* /${name}`]?.keys ?? {}).sort()).toEqual(
        [`${lower(name)}:`, `${lower(name)}:a`, `${lower(name)}:b`].sort(),
      );
    }
    expect(prototypeSnapshot()).toEqual(before);
  });

  it('an idempotency header named __proto__ or constructor is read from the request', async () => {
    for (const name of ['__proto__', 'constructor']) {
      server = await createMockServer({
        clock: new FakeClock(),
        idempotency: { header: name },
        routes: [{ method: 'POST', path: '/pay' }],
      });
      const post = (body: string, key?: string) =>
        rawRequest(
          (server as MockServer).port,
          [
            'POST /pay HTTP/1.1',
            'Host: h',
            `Content-Length: ${body.length}`,
            ...(key === undefined ? [] : [`${name}: ${key}`]),
            '',
            body,
          ].join('\r\n'),
        );
      // Without the header, two different bodies are two requests, neither a replay nor a 422.
      expect((await post('one'))[0]?.status).toBe(200);
      expect((await post('two'))[0]?.status).toBe(200);
      // With it, the second of one key is a replay.
      expect((await post('three', 'k'))[0]?.status).toBe(200);
      const [replay] = await post('three', 'k');
      expect(replay?.headers.get('idempotent-replayed')).toBe('true');
      expect(server.stats()).toMatchObject({ sideEffects: 3 });
      await server.close();
      server = undefined;
    }
  });
});

/**
 * The `cors` option: what a browser needs to call the mock server from another origin and read
 * what it says about its limits (issue 14, item 3). Node's fetch enforces no CORS, so every field
 * the server sends is visible here; the browser's side is test/runtimes/chromium.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMockServer,
  type MockServer,
  type MockServerConfig,
} from '../../../src/server/index.js';
import { isInvalidOptionError } from '../../../src/shared/errors.js';

/** What the routes of `start` may send: the IETF pair (their family), then the server's own. */
const ALL_FIELDS = [
  'RateLimit-Policy',
  'RateLimit',
  'Retry-After',
  'Idempotent-Replayed',
  'Date',
  'Idempotency-Key',
];

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(cors: MockServerConfig['cors'], extra: Partial<MockServerConfig> = {}) {
  server = await createMockServer({
    ...(cors === undefined ? {} : { cors }),
    routes: [
      {
        method: 'GET',
        path: '/one',
        limits: [{ algorithm: 'fixed-window', limit: 1, windowMs: 60_000, name: 'one' }],
        response: { headers: { 'X-Request-Id': 'r1' } },
      },
      { method: 'POST', path: '/pay' },
    ],
    ...extra,
  });
  return server;
}

function exposed(response: Response): string[] {
  return (response.headers.get('access-control-expose-headers') ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

function preflight(url: string, requestHeaders?: string, method = 'POST'): Promise<Response> {
  const headers: Record<string, string> = {
    origin: 'http://page.test',
    'access-control-request-method': method,
  };
  if (requestHeaders !== undefined) headers['access-control-request-headers'] = requestHeaders;
  return fetch(url, { method: 'OPTIONS', headers });
}

describe('cors off (the default)', () => {
  it('sends no CORS field, and an OPTIONS request goes to the routes like any other', async () => {
    const { url } = await start(undefined);
    const response = await fetch(`${url}/one`, { headers: { origin: 'http://page.test' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('access-control-expose-headers')).toBeNull();
    const options = await preflight(`${url}/pay`, 'idempotency-key');
    expect(options.status).toBe(405);
    expect(options.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('cors: true', () => {
  it('lets any origin read every rate-limit field its routes send, Retry-After, the echoed key and the routes own fields', async () => {
    const { url } = await start(true);
    const ok = await fetch(`${url}/one`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    expect(ok.headers.get('vary')).toBeNull();
    expect(exposed(ok)).toEqual([...ALL_FIELDS, 'X-Request-Id']);
    // The fields listed are the ones sent: the IETF pair here.
    expect(ok.headers.get('ratelimit-policy')).toContain('"one"');
  });

  it('puts the fields on a 429 (with its Retry-After) and on the server own errors', async () => {
    const { url } = await start(true);
    await (await fetch(`${url}/one`)).arrayBuffer();
    const refused = await fetch(`${url}/one`);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    expect(exposed(refused)).toContain('Retry-After');
    const missing = await fetch(`${url}/nowhere`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers a preflight at once: 204, the method and headers asked, Idempotency-Key, no limit spent', async () => {
    const instance = await start(true);
    const answer = await preflight(`${instance.url}/one`, 'content-type, X-Api-Key', 'GET');
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-allow-methods')).toBe('GET');
    expect(answer.headers.get('access-control-allow-headers')).toBe(
      'Idempotency-Key, content-type, X-Api-Key',
    );
    expect(answer.headers.get('access-control-max-age')).toBe('600');
    expect(answer.headers.get('vary')).toBe(
      'Access-Control-Request-Method, Access-Control-Request-Headers',
    );
    // Counted nowhere: the route's one request per minute is still there.
    expect(instance.stats()).toMatchObject({ admitted: 0, rejected: 0 });
    expect((await fetch(`${instance.url}/one`)).status).toBe(200);
  });

  it('answers a preflight for a path no route has (the request itself then gets its 404)', async () => {
    const { url } = await start(true);
    expect((await preflight(`${url}/nowhere`)).status).toBe(204);
  });

  it('leaves an OPTIONS request that is not a preflight (no Origin or no method asked) to the routes', async () => {
    const { url } = await start(true);
    const bare = await fetch(`${url}/pay`, {
      method: 'OPTIONS',
      headers: { 'access-control-request-method': 'POST' },
    });
    expect(bare.status).toBe(405);
    expect(bare.headers.get('access-control-allow-origin')).toBe('*');
  });

  it(`echoes at most 64 asked header names besides the idempotency header, and only tokens`, async () => {
    const { url } = await start(true);
    const asked = Array.from({ length: 100 }, (_, i) => `x-h${i}`);
    const answer = await preflight(url, ['bad name', 'x\u00e9', ...asked].join(', '));
    const allowed = answer.headers.get('access-control-allow-headers')?.split(', ') ?? [];
    expect(allowed).toEqual(['Idempotency-Key', ...asked.slice(0, 64)]);
  });

  it('allows the configured idempotency header', async () => {
    const { url } = await start(true, { idempotency: { header: 'X-Idem' } });
    const answer = await preflight(`${url}/pay`, 'x-idem');
    expect(answer.headers.get('access-control-allow-headers')).toBe('X-Idem');
  });
});

describe('cors options', () => {
  it('exposeHeaders: false allows the origin and exposes nothing: a page sees status codes only', async () => {
    const { url } = await start({ exposeHeaders: false });
    const response = await fetch(`${url}/one`);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-expose-headers')).toBeNull();
    // The server still sends its fields; a browser hides them from the page.
    expect(response.headers.get('ratelimit')).not.toBeNull();
  });

  it('exposeHeaders: a list exposes exactly the names listed', async () => {
    const { url } = await start({ exposeHeaders: ['Retry-After', 'Retry-After'] });
    expect(exposed(await fetch(`${url}/one`))).toEqual(['Retry-After']);
  });

  it('origin: one origin, with Vary: Origin; maxAgeSeconds', async () => {
    const { url } = await start({ origin: 'http://localhost:5173', maxAgeSeconds: 5 });
    const response = await fetch(`${url}/one`);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(response.headers.get('vary')).toBe('Origin');
    const answer = await preflight(`${url}/pay`);
    expect(answer.headers.get('access-control-max-age')).toBe('5');
  });

  it.each([
    ['yes', 'cors', 'must be true, false or { origin?, exposeHeaders?, maxAgeSeconds? }'],
    [{ origin: 'localhost' }, 'cors.origin', "must be '*' or an origin"],
    [{ exposeHeaders: ['bad name'] }, 'cors.exposeHeaders[0]', 'must be a header name'],
    [{ maxAgeSeconds: -1 }, 'cors.maxAgeSeconds', 'got -1'],
    [{ credentials: true }, 'cors.credentials', 'is not a known option'],
  ])('refuses cors %j (%s)', async (cors, option, message) => {
    const error = await start(cors as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isInvalidOptionError(error)).toBe(true);
    if (!isInvalidOptionError(error)) return;
    expect(error.option).toBe(option);
    expect(error.message).toContain(message);
  });
});

describe('cors with the budget-naming families (issue 26)', () => {
  it.each(['github', 'discord'] as const)(
    '%s: every field of an answer, a 429 and a global 429 is exposed',
    async (family) => {
      const { url } = await start(true, {
        limits: [{ algorithm: 'fixed-window', limit: 3, windowMs: 60_000, name: 'global' }],
        routes: [
          {
            path: '/x/:id',
            headers: family,
            limits: [
              {
                algorithm: 'fixed-window',
                limit: 1,
                windowMs: 60_000,
                key: { param: 'id' },
                resource: 'core',
              },
            ],
          },
        ],
      });
      const sent = new Set<string>();
      // Admitted, refused by the route's budget, admitted, then refused by the server-wide limit.
      for (const [path, status] of [
        ['/x/1', 200],
        ['/x/1', 429],
        ['/x/2', 200],
        ['/x/3', 200],
        ['/x/4', 429],
      ] as const) {
        const response = await fetch(`${url}${path}`);
        await response.arrayBuffer();
        expect(response.status).toBe(status);
        const names = exposed(response).map((name) => name.toLowerCase());
        response.headers.forEach((_value, name) => {
          sent.add(name);
          if (name.startsWith('access-control-') || /^(content-|connection|keep-alive)/.test(name))
            return;
          expect(names, `${family}: ${name}`).toContain(name);
        });
      }
      if (family === 'discord') expect(sent).toContain('x-ratelimit-global');
      else expect(sent).toContain('x-ratelimit-resource');
    },
  );
});

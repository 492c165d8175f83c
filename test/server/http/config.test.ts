/**
 * Configuration mistakes: each is an InvalidOptionError naming the field, raised before anything
 * listens.
 */
import { describe, expect, it } from 'vitest';
import { createMockServer } from '../../../src/server/index.js';
import { isInvalidOptionError } from '../../../src/shared/errors.js';

async function problem(config: unknown): Promise<{ option: string; message: string }> {
  try {
    const server = await createMockServer(config as never);
    await server.close();
  } catch (error) {
    if (isInvalidOptionError(error)) return { option: error.option, message: error.message };
    throw error;
  }
  throw new Error('the config was accepted');
}

const route = (extra: object = {}) => ({ path: '/x', ...extra });
const fw = () => ({ algorithm: 'fixed-window', limit: 5, windowMs: 5000 });

describe('config validation', () => {
  it.each([
    [{}, 'routes', 'must be an array of routes'],
    [{ routes: [] }, 'routes', 'must hold at least one route'],
    [{ routes: [route()], prot: 1 }, 'prot', 'is not a known option'],
    [{ routes: [route()], port: 70_000 }, 'port', 'must be an integer from 0 to 65535, got 70000'],
    [{ routes: [{ path: 'x' }] }, 'routes[0].path', "must start with '/'"],
    [{ routes: [route({ cost: 0 })] }, 'routes[0].cost', 'must be a positive integer, got 0'],
    [
      { routes: [route({ headers: 'open-ai' })] },
      'routes[0].headers',
      "'x-ratelimit', 'openai', 'github', 'discord' or",
    ],
    // Issue 26: the budget-naming options.
    [
      { routes: [{ path: '/channels/:channel', limits: [{ ...fw(), key: { param: 'guild' } }] }] },
      'routes[0].limits[0].key.param',
      'is "guild", not a parameter of the path "/channels/:channel"',
    ],
    [
      { routes: [{ path: '/c/:c', limits: [{ ...fw(), key: ['ip', { param: 'x' }] }] }] },
      'routes[0].limits[0].key[1].param',
      'not a parameter of the path',
    ],
    [
      { routes: [route({ limits: [{ ...fw(), key: { json: 'a..b' } }] })] },
      'routes[0].limits[0].key.json',
      'must be a field name or a dotted path',
    ],
    [
      { routes: [route({ limits: [{ ...fw(), resource: 'core search' }] })] },
      'routes[0].limits[0].resource',
      'must be 1 to 64 printable ASCII characters without spaces',
    ],
    [
      { routes: [route({ limits: [{ ...fw(), partitionKey: 'yes' }] })] },
      'routes[0].limits[0].partitionKey',
      'must be true or false',
    ],
    [{ routes: [route({ rejectStatus: 503 })] }, 'routes[0].rejectStatus', 'must be 429 or 403'],
    [
      { routes: [route({ limits: [{ algorithm: 'token-buckets', capacity: 1 }] })] },
      'routes[0].limits[0].algorithm',
      'must be one of "fixed-window", "sliding-log"',
    ],
    [
      { routes: [route({ limits: [{ algorithm: 'fixed-window', limit: 5, windowMs: -1 }] })] },
      'routes[0].limits[0].windowMs',
      'must be a positive integer, got -1',
    ],
    [
      { routes: [route({ limits: [{ algorithm: 'fixed-window', limit: 5 }] })] },
      'routes[0].limits[0].windowMs',
      'got nothing',
    ],
    [
      { routes: [route({ limits: [{ algorithm: 'gcra', rate: 0, burst: 1 }] })] },
      'routes[0].limits[0].rate',
      'must be a positive, finite number, got 0',
    ],
    [
      {
        routes: [
          route({
            limits: [{ algorithm: 'token-bucket', capacity: 1, refillPerSecond: 1, windowMs: 1 }],
          }),
        ],
      },
      'routes[0].limits[0].windowMs',
      'is not a known option',
    ],
    [
      { routes: [route({ limits: [{ algorithm: 'concurrency', limit: 2, key: 'user' }] })] },
      'routes[0].limits[0].key',
      "must be 'ip', 'global', { header }, { param }, { json } or an array of those",
    ],
    [
      {
        routes: [
          route({
            limits: [{ algorithm: 'concurrency', limit: 2, key: { header: 'bad header' } }],
          }),
        ],
      },
      'routes[0].limits[0].key.header',
      'must be a header name, got "bad header"',
    ],
    [{ routes: [route({ headers: 'draft-8' })] }, 'routes[0].headers', "must be 'ietf', 'draft-7'"],
    [
      { routes: [route({ faults: { unavailable: { probability: 2 } } })] },
      'routes[0].faults.unavailable.probability',
      'must be a number from 0 to 1, got 2',
    ],
    [
      { routes: [route({ faults: { reset: { when: 'during' } } })] },
      'routes[0].faults.reset.when',
      "must be 'before-handler' or 'after-handler'",
    ],
    [
      { routes: [route({ faults: { latencyMs: { min: 5, max: 1 } } })] },
      'routes[0].faults.latencyMs',
      'has min 5 above max 1',
    ],
    [{ routes: [route(), route()] }, 'routes[1]', 'is labelled "* /x" like routes[0]'],
    [{ routes: [route()], trustProxy: 'yes' }, 'trustProxy', 'must be true, false or a number'],
    [{ routes: [route()], clock: { now: 1 } }, 'clock', 'must be a Clock'],
    // Values Node refuses in a header field: refused here, rather than a 500 on every request.
    ...['a\r\nSet-Cookie: x=1', 'a\nb', 'a\rb', 'nul\u0000', 'del\u007f', 'euro \u20ac'].map(
      (value): [object, string, string] => [
        { routes: [route({ response: { headers: { 'X-Ok': 'fine', 'X-Bad': value } } })] },
        'routes[0].response.headers["X-Bad"]',
        'must be a header value (no CR, LF or other control characters',
      ],
    ),
    [
      { routes: [route({ response: { headers: { 'Content-Length': '5' } } })] },
      'routes[0].response.headers["Content-Length"]',
      'is set by the server',
    ],
  ])('%j -> %s', async (config, option, message) => {
    const found = await problem(config);
    expect(found.option).toBe(option);
    expect(found.message).toContain(message);
  });

  it('refuses a cost that no limit of the route can ever admit, naming both', async () => {
    const found = await problem({
      limits: [{ algorithm: 'gcra', rate: 10, burst: 4 }],
      routes: [route({ cost: 6 })],
    });
    expect(found).toEqual({
      option: 'routes[0].cost',
      message:
        'invalid option routes[0].cost: is 6, more than the 5 units limits[0] can ever hold: every request would be rejected',
    });
  });

  const window = { algorithm: 'fixed-window', limit: 600, windowMs: 10_000 };
  it.each([
    [{ ...window, unit: 'Tokens' }, 'routes[0].limits[0].unit', 'must be lower-case letters'],
    [{ ...window, unit: 'x'.repeat(33) }, 'routes[0].limits[0].unit', 'at most 32'],
    [
      { algorithm: 'concurrency', limit: 2, unit: 'tokens' },
      'routes[0].limits[0].unit',
      'is "tokens", but a concurrency limit counts requests in flight ("concurrent-requests")',
    ],
    [{ ...window, cost: 0 }, 'routes[0].limits[0].cost', 'must be a positive integer, got 0'],
    [
      { ...window, cost: 'max_tokens' },
      'routes[0].limits[0].cost',
      'must be a positive integer or { header?, json?, default? }',
    ],
    [{ ...window, cost: {} }, 'routes[0].limits[0].cost', 'must name a header, a json field'],
    [
      { ...window, cost: { json: 'max_tokens', deafult: 1 } },
      'routes[0].limits[0].cost.deafult',
      'is not a known option',
    ],
    [
      { ...window, cost: { header: 'x token' } },
      'routes[0].limits[0].cost.header',
      'must be a header name',
    ],
    [
      { ...window, cost: { json: 'a.b.c.d.e.f.g.h.i' } },
      'routes[0].limits[0].cost.json',
      'a dotted path of at most 8 segments',
    ],
    [{ ...window, cost: { json: 'a..b' } }, 'routes[0].limits[0].cost.json', 'dotted path'],
    [
      { ...window, cost: { json: 'x'.repeat(65) } },
      'routes[0].limits[0].cost.json',
      'of 1 to 64 characters',
    ],
    [
      { ...window, cost: { json: 'n', default: 0 } },
      'routes[0].limits[0].cost.default',
      'must be a positive integer',
    ],
    [
      { ...window, cost: { json: 'n', default: 601 } },
      'routes[0].limits[0].cost.default',
      'is 601, more than the 600 units routes[0].limits[0] can ever hold',
    ],
    [
      { ...window, cost: 700 },
      'routes[0].limits[0].cost',
      'is 700, more than the 600 units routes[0].limits[0] can ever hold',
    ],
  ])('a limit %j -> %s', async (limit, option, message) => {
    const found = await problem({ routes: [route({ limits: [limit] })] });
    expect(found.option).toBe(option);
    expect(found.message).toContain(message);
  });

  it('a route cost above a limit is fine when that limit has a cost of its own', async () => {
    const server = await createMockServer({
      routes: [
        route({
          cost: 20,
          limits: [
            { algorithm: 'fixed-window', limit: 10, windowMs: 1000, cost: 1 },
            { algorithm: 'fixed-window', limit: 100, windowMs: 1000, cost: { json: 'n' } },
          ],
        }),
      ],
    });
    await server.close();
    const found = await problem({
      routes: [
        route({
          cost: 20,
          limits: [{ algorithm: 'fixed-window', limit: 10, windowMs: 1000, cost: { json: 'n' } }],
        }),
      ],
    });
    expect(found.option).toBe('routes[0].cost');
  });

  it('refuses two limits of one route with one name, the server-wide ones included', async () => {
    const found = await problem({
      limits: [{ algorithm: 'concurrency', limit: 3, name: 'main' }],
      routes: [route({ limits: [{ algorithm: 'concurrency', limit: 2, name: 'main' }] })],
    });
    expect(found.option).toBe('routes[0].limits[0].name');
    expect(found.message).toContain('already the name of limits[0]');
  });
});

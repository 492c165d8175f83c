/**
 * One HTTP server of the server benchmark, run in a process of its own so that the load generator
 * does not share its event loop:
 *
 *   fork('test/bench/lib/http-contender.ts', [name], { execArgv: ['--import', 'tsx'] })
 *
 * Every contender answers `GET /x` with the JSON `{"ok":true}`; the limited ones put the same limit
 * on it, a fixed window of {@link LIMIT} per minute per client IP, with the IETF header fields,
 * high enough that every request is admitted, so that what is measured is the limiter's cost.
 */
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { rateLimit } from 'express-rate-limit';
import { createMockServer } from '../../../src/server/index.js';

/** Requests per minute per IP: never reached. */
export const LIMIT = 1_000_000_000;
const WINDOW_MS = 60_000;

/** The contenders, by name. */
export const CONTENDERS = [
  'mock server',
  'mock server, no limit',
  'express + express-rate-limit',
  'fastify + @fastify/rate-limit',
] as const;

export type ContenderName = (typeof CONTENDERS)[number];

/**
 * The mock server's configuration: `GET /x` answering `{"ok":true}`, with the fixed window when
 * `limited`. Plain JSON (`bench:in-situ` hands it to a process of its own).
 */
export function mockServerConfig(limited: boolean) {
  return {
    routes: [
      {
        method: 'GET',
        path: '/x',
        response: { body: { ok: true } },
        limits: limited
          ? [
              {
                algorithm: 'fixed-window' as const,
                limit: LIMIT,
                windowMs: WINDOW_MS,
                name: 'per-ip',
              },
            ]
          : [],
      },
    ],
  };
}

async function start(name: ContenderName): Promise<{ port: number; close(): Promise<void> }> {
  switch (name) {
    case 'mock server':
    case 'mock server, no limit': {
      const server = await createMockServer(mockServerConfig(name === 'mock server'));
      return { port: server.port, close: () => server.close() };
    }
    case 'express + express-rate-limit': {
      const { default: express } = await import('express');
      const app = express();
      app.use(
        rateLimit({
          windowMs: WINDOW_MS,
          limit: LIMIT,
          standardHeaders: 'draft-8',
          legacyHeaders: false,
          identifier: 'per-ip',
        }),
      );
      app.get('/x', (_req, res) => {
        res.json({ ok: true });
      });
      const server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      return {
        port: (server.address() as AddressInfo).port,
        close: () => new Promise((resolve) => server.close(() => resolve())),
      };
    }
    case 'fastify + @fastify/rate-limit': {
      const { default: Fastify } = await import('fastify');
      const { default: fastifyRateLimit } = await import('@fastify/rate-limit');
      const app = Fastify();
      await app.register(fastifyRateLimit, { max: LIMIT, timeWindow: WINDOW_MS });
      app.get('/x', async () => ({ ok: true }));
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
    }
  }
}

/**
 * Run as a script (forked, with an IPC channel): start the contender named on the command line,
 * send `{ port }`; on `'measure'` start counting CPU time; on `'stop'` send `{ cpuMicros }` (user
 * and system time since `'measure'`) and exit.
 */
async function main(): Promise<void> {
  const name = process.argv[2] as ContenderName;
  if (!CONTENDERS.includes(name) || process.send === undefined) {
    console.error(`usage: fork with an IPC channel, one of ${CONTENDERS.join(', ')}`);
    process.exit(2);
  }
  const server = await start(name);
  let since = process.cpuUsage();
  process.on('message', (message) => {
    if (message === 'measure') since = process.cpuUsage();
    if (message === 'stop') {
      const used = process.cpuUsage(since);
      process.send?.({ cpuMicros: used.user + used.system });
      server.close().then(() => process.exit(0));
    }
  });
  process.send({ port: server.port });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();

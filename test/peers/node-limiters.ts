/**
 * The npm rate limiters users put in front of their Node APIs, each started in-process on a
 * loopback port with the configuration its README shows, limited to `limit` requests per
 * `windowMs` per client IP (all of ours come from 127.0.0.1: one client), and answering `ok`:
 *
 * - express-rate-limit 8 (`standardHeaders: 'draft-8'`, `legacyHeaders: false`, its README's
 *   setup): the IETF `RateLimit` / `RateLimit-Policy` fields and `Retry-After` on a 429;
 * - @fastify/rate-limit 10 (defaults): `x-ratelimit-limit / -remaining / -reset` (seconds to go)
 *   and `retry-after` on a 429;
 * - koa-ratelimit 6 (memory driver): `X-RateLimit-Reset` as fractional epoch seconds (microsecond
 *   digits) and `Retry-After` truncated to whole seconds, so `Retry-After: 0` for a window under a
 *   second to go;
 * - hono-rate-limiter 0.5 on @hono/node-server, `standardHeaders: 'draft-6'` (its default:
 *   `RateLimit-Limit / -Remaining / -Reset`) or `'draft-7'` (the combined `RateLimit` field),
 *   both with `RateLimit-Policy` and `Retry-After` on a 429.
 *
 * Every one is a fixed window that starts at the client's first request. Statuses are counted as
 * each response is sent.
 */
import type { Server } from 'node:http';
import fastifyRateLimit from '@fastify/rate-limit';
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import express from 'express';
import { rateLimit as expressRateLimit } from 'express-rate-limit';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { rateLimiter as honoRateLimiter } from 'hono-rate-limiter';
import Koa from 'koa';
import koaRatelimit from 'koa-ratelimit';
import { listening } from './counting.js';

/** The limit every server enforces. */
export interface WindowLimit {
  /** Requests per window and client. @default 10 */
  limit?: number;
  /** Window length, in milliseconds. @default 1000 */
  windowMs?: number;
}

/** express-rate-limit 8 as its README sets it up (IETF draft-8 headers, no legacy ones). */
export function startExpress({ limit = 10, windowMs = 1000 }: WindowLimit = {}) {
  const app = express();
  app.use(expressRateLimit({ windowMs, limit, standardHeaders: 'draft-8', legacyHeaders: false }));
  app.get('/{*path}', (_request, response) => {
    response.send('ok');
  });
  return listening('express-rate-limit (draft-8)', app.listen(0, '127.0.0.1'));
}

/** @fastify/rate-limit 10 with its defaults (x-ratelimit-* headers). */
export async function startFastify({ limit = 10, windowMs = 1000 }: WindowLimit = {}) {
  const app = Fastify();
  await app.register(fastifyRateLimit, { max: limit, timeWindow: windowMs });
  app.get('/*', async () => 'ok');
  await app.listen({ port: 0, host: '127.0.0.1' });
  return listening('@fastify/rate-limit', app.server, () => app.close());
}

/** koa-ratelimit 6, memory driver: X-RateLimit-* with an epoch reset, Retry-After in whole seconds. */
export function startKoa({ limit = 10, windowMs = 1000 }: WindowLimit = {}) {
  const app = new Koa();
  app.use(koaRatelimit({ driver: 'memory', db: new Map(), duration: windowMs, max: limit }));
  app.use((ctx) => {
    ctx.body = 'ok';
  });
  return listening('koa-ratelimit', app.listen(0, '127.0.0.1'));
}

/** hono-rate-limiter 0.5 on @hono/node-server, with draft-6 or draft-7 headers. */
export function startHono(
  standardHeaders: 'draft-6' | 'draft-7',
  { limit = 10, windowMs = 1000 }: WindowLimit = {},
) {
  const app = new Hono();
  app.use(
    honoRateLimiter({
      windowMs,
      limit,
      standardHeaders,
      keyGenerator: (c) => getConnInfo(c).remote.address ?? '',
    }),
  );
  app.get('*', (c) => c.text('ok'));
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  return listening(`hono-rate-limiter (${standardHeaders})`, server);
}

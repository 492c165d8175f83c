/**
 * The parser against the rate limiters users actually run: express-rate-limit,
 * @fastify/rate-limit, koa-ratelimit and hono-rate-limiter, started in-process on loopback,
 * answering real HTTP requests.
 */
import type { AddressInfo } from 'node:net';
import fastifyRateLimit from '@fastify/rate-limit';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { parseRateLimitHeaders, type RateLimitInfo } from '../../src/index.js';
import { startHono, startKoa } from '../peers/node-limiters.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function expressServer(
  standardHeaders: 'draft-6' | 'draft-7' | 'draft-8',
  legacyHeaders = false,
) {
  const app = express();
  app.use(
    rateLimit({
      windowMs: 60_000,
      limit: 3,
      standardHeaders,
      legacyHeaders,
      identifier: 'three-per-minute',
    }),
  );
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

async function fastifyServer(enableDraftSpec: boolean) {
  const app = Fastify();
  await app.register(fastifyRateLimit, { max: 3, timeWindow: 60_000, enableDraftSpec });
  app.get('/', async () => 'ok');
  await app.listen({ port: 0, host: '127.0.0.1' });
  closers.push(() => app.close());
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/`;
}

/** Sends `n` requests in order and parses every response. */
async function hit(
  url: string,
  n: number,
): Promise<{ status: number; info: RateLimitInfo | undefined }[]> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const response = await fetch(url);
    await response.arrayBuffer();
    out.push({ status: response.status, info: parseRateLimitHeaders(response.headers) });
  }
  return out;
}

function expectCountdown(
  results: { status: number; info: RateLimitInfo | undefined }[],
  source: string,
) {
  expect(results.map((r) => r.status)).toEqual([200, 200, 200, 429]);
  expect(results.map((r) => r.info?.source)).toEqual([source, source, source, source]);
  expect(results.map((r) => r.info?.remaining)).toEqual([2, 1, 0, 0]);
  for (const { info } of results) {
    expect(info?.limit).toBe(3);
    expect(info?.resetMs).toBeGreaterThan(0);
    expect(info?.resetMs).toBeLessThanOrEqual(60_000);
  }
  const rejected = results[3]?.info;
  expect(rejected?.retryAfterMs).toBeGreaterThan(0);
  expect(rejected?.retryAfterMs).toBeLessThanOrEqual(60_000);
}

describe('express-rate-limit 8 (in-process, loopback)', () => {
  it('standardHeaders "draft-8": the IETF fields with a named policy', async () => {
    const results = await hit(await expressServer('draft-8'), 4);
    expectCountdown(results, 'ietf');
    expect(results[0]?.info?.policy).toBe('three-per-minute');
    expect(results[0]?.info?.windowMs).toBe(60_000);
  });

  it('standardHeaders "draft-7": the combined RateLimit dictionary', async () => {
    const results = await hit(await expressServer('draft-7'), 4);
    expectCountdown(results, 'draft-7');
    expect(results[0]?.info?.windowMs).toBe(60_000);
  });

  it('standardHeaders "draft-6": RateLimit-Limit / -Remaining / -Reset', async () => {
    expectCountdown(await hit(await expressServer('draft-6'), 4), 'draft-6');
  });

  it('with legacy X-RateLimit-* alongside, the standard fields win and nothing is counted twice', async () => {
    const results = await hit(await expressServer('draft-8', true), 2);
    expect(results[1]?.info).toMatchObject({ source: 'ietf', remaining: 1 });
    expect(results[1]?.info?.policies).toHaveLength(1);
  });
});

describe('@fastify/rate-limit 10 (in-process, loopback)', () => {
  it('default headers: x-ratelimit-*', async () => {
    expectCountdown(await hit(await fastifyServer(false), 4), 'x-ratelimit');
  });

  it('enableDraftSpec: ratelimit-limit / -remaining / -reset', async () => {
    expectCountdown(await hit(await fastifyServer(true), 4), 'draft-6');
  });
});

describe('koa-ratelimit 6 (in-process, loopback)', () => {
  it('X-RateLimit-* with a fractional epoch reset; Retry-After truncated to whole seconds', async () => {
    const server = await startKoa({ limit: 3, windowMs: 60_000 });
    closers.push(() => server.close());
    const raw: Headers[] = [];
    const results = [];
    for (let i = 0; i < 4; i++) {
      const response = await fetch(`${server.url}/`);
      await response.arrayBuffer();
      raw.push(response.headers);
      results.push({ status: response.status, info: parseRateLimitHeaders(response.headers) });
    }
    // What koa really sends: epoch seconds with microsecond digits, and Retry-After floored.
    expect(raw[0]?.get('x-ratelimit-reset')).toMatch(/^\d{10}\.\d+$/);
    expect(raw[3]?.get('retry-after')).toMatch(/^\d+$/);
    expectCountdown(results, 'x-ratelimit');
  });

  it('a window with under a second to go: Retry-After: 0, and the reset still says when', async () => {
    const server = await startKoa({ limit: 1, windowMs: 900 });
    closers.push(() => server.close());
    await (await fetch(`${server.url}/`)).arrayBuffer();
    const refused = await fetch(`${server.url}/`);
    await refused.arrayBuffer();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('0');
    const info = parseRateLimitHeaders(refused.headers);
    expect(info?.retryAfterMs).toBe(0);
    expect(info?.remaining).toBe(0);
    expect(info?.resetMs).toBeGreaterThan(0);
    expect(info?.resetMs).toBeLessThanOrEqual(900);
  });
});

describe('hono-rate-limiter 0.5 on @hono/node-server (in-process, loopback)', () => {
  for (const family of ['draft-6', 'draft-7'] as const) {
    it(`standardHeaders "${family}", with RateLimit-Policy`, async () => {
      const server = await startHono(family, { limit: 3, windowMs: 60_000 });
      closers.push(() => server.close());
      const results = await hit(`${server.url}/`, 4);
      expectCountdown(results, family);
      expect(results[0]?.info?.windowMs).toBe(60_000);
    });
  }
});

/**
 * LimitedClient against the npm limiters users run in front of Node APIs (10 requests per second
 * window per client, each with the headers it sends by default or by its README), next to ky and
 * a naive retry loop on their own instances (issue 13, item 5). Counts and bounds, never times.
 */
import { describe, it } from 'vitest';
import { compare, expectNeverWorseThanNaive } from './compare.js';
import { startExpress, startFastify, startHono, startKoa } from './node-limiters.js';

const REQUESTS = 50;

describe(`npm limiters, 10 per 1 s window: ${REQUESTS} GETs at 10 in flight`, {
  timeout: 60_000,
}, () => {
  it('koa-ratelimit (Retry-After: 0, fractional epoch reset)', async () => {
    expectNeverWorseThanNaive(await compare(startKoa, REQUESTS), REQUESTS);
  });

  it('hono-rate-limiter, draft-6 headers', async () => {
    expectNeverWorseThanNaive(await compare(() => startHono('draft-6'), REQUESTS), REQUESTS);
  });

  it('hono-rate-limiter, draft-7 headers', async () => {
    expectNeverWorseThanNaive(await compare(() => startHono('draft-7'), REQUESTS), REQUESTS);
  });

  it('express-rate-limit, draft-8 headers', async () => {
    expectNeverWorseThanNaive(await compare(startExpress, REQUESTS), REQUESTS);
  });

  it('@fastify/rate-limit, x-ratelimit-* headers', async () => {
    expectNeverWorseThanNaive(await compare(startFastify, REQUESTS), REQUESTS);
  });
});

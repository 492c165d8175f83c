import { describe, expect, it } from 'vitest';
import { isPushback } from '../../src/client/call/answer.js';
import { planRetry, type RetryInput } from '../../src/client/retry/retry-plan.js';
import { defaultShouldRetry } from '../../src/client/retry/retry-rule.js';
import { parseRateLimitHeaders } from '../../src/headers/index.js';

function input(
  over: Partial<RetryInput> & { status?: number; headers?: Record<string, string> },
): RetryInput {
  const { status, headers, ...rest } = over;
  const response = status === undefined ? undefined : new Response(null, { status, headers });
  const info = headers ? parseRateLimitHeaders(headers, { now: 0 }) : undefined;
  const pushback = status !== undefined && isPushback(status, info);
  return {
    response,
    error: undefined,
    info,
    context: {
      method: 'GET',
      url: 'https://a.com/',
      attempt: 1,
      response,
      retryAfterMs: info?.retryAfterMs,
      pushback,
      unprocessed: pushback,
      idempotent: true,
      hasIdempotencyKey: false,
      keysHonoured: false,
      networkError: false,
    },
    shouldRetry: defaultShouldRetry,
    attempt: 1,
    retries: 3,
    replayable: true,
    maxRetryAfterMs: 60_000,
    deadline: Number.POSITIVE_INFINITY,
    now: 0,
    random: 0.5,
    backoff: { baseDelayMs: 100, maxDelayMs: 10_000 },
    jitter: { ratio: 0.05, maxMs: 1000 },
    pushback,
    ...rest,
  };
}

describe('planRetry', () => {
  it('is final when the rule says so', () => {
    expect(planRetry(input({ status: 404 }))).toEqual({ retry: false });
  });

  it('backs off with full jitter when the server gives no time', () => {
    expect(planRetry(input({ status: 503, attempt: 3 }))).toEqual({
      retry: true,
      delayMs: 200,
      source: 'backoff',
      hold: false,
    });
  });

  it("takes the server's time, with its jitter, before any backoff", () => {
    const plan = planRetry(input({ status: 429, headers: { 'retry-after': '2' } }));
    expect(plan).toEqual({
      retry: true,
      delayMs: 2050,
      serverWaitMs: 2000,
      source: 'retry-after',
      hold: false,
    });
    const reset = planRetry(
      input({
        status: 429,
        headers: { ratelimit: '"p";r=0;t=3', 'ratelimit-policy': '"p";q=5;w=10' },
      }),
    );
    expect(reset).toMatchObject({ retry: true, serverWaitMs: 3000 });
  });

  it('takes Retry-After: 0 as no timing: the reset beside it, else the backoff (learning off)', () => {
    // A retry at once would meet the same refusal: koa-ratelimit answers 0 in a window's last
    // second, and again while a window outlives the reset it announced.
    expect(planRetry(input({ status: 429, headers: { 'retry-after': '0' }, attempt: 2 }))).toEqual({
      retry: true,
      delayMs: 100,
      source: 'backoff',
      hold: false,
    });
    const reset = planRetry(
      input({
        status: 429,
        headers: {
          'retry-after': '0',
          ratelimit: '"p";r=0;t=1',
          'ratelimit-policy': '"p";q=5;w=1',
        },
      }),
    );
    expect(reset).toMatchObject({ retry: true, serverWaitMs: 1000, source: 'retry-after' });
  });

  // Issue 24, item 1: with learning on, a "come back now" retry backed off on its own, outside
  // the host's pace, so 20 callers sent thousands a second to a host that answered it forever.
  it.each([
    ['0', '0'],
    ['0.001', '0.001'],
  ])(
    'with learning on, Retry-After: %s waits for the host pace like a refusal without timing',
    (_n, value) => {
      expect(
        planRetry(
          input({ status: 429, headers: { 'retry-after': value }, attempt: 2, holdUntil: 640 }),
        ),
      ).toEqual({ retry: true, delayMs: 640, source: 'pace', hold: true });
    },
  );

  it("with learning on, reports the host's hold a retry will wait for, drawn when the answer came", () => {
    const held = planRetry(
      input({ status: 429, headers: { 'retry-after': '2' }, now: 10, holdUntil: 2090 }),
    );
    expect(held).toEqual({
      retry: true,
      delayMs: 2080,
      serverWaitMs: 2000,
      source: 'retry-after',
      hold: true,
    });
    // A 429 with no timing: the host's pace (when it next lets a request go), not a backoff the
    // retry would not wait.
    expect(planRetry(input({ status: 429, holdUntil: 1030 }))).toEqual({
      retry: true,
      delayMs: 1030,
      source: 'pace',
      hold: true,
    });
    // A spent policy that gives no reset: the short fallback hold.
    const spent = { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0' };
    expect(planRetry(input({ status: 429, headers: spent, holdUntil: 1030 }))).toEqual({
      retry: true,
      delayMs: 1030,
      source: 'fallback-hold',
      hold: true,
    });
    // Not a pushback: the hold has nothing to do with it.
    expect(planRetry(input({ status: 503, holdUntil: 5000 }))).toMatchObject({
      source: 'backoff',
      hold: false,
    });
  });

  it('says why a wanted retry cannot be made', () => {
    expect(planRetry(input({ status: 503, attempt: 4 }))).toEqual({
      retry: false,
      reason: 'retries-exhausted',
    });
    expect(planRetry(input({ status: 503, replayable: false }))).toEqual({
      retry: false,
      reason: 'body-not-replayable',
    });
    expect(planRetry(input({ status: 429, headers: { 'retry-after': '61' } }))).toEqual({
      retry: false,
      reason: 'retry-after-too-long',
    });
    expect(planRetry(input({ status: 429, headers: { 'retry-after': '60' } }))).toMatchObject({
      retry: true,
    });
    expect(
      planRetry(input({ status: 429, headers: { 'retry-after': '5' }, deadline: 4000 })),
    ).toEqual({
      retry: false,
      reason: 'deadline',
    });
  });
});

/**
 * One documented header block per public API, each test titled with its source. The header names
 * and formats are the provider's own; where its page names the fields without an example, the
 * numbers are ours (said so beside the vector). OpenAI, Anthropic, Discord, Shopify, Azure and
 * GitHub's primary-limit example live in providers.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../src/index.js';

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);

/** The `now`, in epoch milliseconds, that lies `seconds` before a documented Unix reset. */
const secondsBefore = (unixSeconds: number, seconds: number) => (unixSeconds - seconds) * 1000;

describe('provider survey: what the parser makes of each documented header block', () => {
  it('Reddit: github.com/reddit/reddit/wiki/API ("X-Ratelimit-Used / -Remaining / -Reset")', () => {
    // Reddit sends remaining as a decimal and no limit; the reset is delta seconds.
    const info = parseRateLimitHeaders(
      { 'x-ratelimit-remaining': '586.0', 'x-ratelimit-used': '14', 'x-ratelimit-reset': '111' },
      { now: NOW },
    );
    expect(info).toEqual({
      source: 'x-ratelimit',
      limit: 600,
      remaining: 586,
      resetMs: 111_000,
      policies: [{ limit: 600, remaining: 586, resetMs: 111_000 }],
    });
  });

  it('X (Twitter): docs.x.com/fundamentals/rate-limits ("Checking your limits")', () => {
    const info = parseRateLimitHeaders(
      {
        'x-rate-limit-limit': '900',
        'x-rate-limit-remaining': '847',
        'x-rate-limit-reset': '1705420800',
      },
      { now: secondsBefore(1705420800, 600) },
    );
    expect(info).toEqual({
      source: 'x-rate-limit',
      limit: 900,
      remaining: 847,
      resetMs: 600_000,
      policies: [{ limit: 900, remaining: 847, resetMs: 600_000 }],
    });
  });

  it('Okta: developer.okta.com/docs/reference/rl-best-practices/ ("rate limit headers")', () => {
    const info = parseRateLimitHeaders(
      {
        'X-Rate-Limit-Limit': '1200',
        'X-Rate-Limit-Remaining': '1199',
        'X-Rate-Limit-Reset': '1609459200',
      },
      { now: secondsBefore(1609459200, 60) },
    );
    expect(info).toMatchObject({
      source: 'x-rate-limit',
      limit: 1200,
      remaining: 1199,
      resetMs: 60_000,
    });
  });

  it('Zendesk: developer.zendesk.com/documentation/api-basics/best-practices/best-practices-for-avoiding-rate-limiting', () => {
    // The account-wide pair alone: the limit comes as a bare `X-Rate-Limit`.
    expect(
      parseRateLimitHeaders(
        { 'X-Rate-Limit': '700', 'X-Rate-Limit-Remaining': '699' },
        { now: NOW },
      ),
    ).toEqual({
      source: 'x-rate-limit',
      limit: 700,
      remaining: 699,
      policies: [{ limit: 700, remaining: 699 }],
    });
    // List endpoints add the draft-6 fields, which take precedence and bring the reset;
    // `zendesk-ratelimit-tickets-index` is not read.
    expect(
      parseRateLimitHeaders(
        {
          'x-rate-limit': '700',
          'ratelimit-limit': '700',
          'x-rate-limit-remaining': '699',
          'ratelimit-remaining': '699',
          'ratelimit-reset': '41',
          'zendesk-ratelimit-tickets-index': 'total=100; remaining=99; resets=41',
        },
        { now: NOW },
      ),
    ).toEqual({
      source: 'draft-6',
      limit: 700,
      remaining: 699,
      resetMs: 41_000,
      policies: [{ limit: 700, remaining: 699, resetMs: 41_000 }],
    });
  });

  it('GitLab.com: docs.gitlab.com/ee/user/gitlab_com/index.html#haproxy-api-throttle', () => {
    const info = parseRateLimitHeaders(
      {
        'RateLimit-Limit': '600',
        'RateLimit-Observed': '6',
        'RateLimit-Remaining': '594',
        'RateLimit-Reset': '1563325137',
        'RateLimit-ResetTime': 'Wed, 17 Jul 2019 00:58:57 GMT',
      },
      { now: secondsBefore(1563325137, 60) },
    );
    // The Unix reset is read by its magnitude; RateLimit-Observed and -ResetTime are not read.
    expect(info).toEqual({
      source: 'draft-6',
      limit: 600,
      remaining: 594,
      resetMs: 60_000,
      policies: [{ limit: 600, remaining: 594, resetMs: 60_000 }],
    });
  });

  it('Cloudflare API: developers.cloudflare.com/fundamentals/api/reference/limits/ ("Rate limiting headers")', () => {
    const info = parseRateLimitHeaders(
      {
        Ratelimit: '"default";r=50;t=30',
        'Ratelimit-Policy': '"burst";q=100;w=60',
        'retry-after': '30',
      },
      { now: NOW },
    );
    // The documented examples name two different policies, so they stay two.
    expect(info).toEqual({
      source: 'ietf',
      policy: 'default',
      remaining: 50,
      resetMs: 30_000,
      retryAfterMs: 30_000,
      policies: [
        { name: 'default', remaining: 50, resetMs: 30_000 },
        { name: 'burst', limit: 100, windowMs: 60_000 },
      ],
    });
  });

  it('Jira Cloud: developer.atlassian.com/cloud/jira/platform/rate-limiting/ ("Retry-After headers")', () => {
    // Names and the reset format (yyyy-MM-ddTHH:mmZ) are documented; the numbers are ours.
    const info = parseRateLimitHeaders(
      {
        'Retry-After': '30',
        'X-RateLimit-Reset': '2026-11-30T12:01Z',
        'X-RateLimit-Limit': '350',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-NearLimit': 'true',
        'RateLimit-Reason': 'jira-quota-based',
      },
      { now: NOW + 30_000 },
    );
    expect(info).toEqual({
      source: 'x-ratelimit',
      limit: 350,
      remaining: 0,
      resetMs: 30_000,
      retryAfterMs: 30_000,
      policies: [{ limit: 350, remaining: 0, resetMs: 30_000 }],
    });
  });

  it('Confluence Data Center: confluence.atlassian.com/doc/_ratelimiting_httpheaders-992678779.html', () => {
    // A token bucket; X-RateLimit-Interval-Seconds and -FillRate (its refill) are not read.
    const info = parseRateLimitHeaders(
      {
        'X-RateLimit-Limit': '20',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Interval-Seconds': '1',
        'X-RateLimit-FillRate': '1',
        'retry-after': '1',
      },
      { now: NOW },
    );
    expect(info).toEqual({
      source: 'x-ratelimit',
      limit: 20,
      remaining: 0,
      retryAfterMs: 1000,
      policies: [{ limit: 20, remaining: 0 }],
    });
  });

  it('Mastodon: docs.joinmastodon.org/api/rate-limits/ (an ISO 8601 reset)', () => {
    const info = parseRateLimitHeaders(
      {
        'X-RateLimit-Limit': '300',
        'X-RateLimit-Remaining': '298',
        'X-RateLimit-Reset': '2026-11-30T12:05:00.019685Z',
      },
      { now: NOW },
    );
    expect(info).toMatchObject({
      source: 'x-ratelimit',
      limit: 300,
      remaining: 298,
      resetMs: 300_020,
    });
  });

  it('Docker Hub: docs.docker.com/docker-hub/usage/pulls/ ("View pull rate and limit")', () => {
    const info = parseRateLimitHeaders(
      {
        'ratelimit-limit': '100;w=21600',
        'ratelimit-remaining': '76;w=21600',
        'docker-ratelimit-source': '192.0.2.1',
      },
      { now: NOW },
    );
    expect(info).toEqual({
      source: 'draft-6',
      limit: 100,
      remaining: 76,
      windowMs: 21_600_000,
      policies: [{ limit: 100, remaining: 76, windowMs: 21_600_000 }],
    });
  });

  it('Twitch: dev.twitch.tv/docs/api/guide/#twitch-rate-limits', () => {
    // Names documented (a Unix reset); the numbers are ours: 800 points a minute.
    const info = parseRateLimitHeaders(
      { 'Ratelimit-Limit': '800', 'Ratelimit-Remaining': '799', 'Ratelimit-Reset': '1796040060' },
      { now: NOW },
    );
    expect(info).toMatchObject({ source: 'draft-6', limit: 800, remaining: 799, resetMs: 60_000 });
  });

  it('DigitalOcean: github.com/digitalocean/openapi specification/shared/headers.yml', () => {
    const info = parseRateLimitHeaders(
      { 'ratelimit-limit': '5000', 'ratelimit-remaining': '4816', 'ratelimit-reset': '1444931833' },
      { now: secondsBefore(1444931833, 3600) },
    );
    expect(info).toMatchObject({
      source: 'draft-6',
      limit: 5000,
      remaining: 4816,
      resetMs: 3_600_000,
    });
  });

  it('Heroku: devcenter.heroku.com/articles/platform-api-reference#rate-limits', () => {
    expect(parseRateLimitHeaders({ 'RateLimit-Remaining': '2400' }, { now: NOW })).toEqual({
      source: 'draft-6',
      remaining: 2400,
      policies: [{ remaining: 2400 }],
    });
  });

  it('Resend: resend.com/docs/api-reference/rate-limit ("Response Headers")', () => {
    // Names documented (draft 6, delta-seconds reset); the numbers are the default 2 per second.
    const info = parseRateLimitHeaders(
      {
        'ratelimit-limit': '2',
        'ratelimit-remaining': '0',
        'ratelimit-reset': '1',
        'retry-after': '1',
      },
      { now: NOW },
    );
    expect(info).toEqual({
      source: 'draft-6',
      limit: 2,
      remaining: 0,
      resetMs: 1000,
      retryAfterMs: 1000,
      policies: [{ limit: 2, remaining: 0, resetMs: 1000 }],
    });
  });

  it('Salesforce: developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/headers_api_usage.htm', () => {
    const info = parseRateLimitHeaders(
      { 'Sforce-Limit-Info': 'api-usage=10018/100000; api-bursts=1/750' },
      { now: NOW },
    );
    expect(info).toEqual({
      source: 'salesforce',
      policy: 'api-usage',
      limit: 100000,
      remaining: 89982,
      policies: [
        { name: 'api-usage', limit: 100000, remaining: 89982 },
        { name: 'api-bursts', limit: 750, remaining: 749 },
      ],
    });
    // The older pilot form with a connected app's quota.
    expect(
      parseRateLimitHeaders(
        {
          'Sforce-Limit-Info':
            'api-usage=25/5000; per-app-api-usage=17/250(appName=sample-connected-app)',
        },
        { now: NOW },
      )?.policies,
    ).toEqual([
      { name: 'per-app-api-usage', limit: 250, remaining: 233 },
      { name: 'api-usage', limit: 5000, remaining: 4975 },
    ]);
  });

  it('HubSpot: developers.hubspot.com/docs/api/usage-details ("Rate limits")', () => {
    // Names documented; the numbers are ours (a Free portal: 100 per 10 s, 250,000 a day).
    const info = parseRateLimitHeaders(
      {
        'X-HubSpot-RateLimit-Daily': '250000',
        'X-HubSpot-RateLimit-Daily-Remaining': '249000',
        'X-HubSpot-RateLimit-Interval-Milliseconds': '10000',
        'X-HubSpot-RateLimit-Max': '100',
        'X-HubSpot-RateLimit-Remaining': '0',
        'X-HubSpot-RateLimit-Secondly': '10',
        'X-HubSpot-RateLimit-Secondly-Remaining': '9',
      },
      { now: NOW },
    );
    expect(info).toEqual({
      source: 'hubspot',
      policy: 'interval',
      limit: 100,
      remaining: 0,
      windowMs: 10_000,
      policies: [
        { name: 'interval', limit: 100, remaining: 0, windowMs: 10_000 },
        { name: 'secondly', limit: 10, remaining: 9, windowMs: 1000 },
        { name: 'daily', limit: 250000, remaining: 249000, windowMs: 86_400_000 },
      ],
    });
  });

  it('Intercom: developers.intercom.com/docs/references/rest-api/errors/rate-limiting', () => {
    const info = parseRateLimitHeaders(
      {
        'X-RateLimit-Limit': '167',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': '1487332520',
      },
      { now: secondsBefore(1487332520, 10) },
    );
    expect(info).toMatchObject({
      source: 'x-ratelimit',
      limit: 167,
      remaining: 0,
      resetMs: 10_000,
    });
  });

  it('SendGrid: twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/rate-limits', () => {
    const info = parseRateLimitHeaders(
      {
        'X-RateLimit-Limit': '150',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': '1392815263',
      },
      { now: secondsBefore(1392815263, 5) },
    );
    expect(info).toMatchObject({ source: 'x-ratelimit', limit: 150, remaining: 0, resetMs: 5000 });
  });

  it('Auth0: auth0.com/docs/troubleshoot/customer-support/operational-policies/rate-limit-policy', () => {
    // Names documented (a UNIX timestamp reset); the numbers are ours.
    const info = parseRateLimitHeaders(
      {
        'x-ratelimit-limit': '50',
        'x-ratelimit-remaining': '49',
        'x-ratelimit-reset': '1796040001',
      },
      { now: NOW },
    );
    expect(info).toMatchObject({ source: 'x-ratelimit', limit: 50, remaining: 49, resetMs: 1000 });
  });

  it('Groq: console.groq.com/docs/rate-limits ("Rate Limit Headers")', () => {
    const info = parseRateLimitHeaders(
      {
        'retry-after': '2',
        'x-ratelimit-limit-requests': '14400',
        'x-ratelimit-limit-tokens': '18000',
        'x-ratelimit-remaining-requests': '14370',
        'x-ratelimit-remaining-tokens': '17997',
        'x-ratelimit-reset-requests': '2m59.56s',
        'x-ratelimit-reset-tokens': '7.66s',
      },
      { now: NOW },
    );
    expect(info).toMatchObject({ source: 'openai', retryAfterMs: 2000 });
    expect(info?.policies).toEqual([
      { name: 'requests', unit: 'requests', limit: 14400, remaining: 14370, resetMs: 179_560 },
      { name: 'tokens', unit: 'tokens', limit: 18000, remaining: 17997, resetMs: 7660 },
    ]);
  });

  it('Slack: docs.slack.dev/apis/web-api/rate-limits ("Responding to rate limiting conditions")', () => {
    expect(parseRateLimitHeaders({ 'Retry-After': '30' }, { now: NOW })).toEqual({
      source: 'retry-after',
      retryAfterMs: 30_000,
      policies: [],
    });
  });

  it('Notion: developers.notion.com/reference/request-limits ("Rate limits")', () => {
    // An integer number of seconds on a 429 (and a 529).
    expect(parseRateLimitHeaders({ 'Retry-After': '2' }, { now: NOW })?.retryAfterMs).toBe(2000);
  });

  it('Stripe: docs.stripe.com/rate-limits (a 429 without a documented timing header)', () => {
    // Stripe documents no rate-limit or retry header: nothing to read, the client's backoff rules.
    expect(
      parseRateLimitHeaders(
        { 'Request-Id': 'req_123', 'Content-Type': 'application/json' },
        { now: NOW },
      ),
    ).toBeUndefined();
  });
});

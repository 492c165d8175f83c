/**
 * What limited-client understands of the rate-limit headers real APIs send.
 *
 *   npx tsx examples/parse-headers.ts
 *
 * Each sample is a response header block as the provider documents it; the script prints the
 * normalised RateLimitInfo: the most restrictive policy on top, every time in milliseconds.
 */
import { parseRateLimitHeaders } from 'limited-client';

const now = Date.now();
const inSeconds = (s: number) => String(Math.floor(now / 1000) + s);

const samples: Record<string, Record<string, string>> = {
  'IETF draft (RateLimit + RateLimit-Policy)': {
    'RateLimit-Policy': '"burst";q=100;w=60, "daily";q=5000;w=86400',
    RateLimit: '"burst";r=3;t=12, "daily";r=4200;t=40000',
  },
  'express-rate-limit draft-7': {
    RateLimit: 'limit=100, remaining=0, reset=42',
    'RateLimit-Policy': '100;w=60',
  },
  GitHub: {
    'x-ratelimit-limit': '5000',
    'x-ratelimit-remaining': '4987',
    'x-ratelimit-used': '13',
    'x-ratelimit-reset': inSeconds(1800),
    'x-ratelimit-resource': 'core',
  },
  OpenAI: {
    'x-ratelimit-limit-requests': '60',
    'x-ratelimit-remaining-requests': '59',
    'x-ratelimit-reset-requests': '1s',
    'x-ratelimit-limit-tokens': '150000',
    'x-ratelimit-remaining-tokens': '149984',
    'x-ratelimit-reset-tokens': '6m0s',
  },
  'Anthropic (429)': {
    'anthropic-ratelimit-requests-limit': '50',
    'anthropic-ratelimit-requests-remaining': '0',
    'anthropic-ratelimit-requests-reset': new Date(now + 20_000).toISOString(),
    'retry-after': '20',
  },
  'Discord (429)': {
    'Retry-After': '65',
    'X-RateLimit-Limit': '10',
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset-After': '64.57',
    'X-RateLimit-Bucket': 'abcd1234',
    'X-RateLimit-Scope': 'user',
  },
  'Azure OpenAI (429)': { 'retry-after-ms': '1500', 'x-ratelimit-remaining-requests': '0' },
  Shopify: { 'X-Shopify-Shop-Api-Call-Limit': '32/40' },
  'A hostile server': {
    'Retry-After': '-5',
    'X-RateLimit-Remaining': '9000',
    'X-RateLimit-Limit': '10',
  },
};

const ms = (v: number | undefined) => (v === undefined ? '-' : `${v} ms`);
for (const [name, headers] of Object.entries(samples)) {
  const info = parseRateLimitHeaders(headers, { now });
  console.log(`\n${name}`);
  if (!info) {
    console.log('  nothing trustworthy');
    continue;
  }
  console.log(
    `  source ${info.source}; most restrictive: ${info.policy ?? '(unnamed)'} ` +
      `limit ${info.limit ?? '-'}, remaining ${info.remaining ?? '-'}, reset in ${ms(info.resetMs)}, ` +
      `retry after ${ms(info.retryAfterMs)}`,
  );
  for (const p of info.policies) {
    console.log(`    policy ${JSON.stringify(p)}`);
  }
}

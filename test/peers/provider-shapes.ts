/**
 * Eight providers' rate limits as small in-process loopback servers (issue 26, "One host, many
 * budgets"): each announces and enforces what its provider documents, with the limits scaled down
 * so that a run takes seconds. Each simulation names the documentation it follows; the numbers
 * are the provider's where they fit in seconds, scaled where they do not (said per shape).
 *
 * A fixed window here starts at its first admitted request (refused requests do not count); a
 * token bucket refills continuously. Every server counts attempts and refusals as it answers,
 * Shopify's THROTTLED answers with HTTP 200 included. Time comes from `now` (epoch milliseconds,
 * `Date.now` unless a test injects a clock).
 *
 * {@link shapeScenarios} pairs each server with the issue's typical workload and its least time.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listening, type PeerServer } from './counting.js';

/** The clock a simulation reads, in epoch milliseconds. */
export type Clock = () => number;

/** Options every simulation takes. */
export interface ShapeOptions {
  /** The clock, in epoch milliseconds. @default Date.now */
  now?: Clock;
}

/** A running simulation: a {@link PeerServer} that also counts what it refused. */
export interface ShapeServer extends PeerServer {
  /** Requests answered so far (admitted and refused). */
  attempts(): number;
  /** Requests refused so far: 429s, GitHub's 403s and Shopify's THROTTLED 200s. */
  refusals(): number;
}

/** A fixed window of `limit` units per `windowMs`, starting at its first admitted request. */
export class FixedWindow {
  private start = Number.NEGATIVE_INFINITY;
  private used = 0;
  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  /** Counts `cost` units at `now` if they fit; says whether they did. */
  take(now: number, cost = 1): boolean {
    if (now >= this.start + this.windowMs) {
      this.start = now;
      this.used = 0;
    }
    if (this.used + cost > this.limit) return false;
    this.used += cost;
    return true;
  }

  /** Units left in the current window at `now` (the whole limit when none is open). */
  remainingAt(now: number): number {
    return now >= this.start + this.windowMs ? this.limit : this.limit - this.used;
  }

  /** Milliseconds from `now` until the current window ends (0 when none is open). */
  resetMsAt(now: number): number {
    return Math.max(0, this.start + this.windowMs - now);
  }
}

/** A token bucket of `capacity` units refilled at `capacity` per `windowMs`, continuously. */
export class TokenBucket {
  private level: number;
  private at = Number.NEGATIVE_INFINITY;
  constructor(
    readonly capacity: number,
    readonly windowMs: number,
  ) {
    this.level = capacity;
  }

  private refill(now: number): void {
    if (this.at === Number.NEGATIVE_INFINITY) {
      this.at = now; // Full from the first look.
    } else if (now > this.at) {
      this.level = Math.min(
        this.capacity,
        this.level + ((now - this.at) * this.capacity) / this.windowMs,
      );
      this.at = now;
    }
  }

  /** Units available at `now` (fractional). */
  availableAt(now: number): number {
    this.refill(now);
    return this.level;
  }

  /** Whether `cost` units are available at `now`, without taking them. */
  fits(now: number, cost: number): boolean {
    return this.availableAt(now) >= cost;
  }

  /** Takes `cost` units at `now` (the caller checked {@link fits}). */
  spend(now: number, cost: number): void {
    this.refill(now);
    this.level -= cost;
  }

  /** Milliseconds from `now` until `cost` units are available. */
  msUntil(now: number, cost: number): number {
    const missing = cost - this.availableAt(now);
    return missing <= 0 ? 0 : (missing * this.windowMs) / this.capacity;
  }

  /** Milliseconds from `now` until the bucket is full again. */
  msUntilFull(now: number): number {
    return this.msUntil(now, this.capacity);
  }
}

/** A request as a simulation sees it: method, path with query, headers, JSON body if any. */
interface Incoming {
  method: string;
  url: URL;
  body: unknown;
}

/** What a handler answers; `refused` counts the answer as a refusal whatever its status. */
interface Answer {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
  refused?: boolean;
}

const MAX_BODY = 64 * 1024;

async function serve(name: string, handle: (request: Incoming) => Answer): Promise<ShapeServer> {
  let attempts = 0;
  let refusals = 0;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    request.once('end', () => {
      let body: unknown;
      try {
        body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      } catch {
        body = undefined; // Not JSON: the simulations read only JSON bodies.
      }
      const url = new URL(request.url ?? '/', 'http://simulation.test');
      const answer = handle({ method: request.method ?? 'GET', url, body });
      attempts++;
      if (answer.refused ?? answer.status === 429) refusals++;
      response.writeHead(answer.status, {
        'content-type': 'application/json',
        ...answer.headers,
      });
      response.end(JSON.stringify(answer.body));
    });
  });
  server.listen(0, '127.0.0.1');
  const peer = await listening(name, server);
  return { ...peer, attempts: () => attempts, refusals: () => refusals };
}

const seconds = (ms: number) => Math.ceil(ms / 1000);
const epochSeconds = (now: number, ms: number) => Math.ceil((now + ms) / 1000);

/** A Map that creates its value on first use (keys come from requests: never a plain object). */
function lazyMap<V>(make: (key: string) => V): (key: string) => V {
  const map = new Map<string, V>();
  return (key) => {
    let value = map.get(key);
    if (value === undefined) {
      value = make(key);
      map.set(key, value);
    }
    return value;
  };
}

// ---------------------------------------------------------------- GitHub REST

/** Limits of {@link startGitHub}. */
export interface GitHubLimits {
  /** The `core` resource: requests per window. @default 5000 */
  core: number;
  /** The `search` resource: requests per window. @default 10 */
  search: number;
  /** Both windows, in milliseconds. @default 4000 */
  windowMs: number;
}

/** GitHub's limits scaled: `core` keeps 5,000 (never binding here); `search`'s 30 a minute becomes 10 per 4 s. */
export const GITHUB: GitHubLimits = { core: 5000, search: 10, windowMs: 4000 };

/**
 * GitHub REST: separate primary limits per resource, `core` for every route but `/search/`, which
 * spends `search`. Every answer carries `x-ratelimit-limit`, `-remaining`, `-used`, `-reset`
 * (epoch seconds) and `-resource`; a request over its resource's limit gets `403` with
 * `x-ratelimit-remaining: 0` and a message (no Retry-After: the reset says when).
 *
 * Follows "Rate limits for the REST API" (docs.github.com/en/rest/using-the-rest-api/
 * rate-limits-for-the-rest-api) and "Rate limit" (docs.github.com/en/rest/rate-limit: the
 * `resources` core, search, graphql...; search 30 requests a minute).
 */
export function startGitHub(
  options: ShapeOptions & { limits?: GitHubLimits } = {},
): Promise<ShapeServer> {
  const now = options.now ?? Date.now;
  const limits = options.limits ?? GITHUB;
  const windows = {
    core: new FixedWindow(limits.core, limits.windowMs),
    search: new FixedWindow(limits.search, limits.windowMs),
  };
  return serve('GitHub REST (core and search resources)', ({ url }) => {
    const t = now();
    const resource = url.pathname.startsWith('/search/') ? 'search' : 'core';
    const window = windows[resource];
    const admitted = window.take(t);
    const remaining = window.remainingAt(t);
    const headers = {
      'x-ratelimit-limit': String(window.limit),
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-used': String(window.limit - remaining),
      'x-ratelimit-reset': String(epochSeconds(t, window.resetMsAt(t))),
      'x-ratelimit-resource': resource,
    };
    if (admitted) {
      return {
        status: 200,
        headers,
        body: resource === 'search' ? { total_count: 1, items: [] } : { number: 1 },
      };
    }
    return {
      status: 403,
      refused: true,
      headers,
      body: {
        message: 'API rate limit exceeded (simulated).',
        documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
      },
    };
  });
}

// ---------------------------------------------------------------- Discord

/** Limits of {@link startDiscord}. */
export interface DiscordLimits {
  /** Messages per channel per window on the create-message route. @default 5 */
  perChannel: number;
  /** That window, in milliseconds. @default 5000 */
  windowMs: number;
  /** Requests per second across every route (the global limit). @default 50 */
  global: number;
}

/** Discord's figures as they are (they already fit in seconds). */
export const DISCORD: DiscordLimits = { perChannel: 5, windowMs: 5000, global: 50 };

/** The bucket hash the simulation names for POST /channels/{id}/messages. */
export const DISCORD_MESSAGE_BUCKET = 'b6b8a3c2d6f1e0a9';

/**
 * Discord's REST API under `/api/v10`: `POST /channels/{channel.id}/messages` is one route bucket
 * (`X-RateLimit-Bucket`), counted apart per channel (the route's major parameter), under a global
 * limit per bot. Every answer in a bucket carries `X-RateLimit-Limit`, `-Remaining`, `-Reset`
 * (epoch seconds with decimals), `-Reset-After` (seconds with decimals) and `-Bucket`; a refusal
 * is a 429 with `Retry-After` (seconds), `X-RateLimit-Scope` (`user` for a bucket, `global`) and,
 * for the global limit, `X-RateLimit-Global: true`, with a JSON body `{ message, retry_after,
 * global }`. Other routes answer 404.
 *
 * Follows "Rate Limits" (discord.com/developers/docs/topics/rate-limits: per-route buckets,
 * top-level resources channel/guild/webhook, the 50 requests a second global limit, the header
 * and body fields). The five messages per five seconds per channel is the route's commonly
 * observed figure; Discord says not to hard-code it, and the simulation only announces it.
 */
export function startDiscord(
  options: ShapeOptions & { limits?: DiscordLimits } = {},
): Promise<ShapeServer> {
  const now = options.now ?? Date.now;
  const limits = options.limits ?? DISCORD;
  const global = new FixedWindow(limits.global, 1000);
  const channel = lazyMap(() => new FixedWindow(limits.perChannel, limits.windowMs));
  const route = /^\/api\/v10\/channels\/(\d+)\/messages$/;
  return serve('Discord (route bucket per channel, global limit)', ({ method, url }): Answer => {
    const t = now();
    const match = route.exec(url.pathname);
    if (method !== 'POST' || match === null) {
      return { status: 404, body: { message: '404: Not Found', code: 0 } };
    }
    if (!global.take(t)) {
      const after = global.resetMsAt(t) / 1000;
      return {
        status: 429,
        headers: {
          'retry-after': String(seconds(global.resetMsAt(t))),
          'x-ratelimit-global': 'true',
          'x-ratelimit-scope': 'global',
        },
        body: { message: 'You are being rate limited.', retry_after: after, global: true },
      };
    }
    const window = channel(match[1] as string);
    const admitted = window.take(t);
    const resetMs = window.resetMsAt(t);
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(window.limit),
      'x-ratelimit-remaining': String(window.remainingAt(t)),
      'x-ratelimit-reset': ((t + resetMs) / 1000).toFixed(3),
      'x-ratelimit-reset-after': (resetMs / 1000).toFixed(3),
      'x-ratelimit-bucket': DISCORD_MESSAGE_BUCKET,
    };
    if (admitted) {
      return { status: 200, headers, body: { id: String(t), channel_id: match[1] } };
    }
    return {
      status: 429,
      headers: {
        ...headers,
        'retry-after': String(seconds(resetMs)),
        'x-ratelimit-scope': 'user',
      },
      body: { message: 'You are being rate limited.', retry_after: resetMs / 1000, global: false },
    };
  });
}

// ---------------------------------------------------------------- OpenAI

/** One model's limits in {@link startOpenAI}: requests and tokens per window. */
export interface ModelLimits {
  requests: number;
  tokens: number;
}

/** OpenAI's per-minute limits scaled by 30 in time: per 2 s. */
export const OPENAI = {
  windowMs: 2000,
  models: new Map<string, ModelLimits>([
    ['gpt-4o', { requests: 10, tokens: 4000 }],
    ['gpt-4o-mini', { requests: 20, tokens: 2000 }],
  ]),
};

/** Tokens a prompt of `text` is counted as (about four characters a token). */
export const promptTokens = (text: string): number => Math.ceil(text.length / 4);

/** A Go-style duration as OpenAI writes its resets: `120ms`, `1.5s`, `6m0s`. */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${Math.ceil(ms)}ms`;
  const s = Math.round(ms) / 1000;
  if (s < 60) return `${Number(s.toFixed(3))}s`;
  const m = Math.floor(s / 60);
  return `${m}m${Number((s - m * 60).toFixed(3))}s`;
}

function chatText(body: unknown): string {
  const messages = (body as { messages?: { content?: unknown }[] } | undefined)?.messages;
  if (!Array.isArray(messages)) return '';
  return messages.map((m) => (typeof m?.content === 'string' ? m.content : '')).join('');
}

function field(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null
    ? (body as Record<string, unknown>)[name]
    : undefined;
}

/**
 * OpenAI's chat completions (`POST /v1/chat/completions`): requests and tokens limited per model,
 * the model named in the JSON body. A call counts as one request and as its prompt's tokens plus
 * its `max_tokens`. Every answer carries `x-ratelimit-limit-requests`, `-limit-tokens`,
 * `-remaining-requests`, `-remaining-tokens`, `-reset-requests` and `-reset-tokens` (durations
 * until full, `1.5s`) for the model called; a refusal is a 429 with an `error` object
 * (`code: rate_limit_exceeded`, `type: requests` or `tokens`) and no Retry-After (the page
 * documents none). An unknown model answers 404.
 *
 * Follows "Rate limits" (platform.openai.com/docs/guides/rate-limits: limits per model, RPM and
 * TPM, the rate-limit headers and their meaning; max_tokens counted toward the limit).
 */
export function startOpenAI(
  options: ShapeOptions & { limits?: typeof OPENAI } = {},
): Promise<ShapeServer> {
  const now = options.now ?? Date.now;
  const limits = options.limits ?? OPENAI;
  const buckets = new Map<string, { requests: TokenBucket; tokens: TokenBucket }>();
  for (const [model, l] of limits.models) {
    buckets.set(model, {
      requests: new TokenBucket(l.requests, limits.windowMs),
      tokens: new TokenBucket(l.tokens, limits.windowMs),
    });
  }
  return serve('OpenAI (requests and tokens per model)', ({ method, url, body }) => {
    const t = now();
    const model = field(body, 'model');
    const pair = typeof model === 'string' ? buckets.get(model) : undefined;
    if (method !== 'POST' || url.pathname !== '/v1/chat/completions' || pair === undefined) {
      return { status: 404, body: { error: { message: 'unknown model or route', code: null } } };
    }
    const maxTokens = Number(field(body, 'max_tokens') ?? 0) || 0;
    const cost = promptTokens(chatText(body)) + maxTokens;
    const short = !pair.requests.fits(t, 1)
      ? 'requests'
      : !pair.tokens.fits(t, cost)
        ? 'tokens'
        : '';
    if (short === '') {
      pair.requests.spend(t, 1);
      pair.tokens.spend(t, cost);
    }
    const headers = {
      'x-ratelimit-limit-requests': String(pair.requests.capacity),
      'x-ratelimit-limit-tokens': String(pair.tokens.capacity),
      'x-ratelimit-remaining-requests': String(Math.floor(pair.requests.availableAt(t))),
      'x-ratelimit-remaining-tokens': String(Math.floor(pair.tokens.availableAt(t))),
      'x-ratelimit-reset-requests': goDuration(pair.requests.msUntilFull(t)),
      'x-ratelimit-reset-tokens': goDuration(pair.tokens.msUntilFull(t)),
    };
    if (short === '') {
      return {
        status: 200,
        headers,
        body: {
          object: 'chat.completion',
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' } }],
        },
      };
    }
    return {
      status: 429,
      headers,
      body: {
        error: {
          message: `Rate limit reached for ${model} on ${short} (simulated).`,
          type: short,
          param: null,
          code: 'rate_limit_exceeded',
        },
      },
    };
  });
}

// ---------------------------------------------------------------- Anthropic

/** One model's limits in {@link startAnthropic}. */
export interface AnthropicModelLimits {
  requests: number;
  inputTokens: number;
  outputTokens: number;
}

/** Anthropic's per-minute limits scaled by 30 in time: per 2 s. */
export const ANTHROPIC = {
  windowMs: 2000,
  models: new Map<string, AnthropicModelLimits>([
    ['claude-sonnet-4-5', { requests: 10, inputTokens: 2000, outputTokens: 1000 }],
    ['claude-haiku-4-5', { requests: 20, inputTokens: 4000, outputTokens: 1000 }],
  ]),
};

/**
 * Anthropic's Messages API (`POST /v1/messages`): requests, input tokens and output tokens
 * limited per model, each a token bucket refilled continuously, the model in the JSON body; a
 * call counts its prompt's tokens as input and its `max_tokens` as output. Every answer carries
 * `anthropic-ratelimit-requests-limit`, `-remaining`, `-reset` (RFC 3339, when full again) and
 * the same for `input-tokens` and `output-tokens`; a refusal is a 429 with `retry-after`
 * (seconds) and `{ type: "error", error: { type: "rate_limit_error" } }`.
 *
 * Follows "Rate limits" (docs.anthropic.com/en/api/rate-limits: the token bucket algorithm,
 * limits per model, RPM, ITPM and OTPM, the response headers, retry-after on 429).
 */
export function startAnthropic(
  options: ShapeOptions & {
    limits?: typeof ANTHROPIC;
    /**
     * What a reset is truncated to, in milliseconds: 1000, whole seconds, as Anthropic's RFC 3339
     * timestamps are. 33 keeps the real ratio of that rounding to a minute's window (2 s is a
     * minute scaled by 30; issue 26, docs/benchmarks.md).
     * @default 1000
     */
    resetStepMs?: number;
  } = {},
): Promise<ShapeServer> {
  const now = options.now ?? Date.now;
  const limits = options.limits ?? ANTHROPIC;
  const step = options.resetStepMs ?? 1000;
  const buckets = new Map<string, Record<'requests' | 'input' | 'output', TokenBucket>>();
  for (const [model, l] of limits.models) {
    buckets.set(model, {
      requests: new TokenBucket(l.requests, limits.windowMs),
      input: new TokenBucket(l.inputTokens, limits.windowMs),
      output: new TokenBucket(l.outputTokens, limits.windowMs),
    });
  }
  return serve(
    'Anthropic (requests, input and output tokens per model)',
    ({ method, url, body }) => {
      const t = now();
      const model = field(body, 'model');
      const set = typeof model === 'string' ? buckets.get(model) : undefined;
      if (method !== 'POST' || url.pathname !== '/v1/messages' || set === undefined) {
        return {
          status: 404,
          body: { type: 'error', error: { type: 'not_found_error', message: 'unknown model' } },
        };
      }
      const costs = {
        requests: 1,
        input: promptTokens(chatText(body)),
        output: Number(field(body, 'max_tokens') ?? 0) || 0,
      };
      const names = ['requests', 'input', 'output'] as const;
      const admitted = names.every((n) => set[n].fits(t, costs[n]));
      if (admitted) for (const n of names) set[n].spend(t, costs[n]);
      const headers: Record<string, string> = {};
      const prefix = { requests: 'requests', input: 'input-tokens', output: 'output-tokens' };
      for (const n of names) {
        const p = `anthropic-ratelimit-${prefix[n]}`;
        headers[`${p}-limit`] = String(set[n].capacity);
        headers[`${p}-remaining`] = String(Math.floor(set[n].availableAt(t)));
        const full = Math.floor((t + set[n].msUntilFull(t)) / step) * step;
        const stamp = new Date(full).toISOString();
        headers[`${p}-reset`] = step % 1000 === 0 ? stamp.replace(/\.\d+Z$/, 'Z') : stamp;
      }
      if (admitted) {
        return {
          status: 200,
          headers,
          body: {
            type: 'message',
            model,
            content: [{ type: 'text', text: 'ok' }],
            usage: { input_tokens: costs.input, output_tokens: costs.output },
          },
        };
      }
      const waitMs = Math.max(...names.map((n) => set[n].msUntil(t, costs[n])));
      return {
        status: 429,
        headers: { ...headers, 'retry-after': String(Math.max(1, seconds(waitMs))) },
        body: {
          type: 'error',
          error: { type: 'rate_limit_error', message: `Rate limit for ${model} (simulated).` },
        },
      };
    },
  );
}

// ---------------------------------------------------------------- Shopify GraphQL

/** Limits of {@link startShopify}: the app-and-store bucket, in cost points. */
export interface ShopifyLimits {
  maximumAvailable: number;
  /** Points restored per second. */
  restoreRate: number;
}

/** Shopify's Standard plan is 100 points a second; the bucket scaled to 100 points, restored at 50/s. */
export const SHOPIFY: ShopifyLimits = { maximumAvailable: 100, restoreRate: 50 };

/** What the workload's query costs, in points (requested and actual alike). */
export const SHOPIFY_QUERY_COST = 10;

/**
 * Shopify's GraphQL Admin API (`POST /admin/api/2025-01/graphql.json`): a leaky bucket of cost
 * points per app and store. Every answer is HTTP 200 and reports `extensions.cost`
 * (`requestedQueryCost`, `actualQueryCost`, `throttleStatus { maximumAvailable,
 * currentlyAvailable, restoreRate }`) in the JSON body; no header says anything. A query whose
 * cost the bucket cannot hold is answered 200 with `errors: [{ message: "Throttled", extensions:
 * { code: "THROTTLED" } }]`, no `data`, and `actualQueryCost: null`. The query's cost is
 * `SHOPIFY_QUERY_COST` (a simulation does not parse GraphQL).
 *
 * Follows "GraphQL Admin API rate limits" (shopify.dev/docs/apps/build/apis/graphql-admin/
 * rate-limits) and "Shopify API limits" (shopify.dev/docs/api/usage/limits: the leaky bucket,
 * the throttleStatus fields, THROTTLED).
 */
export function startShopify(
  options: ShapeOptions & { limits?: ShopifyLimits } = {},
): Promise<ShapeServer> {
  const now = options.now ?? Date.now;
  const limits = options.limits ?? SHOPIFY;
  const bucket = new TokenBucket(
    limits.maximumAvailable,
    (limits.maximumAvailable / limits.restoreRate) * 1000,
  );
  return serve('Shopify GraphQL (cost points in the body, THROTTLED at 200)', ({ method, url }) => {
    const t = now();
    if (method !== 'POST' || !/^\/admin\/api\/[\w-]+\/graphql\.json$/.test(url.pathname)) {
      return { status: 404, body: { errors: 'Not Found' } };
    }
    const admitted = bucket.fits(t, SHOPIFY_QUERY_COST);
    if (admitted) bucket.spend(t, SHOPIFY_QUERY_COST);
    const cost = {
      requestedQueryCost: SHOPIFY_QUERY_COST,
      actualQueryCost: admitted ? SHOPIFY_QUERY_COST : null,
      throttleStatus: {
        maximumAvailable: limits.maximumAvailable,
        currentlyAvailable: Math.floor(bucket.availableAt(t)),
        restoreRate: limits.restoreRate,
      },
    };
    if (admitted) {
      return { status: 200, body: { data: { shop: { name: 'sim' } }, extensions: { cost } } };
    }
    return {
      status: 200,
      refused: true,
      body: {
        errors: [
          {
            message: 'Throttled',
            extensions: {
              code: 'THROTTLED',
              documentation: 'https://shopify.dev/api/usage/rate-limits',
            },
          },
        ],
        extensions: { cost },
      },
    };
  });
}

/** Whether a Shopify answer body is a THROTTLED refusal. */
export function isThrottled(body: string): boolean {
  try {
    const errors = (JSON.parse(body) as { errors?: { extensions?: { code?: string } }[] }).errors;
    return Array.isArray(errors) && errors.some((e) => e?.extensions?.code === 'THROTTLED');
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------- Slack

/** Slack's tiers scaled: a minute becomes 2 s, and the per-minute counts divided by 5 (tier 2's 20 → 4). */
export const SLACK = {
  windowMs: 2000,
  methods: new Map<string, number>([
    ['users.list', 4], // tier 2
    ['conversations.history', 10], // tier 3
    ['reactions.add', 10], // tier 3
    ['users.info', 20], // tier 4
  ]),
};

/**
 * Slack's Web API (`POST /api/{method}`): each method limited on its own by its tier, per
 * workspace and app. Nothing is announced before a refusal: an admitted call is `200 { ok: true }`
 * with no rate-limit header; a refused one is `429` with `Retry-After` (seconds) and
 * `{ ok: false, error: "ratelimited" }`. An unknown method answers `200 { ok: false, error:
 * "unknown_method" }` as Slack does.
 *
 * Follows "Rate limits" (docs.slack.dev/apis/web-api/rate-limits, formerly
 * api.slack.com/docs/rate-limits: tiers 1-4 per method per workspace per app, HTTP 429 with
 * Retry-After).
 */
export function startSlack(
  options: ShapeOptions & { limits?: typeof SLACK } = {},
): Promise<ShapeServer> {
  const now = options.now ?? Date.now;
  const limits = options.limits ?? SLACK;
  const windows = new Map<string, FixedWindow>();
  for (const [name, limit] of limits.methods)
    windows.set(name, new FixedWindow(limit, limits.windowMs));
  return serve('Slack (per-method tiers, Retry-After only on refusal)', ({ url }) => {
    const t = now();
    const window = url.pathname.startsWith('/api/')
      ? windows.get(url.pathname.slice(5))
      : undefined;
    if (window === undefined) return { status: 200, body: { ok: false, error: 'unknown_method' } };
    if (window.take(t)) return { status: 200, body: { ok: true } };
    return {
      status: 429,
      headers: { 'retry-after': String(Math.max(1, seconds(window.resetMsAt(t)))) },
      body: { ok: false, error: 'ratelimited' },
    };
  });
}

// ---------------------------------------------------------------- X

/** X's 15-minute windows scaled to 3 s; counts per endpoint scaled to fit a few calls each. */
export const X_API = {
  windowMs: 3000,
  endpoints: [
    { name: 'search recent', pattern: /^\/2\/tweets\/search\/recent$/, limit: 5 },
    { name: 'user posts', pattern: /^\/2\/users\/\d+\/tweets$/, limit: 10 },
    { name: 'post lookup', pattern: /^\/2\/tweets\/\d+$/, limit: 15 },
  ],
};

/**
 * X API v2: each endpoint its own window (per app here: bearer token). Every answer carries
 * `x-rate-limit-limit`, `x-rate-limit-remaining` and `x-rate-limit-reset` (epoch seconds) for the
 * endpoint called, with nothing naming which limit it is; a refusal is a 429 with a problem body
 * (`title: "Too Many Requests"`) and no Retry-After.
 *
 * Follows "Rate limits" (docs.x.com/x-api/fundamentals/rate-limits and
 * developer.x.com/en/docs/twitter-api/rate-limits: per-endpoint limits in 15-minute windows, the
 * x-rate-limit-* headers, 429).
 */
export function startX(
  options: ShapeOptions & { limits?: typeof X_API } = {},
): Promise<ShapeServer> {
  const now = options.now ?? Date.now;
  const limits = options.limits ?? X_API;
  const endpoints = limits.endpoints.map((e) => ({
    ...e,
    window: new FixedWindow(e.limit, limits.windowMs),
  }));
  return serve('X (per-endpoint windows, unnamed x-rate-limit-*)', ({ method, url }) => {
    const t = now();
    const endpoint =
      method === 'GET' ? endpoints.find((e) => e.pattern.test(url.pathname)) : undefined;
    if (endpoint === undefined) {
      return { status: 404, body: { title: 'Not Found Error', status: 404 } };
    }
    const admitted = endpoint.window.take(t);
    const headers = {
      'x-rate-limit-limit': String(endpoint.window.limit),
      'x-rate-limit-remaining': String(endpoint.window.remainingAt(t)),
      'x-rate-limit-reset': String(epochSeconds(t, endpoint.window.resetMsAt(t))),
    };
    if (admitted) return { status: 200, headers, body: { data: { id: '1', text: 'ok' } } };
    return {
      status: 429,
      headers,
      body: {
        title: 'Too Many Requests',
        detail: 'Too Many Requests',
        type: 'about:blank',
        status: 429,
      },
    };
  });
}

// ---------------------------------------------------------------- Stripe

/** Stripe's sandbox figure as it is: 25 operations a second. */
export const STRIPE = { rate: 25 };

/**
 * Stripe: one rate for the account (a bucket of 25 refilled at 25 a second), and a bare 429 when
 * it is spent: no rate-limit header, no Retry-After, a JSON `error` with `code: rate_limit`.
 *
 * Follows "Rate limits" (docs.stripe.com/rate-limits: the global rate limiter, 25 operations a
 * second in a sandbox, 429 responses).
 */
export function startStripe(options: ShapeOptions & { rate?: number } = {}): Promise<ShapeServer> {
  const now = options.now ?? Date.now;
  const rate = options.rate ?? STRIPE.rate;
  const bucket = new TokenBucket(rate, 1000);
  return serve('Stripe (one rate, bare 429)', () => {
    const t = now();
    if (bucket.fits(t, 1)) {
      bucket.spend(t, 1);
      return { status: 200, body: { object: 'customer', id: 'cus_sim' } };
    }
    return {
      status: 429,
      body: {
        error: {
          type: 'invalid_request_error',
          code: 'rate_limit',
          message: 'Request rate limit exceeded (simulated).',
        },
      },
    };
  });
}

// ---------------------------------------------------------------- workloads and least times

/** One call as a workload describes it; `path` includes any query. */
export interface ShapeCall {
  method: 'GET' | 'POST';
  path: string;
  /** Sent as JSON when present. */
  body?: unknown;
}

/** A worker of a workload: `calls` calls, at most `concurrency` in flight. */
export interface ShapeWorker {
  name: string;
  calls: number;
  concurrency: number;
  call(index: number): ShapeCall;
  /** The least time this worker's calls can take against its budget, in milliseconds. */
  leastMs: number;
}

/** A provider shape with the typical workload for it. */
export interface ShapeScenario {
  /** Short name, e.g. `github`; `--scenario` in the bench matches it. */
  id: string;
  /** What it is, as the table says it. */
  name: string;
  start(options?: ShapeOptions): Promise<ShapeServer>;
  /** The workers, all started at once. */
  workers: ShapeWorker[];
  /** Whether a call ended well: a 2xx, and for Shopify no THROTTLED in the body. */
  ok(status: number, body: string): boolean;
}

/** The scenario's least time: its slowest worker's, in milliseconds. */
export const leastMs = (scenario: ShapeScenario): number =>
  Math.max(...scenario.workers.map((w) => w.leastMs));

/** Calls in a row through a fixed window: the least time is the windows after the first. */
export const windowLeastMs = (calls: number, limit: number, windowMs: number): number =>
  (Math.ceil(calls / limit) - 1) * windowMs;

/** Calls of `cost` each through a full token bucket of `capacity` refilled over `windowMs`. */
export const bucketLeastMs = (
  calls: number,
  cost: number,
  capacity: number,
  windowMs: number,
): number => Math.max(0, ((calls * cost - capacity) * windowMs) / capacity);

const is2xx = (status: number) => status >= 200 && status < 300;

/** The prompt every LLM call of the workloads sends: 100 tokens, with `max_tokens` 100. */
const PROMPT = 'x'.repeat(400);
const MAX_TOKENS = 100;
const LLM_COST = promptTokens(PROMPT) + MAX_TOKENS;

/** A Discord snowflake for channel `n`: 18 digits, as Discord's ids are (clients match on that). */
export const channelId = (n: number): string => String(1_234_567_890_123_456_00n + BigInt(n));

/** The eight shapes and their workloads (issue 26's table, in its order). */
export function shapeScenarios(): ShapeScenario[] {
  const openai = (model: string): ShapeWorker => {
    const l = OPENAI.models.get(model) as ModelLimits;
    return {
      name: model,
      calls: 20,
      concurrency: 4,
      call: () => ({
        method: 'POST',
        path: '/v1/chat/completions',
        body: { model, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: PROMPT }] },
      }),
      leastMs: Math.max(
        bucketLeastMs(20, 1, l.requests, OPENAI.windowMs),
        bucketLeastMs(20, LLM_COST, l.tokens, OPENAI.windowMs),
      ),
    };
  };
  const anthropic = (model: string): ShapeWorker => {
    const l = ANTHROPIC.models.get(model) as AnthropicModelLimits;
    return {
      name: model,
      calls: 20,
      concurrency: 4,
      call: () => ({
        method: 'POST',
        path: '/v1/messages',
        body: { model, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: PROMPT }] },
      }),
      leastMs: Math.max(
        bucketLeastMs(20, 1, l.requests, ANTHROPIC.windowMs),
        bucketLeastMs(20, promptTokens(PROMPT), l.inputTokens, ANTHROPIC.windowMs),
        bucketLeastMs(20, MAX_TOKENS, l.outputTokens, ANTHROPIC.windowMs),
      ),
    };
  };
  return [
    {
      id: 'github',
      name: 'GitHub (core and search resources)',
      start: (o) => startGitHub(o),
      ok: is2xx,
      workers: [
        {
          name: 'ordinary',
          calls: 200,
          concurrency: 1,
          call: (i) => ({ method: 'GET', path: `/repos/octo/hello/issues/${i + 1}` }),
          leastMs: windowLeastMs(200, GITHUB.core, GITHUB.windowMs),
        },
        {
          name: 'search',
          calls: 30,
          concurrency: 1,
          call: (i) => ({ method: 'GET', path: `/search/issues?q=bug+${i}` }),
          leastMs: windowLeastMs(30, GITHUB.search, GITHUB.windowMs),
        },
      ],
    },
    {
      id: 'discord',
      name: 'Discord (buckets + channel, global)',
      start: (o) => startDiscord(o),
      ok: is2xx,
      workers: Array.from({ length: 10 }, (_, c) => ({
        name: `channel ${c + 1}`,
        calls: 10,
        concurrency: 1,
        call: (i: number): ShapeCall => ({
          method: 'POST',
          path: `/api/v10/channels/${channelId(c)}/messages`,
          body: { content: `message ${i}` },
        }),
        leastMs: windowLeastMs(10, DISCORD.perChannel, DISCORD.windowMs),
      })),
    },
    {
      id: 'openai',
      name: 'OpenAI (requests and tokens per model, model in the body)',
      start: (o) => startOpenAI(o),
      ok: is2xx,
      workers: [openai('gpt-4o'), openai('gpt-4o-mini')],
    },
    {
      id: 'anthropic',
      name: 'Anthropic (per model, input and output tokens)',
      start: (o) => startAnthropic(o),
      ok: is2xx,
      workers: [anthropic('claude-sonnet-4-5'), anthropic('claude-haiku-4-5')],
    },
    {
      id: 'shopify',
      name: 'Shopify GraphQL (cost in the body, THROTTLED at 200)',
      start: (o) => startShopify(o),
      ok: (status, body) => is2xx(status) && !isThrottled(body),
      workers: [
        {
          name: 'queries',
          calls: 30,
          concurrency: 4,
          call: () => ({
            method: 'POST',
            path: '/admin/api/2025-01/graphql.json',
            body: { query: '{ shop { name } }' },
          }),
          leastMs: bucketLeastMs(
            30,
            SHOPIFY_QUERY_COST,
            SHOPIFY.maximumAvailable,
            (SHOPIFY.maximumAvailable / SHOPIFY.restoreRate) * 1000,
          ),
        },
      ],
    },
    {
      id: 'slack',
      name: 'Slack (per-method tiers, nothing announced before a refusal)',
      start: (o) => startSlack(o),
      ok: is2xx,
      workers: [...SLACK.methods].map(([method, limit]) => ({
        name: method,
        calls: 10,
        concurrency: 1,
        call: (): ShapeCall => ({ method: 'POST', path: `/api/${method}`, body: {} }),
        leastMs: windowLeastMs(10, limit, SLACK.windowMs),
      })),
    },
    {
      id: 'x',
      name: 'X (per-endpoint windows, unnamed x-rate-limit-*)',
      start: (o) => startX(o),
      ok: is2xx,
      workers: X_API.endpoints.map((e, n) => ({
        name: e.name,
        calls: 10,
        concurrency: 1,
        call: (i: number): ShapeCall => ({
          method: 'GET',
          path: [
            `/2/tweets/search/recent?query=q${i}`,
            `/2/users/${i + 1}/tweets`,
            `/2/tweets/${i + 1}`,
          ][n] as string,
        }),
        leastMs: windowLeastMs(10, e.limit, X_API.windowMs),
      })),
    },
    {
      id: 'stripe',
      name: 'Stripe (one rate, bare 429)',
      start: (o) => startStripe(o),
      ok: is2xx,
      workers: [
        {
          name: 'reads',
          calls: 100,
          concurrency: 10,
          call: (i) => ({ method: 'GET', path: `/v1/customers/cus_${i}` }),
          leastMs: bucketLeastMs(100, 1, STRIPE.rate, 1000),
        },
      ],
    },
  ];
}

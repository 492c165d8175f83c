/**
 * The normalised shape every header family is parsed into.
 *
 * @module
 */

/** Which header family (or provider convention) a {@link RateLimitInfo} was read from. */
export type RateLimitSource =
  /** `RateLimit` / `RateLimit-Policy` structured lists of the current IETF draft. */
  | 'ietf'
  /** Combined `RateLimit: limit=100, remaining=50, reset=5` (draft 7 and express-rate-limit). */
  | 'draft-7'
  /** `RateLimit-Limit` / `-Remaining` / `-Reset` (drafts up to 6). */
  | 'draft-6'
  /** GitHub's `x-ratelimit-*` with `x-ratelimit-resource` (and `x-ratelimit-used`). */
  | 'github'
  /** OpenAI-style `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`. */
  | 'openai'
  /** Anthropic's `anthropic-ratelimit-*-{limit,remaining,reset}` with RFC 3339 resets. */
  | 'anthropic'
  /** Discord's `x-ratelimit-*` with `reset-after`, `bucket`, `global`, `scope`. */
  | 'discord'
  /** Shopify's `X-Shopify-Shop-Api-Call-Limit: used/size`. */
  | 'shopify'
  /** Azure Resource Manager's `x-ms-ratelimit-remaining-*`. */
  | 'azure'
  /** HubSpot's `X-HubSpot-RateLimit-*`: interval, secondly and daily policies. */
  | 'hubspot'
  /** Salesforce's `Sforce-Limit-Info: api-usage=used/limit`. */
  | 'salesforce'
  /** Plain `X-RateLimit-Limit` / `-Remaining` / `-Reset`, with `-Used` (Reddit, GitHub). */
  | 'x-ratelimit'
  /** Hyphenated `X-Rate-Limit-Limit` / `-Remaining` / `-Reset` (X/Twitter, Okta, Zendesk). */
  | 'x-rate-limit'
  /** Only a retry hint (`Retry-After`, `retry-after-ms`, `x-ms-retry-after-ms`), no quota. */
  | 'retry-after'
  /**
   * Not a header: a GraphQL answer's JSON body, in cost points (Shopify's `extensions.cost`,
   * GitHub's `data.rateLimit`), read by the client when no header said anything (docs/body-limits.md).
   */
  | 'graphql';

/**
 * One quota the server enforces, as far as the headers describe it. Every field is optional:
 * servers send what they send, and a value that could not be trusted is left out.
 */
export interface QuotaPolicy {
  /**
   * The policy's name: the IETF item name, GitHub's resource (`core`, `search`), OpenAI's and
   * Anthropic's dimension (`requests`, `tokens`, `input-tokens`), Discord's bucket. Absent for
   * formats that do not name policies.
   */
  name?: string;
  /** Quota units allowed per window (IETF `q`). */
  limit?: number;
  /** Quota units left in the current window (IETF `r`). */
  remaining?: number;
  /** Milliseconds from `now` until quota is made available again (IETF `t`). At least 0. */
  resetMs?: number;
  /** Length of the policy's window in milliseconds (IETF `w`). */
  windowMs?: number;
  /**
   * What the quota counts: `requests` (the default), `content-bytes`, `concurrent-requests`, or a
   * provider's unit such as `tokens`.
   */
  unit?: string;
  /** The IETF partition key (`pk`), base64-encoded. */
  partitionKey?: string;
  /** A provider-specific scope: Discord's `user` / `global` / `shared`. */
  scope?: string;
}

/**
 * Everything a response said about rate limits, normalised. Times are milliseconds from the `now`
 * the parser was given; counts are quota units.
 *
 * The top-level `limit`, `remaining`, `resetMs` and `windowMs` repeat the most restrictive of
 * `policies` (see {@link mostRestrictive} for the rule); `retryAfterMs` is the server's explicit
 * retry hint and takes precedence over any reset when deciding when to retry.
 */
export interface RateLimitInfo {
  /** Limit of the most restrictive policy. */
  limit?: number;
  /** Remaining units of the most restrictive policy. */
  remaining?: number;
  /** Milliseconds until the most restrictive policy resets. */
  resetMs?: number;
  /** Milliseconds the server asked the client to wait (`Retry-After` and its variants). */
  retryAfterMs?: number;
  /** Window of the most restrictive policy, in milliseconds. */
  windowMs?: number;
  /** Name of the most restrictive policy, when it has one. */
  policy?: string;
  /** Every policy the headers described, most restrictive first. May be empty. */
  policies: QuotaPolicy[];
  /** The header family the policies were read from. */
  source: RateLimitSource;
  /** Discord's `X-RateLimit-Global: true`: the limit hit is global to the caller, not per route. */
  global?: boolean;
}

/**
 * The header fields that name which budget a response was counted in: GitHub's
 * `x-ratelimit-resource`, Discord's `X-RateLimit-Bucket` with its scope and global flag, and the
 * IETF draft's partition key (`pk`). Each budget-naming family describes one policy, as the
 * provider does; `rate-limit-headers.ts` picks it and calls these writers. Times are never early:
 * GitHub's reset is rounded up to a whole second, Discord's to a whole millisecond.
 *
 * @module
 */
import { createHash } from 'node:crypto';

/** What these writers read of a policy's report (a subset of `PolicyReport`). */
export interface BudgetReport {
  /** The policy's name. */
  name: string;
  /** Units the limit holds at once (a window's limit, a bucket's capacity). */
  limit: number;
  /** Units left now. */
  remaining: number;
  /** Milliseconds until more units come back. */
  resetMs: number;
  /** The budget's name in GitHub's and Discord's fields (the limit's `resource`, or its default). */
  resource?: string;
  /** A server-wide limit: shared by every route, Discord's global limit. */
  serverWide?: boolean;
}

/** Discord's message on a 429, as its API words it. */
const DISCORD_MESSAGE = 'You are being rate limited.';

/**
 * An opaque bucket name for a policy, as Discord's `X-RateLimit-Bucket` looks: the first 32
 * hexadecimal digits of the SHA-256 of its name. The same for every key of the limit (every
 * channel), different for two limits.
 */
export function bucketHash(name: string): string {
  return createHash('sha256').update(name).digest('hex').slice(0, 32);
}

/**
 * The IETF partition key of one budget, as an RFC 9651 byte sequence (`:base64:`): the first 12
 * bytes of a SHA-256 of the limit's namespace and the request's key, so that every key of a limit
 * has its own and the key itself (an API key, a client's address) is never sent back.
 */
export function partitionKey(namespace: string, key: string): string {
  const digest = createHash('sha256').update(namespace).update('\n').update(key).digest();
  return `:${digest.subarray(0, 12).toString('base64')}:`;
}

/**
 * GitHub's fields for `top`: `x-ratelimit-limit`, `-remaining`, `-used` (the limit less what
 * remains), `-reset` (Unix seconds, rounded up) and `-resource`, as GitHub's REST API sends them.
 * @param now epoch milliseconds.
 */
export function githubFields(top: BudgetReport, now: number): string[] {
  return [
    'x-ratelimit-limit',
    String(top.limit),
    'x-ratelimit-remaining',
    String(top.remaining),
    'x-ratelimit-used',
    String(Math.max(0, top.limit - top.remaining)),
    'x-ratelimit-reset',
    String(Math.ceil((now + top.resetMs) / 1000)),
    'x-ratelimit-resource',
    top.resource ?? top.name,
  ];
}

/** Milliseconds as Discord's seconds with a fraction (`1.25`), rounded up to a millisecond. */
function discordSeconds(ms: number): string {
  return (Math.ceil(ms) / 1000).toFixed(3);
}

/**
 * Discord's fields. The bucket is the route's own most restrictive policy, `bucket` (the server's
 * limits, shared by every route, are Discord's global limit and have no bucket):
 * `X-RateLimit-Limit`, `-Remaining`, `-Reset` (Unix seconds with a fraction), `-Reset-After`
 * (seconds with a fraction) and `-Bucket`. On a refusal, `X-RateLimit-Scope`: `global` with
 * `X-RateLimit-Global: true` when the policy refusing, `refusing`, is a server-wide one, else `user`.
 * @param now epoch milliseconds.
 */
export function discordFields(
  bucket: BudgetReport | undefined,
  refusing: BudgetReport | undefined,
  now: number,
): string[] {
  const out: string[] = [];
  if (bucket !== undefined) {
    out.push(
      'X-RateLimit-Limit',
      String(bucket.limit),
      'X-RateLimit-Remaining',
      String(bucket.remaining),
      'X-RateLimit-Reset',
      discordSeconds(Math.ceil(now) + bucket.resetMs),
      'X-RateLimit-Reset-After',
      discordSeconds(bucket.resetMs),
      'X-RateLimit-Bucket',
      bucket.resource ?? bucketHash(bucket.name),
    );
  }
  if (refusing?.serverWide) out.push('X-RateLimit-Global', 'true', 'X-RateLimit-Scope', 'global');
  else if (refusing !== undefined) out.push('X-RateLimit-Scope', 'user');
  return out;
}

/**
 * Discord's 429 body: `{ "message", "retry_after" (seconds with a fraction, rounded up to a
 * millisecond), "global" }`.
 */
export function discordBody(
  refusing: BudgetReport & { retryAfterMs: number },
): Record<string, unknown> {
  return {
    message: DISCORD_MESSAGE,
    retry_after: Math.ceil(refusing.retryAfterMs) / 1000,
    global: refusing.serverWide === true,
  };
}

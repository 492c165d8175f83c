/**
 * Which budget an answer says it was counted against: the scope it names, in the dialects that
 * name one. Only names the server gives for that purpose count, so a host whose answers name no
 * scope keeps one budget, as before:
 *
 * - GitHub: `x-ratelimit-resource` (`core`, `search`, `graphql`...), each resource its own budget.
 * - Discord: `X-RateLimit-Bucket`, kept per major parameter of the path (the channel, guild or
 *   webhook: {@link majorOf}); `X-RateLimit-Global` is the host's, not a bucket's.
 * - The IETF fields: a policy's partition key (`pk`).
 *
 * Policy names alone are not scopes: a host may declare a per-second and a per-day policy that both
 * apply to every route, and OpenAI's `requests` and `tokens` are dimensions of one budget.
 *
 * @module
 */
import type { RateLimitInfo } from '../../headers/types.js';

/** Longest scope name taken from an answer, in characters; a longer one names no scope. */
export const MAX_SCOPE_NAME = 128;

/** What an answer names: its scope, and whether that scope is split by the path's major parameter. */
export interface NamedScope {
  /** The server's name for the budget (prefixed by the dialect: `github:search`, `pk:...`). */
  name: string;
  /** Discord: the budget is the bucket's per major parameter (see `route-key.ts`). */
  perMajor: boolean;
}

/** A control character: never in a scope's name, nor in a route shared through the store. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters.
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** A name fit to name a scope (the server's, or a request's model): printable, not too long. */
export function usable(name: unknown): name is string {
  return (
    typeof name === 'string' &&
    name.length > 0 &&
    name.length <= MAX_SCOPE_NAME &&
    !CONTROL_CHARACTERS.test(name)
  );
}

/** The scope an answer's fields name, or `undefined` (see the module comment). */
export function scopeOfAnswer(info: RateLimitInfo): NamedScope | undefined {
  const first = info.policies[0];
  if (first === undefined) return undefined;
  switch (info.source) {
    case 'github':
      return usable(first.name) ? { name: `github:${first.name}`, perMajor: false } : undefined;
    case 'discord':
      return usable(first.name) ? { name: `discord:${first.name}`, perMajor: true } : undefined;
    case 'ietf':
    case 'draft-7':
    case 'draft-6':
      for (const p of info.policies) {
        if (usable(p.partitionKey)) return { name: `pk:${p.partitionKey}`, perMajor: false };
      }
      return undefined;
    default:
      return undefined;
  }
}

/**
 * Earlier drafts of the IETF fields, still sent by express-rate-limit, @fastify/rate-limit and
 * many gateways:
 *
 * - draft 7 (and express-rate-limit's `draft-7`): one dictionary,
 *   `RateLimit: limit=100, remaining=50, reset=5`, with `RateLimit-Policy: 100;w=60`;
 * - drafts up to 6: `RateLimit-Limit: 100`, `RateLimit-Remaining: 50`, `RateLimit-Reset: 5`,
 *   with the same `RateLimit-Policy`; `RateLimit-Limit` may also carry the policies
 *   (`RateLimit-Limit: 10, 10;w=1, 1000;w=3600`), its first member being the current limit.
 *
 * `reset` is delta-seconds in the drafts; values that look like Unix times are still understood
 * (see {@link parseResetMs}).
 *
 * @module
 */
import { type List, parseDictionary } from 'structured-headers';
import type { FieldMap } from './field-map.js';
import { safeList } from './ietf.js';
import { finishPolicy } from './policy.js';
import type { QuotaPolicy } from './types.js';
import { clampDelay, parseCount, parseRepeated, parseResetMs } from './values.js';

interface Current {
  limit?: number;
  remaining?: number;
  resetMs?: number;
}

function integer(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** `limit=100, remaining=50, reset=5` */
function parseCombined(value: string | undefined): Current | undefined {
  if (value === undefined) return undefined;
  let dict: ReturnType<typeof parseDictionary>;
  try {
    dict = parseDictionary(value);
  } catch {
    return undefined;
  }
  const read = (key: string) => {
    const member = dict.get(key);
    return member && !Array.isArray(member[0]) ? integer(member[0]) : undefined;
  };
  const current: Current = { limit: read('limit'), remaining: read('remaining') };
  const reset = read('reset');
  if (reset !== undefined) current.resetMs = clampDelay(reset * 1000);
  const empty =
    current.limit === undefined && current.remaining === undefined && current.resetMs === undefined;
  return empty ? undefined : current;
}

/** `100;w=60, 1000;w=3600`: integer items, each a quota with an optional window in seconds. */
function parseLegacyPolicies(list: List | undefined): QuotaPolicy[] {
  const policies: QuotaPolicy[] = [];
  for (const [value, params] of list ?? []) {
    const limit = integer(value);
    if (limit === undefined) continue;
    const window = integer(params.get('w'));
    policies.push({ limit, windowMs: window ? clampDelay(window * 1000) : undefined });
  }
  return policies;
}

/**
 * Attaches the current numbers to the declared policy they describe: the one with the same limit,
 * else the only one. When none matches, the current numbers become a policy of their own.
 */
function merge(current: Current, declared: QuotaPolicy[]): QuotaPolicy[] {
  const match =
    declared.find((p) => current.limit !== undefined && p.limit === current.limit) ??
    (declared.length === 1 && current.limit === undefined ? declared[0] : undefined);
  const policies = declared.map((p) => (p === match ? { ...p, ...defined(current) } : p));
  if (!match) policies.unshift({ ...current });
  return policies.map(finishPolicy).filter((p): p is QuotaPolicy => p !== undefined);
}

function defined(current: Current): Current {
  const out: Current = {};
  if (current.limit !== undefined) out.limit = current.limit;
  if (current.remaining !== undefined) out.remaining = current.remaining;
  if (current.resetMs !== undefined) out.resetMs = current.resetMs;
  return out;
}

/** Draft 7's combined `RateLimit` dictionary, or `undefined` when the field is not one. */
export function parseDraft7(fields: FieldMap): QuotaPolicy[] | undefined {
  const current = parseCombined(fields.get('ratelimit'));
  if (!current) return undefined;
  return merge(current, parseLegacyPolicies(safeList(fields.get('ratelimit-policy'))));
}

/**
 * The count at the head of a structured list whose first item carries parameters, as Docker Hub
 * sends (`ratelimit-remaining: 76;w=21600`); `undefined` for anything else.
 */
function parameterisedCount(field: string | undefined): number | undefined {
  if (field === undefined || !field.includes(';')) return undefined;
  const first = safeList(field)?.[0];
  return first && !Array.isArray(first[0]) && first[1].size > 0 ? integer(first[0]) : undefined;
}

/**
 * Draft 6's separate `RateLimit-Limit` / `-Remaining` / `-Reset`, or `undefined` when absent.
 * Counts may be decimals (`597.0`, see {@link parseCount}). `RateLimit-Limit` may also be a list:
 * `10, 10;w=1, 1000;w=3600` (the current limit, then the policies) or `100;w=21600` (Docker Hub: the
 * limit and its window in one item); `RateLimit-Remaining` may carry the window too
 * (`76;w=21600`).
 */
export function parseDraft6(fields: FieldMap, now: number): QuotaPolicy[] | undefined {
  const limitField = fields.get('ratelimit-limit');
  const remainingField = fields.get('ratelimit-remaining');
  const resetField = fields.get('ratelimit-reset');
  const policyField = fields.get('ratelimit-policy');
  if (limitField === undefined && remainingField === undefined && resetField === undefined) {
    if (policyField === undefined) return undefined;
  }
  const declared = parseLegacyPolicies(safeList(policyField));
  let limit = parseRepeated(limitField, parseCount);
  if (limit === undefined && limitField !== undefined) {
    const list = safeList(limitField) ?? [];
    const [first, ...rest] = list;
    if (first && !Array.isArray(first[0])) {
      limit = integer(first[0]);
      // `100;w=21600` is itself a policy; `10, 10;w=1, ...` declares the ones after the first.
      const windowed = first[1].has('w');
      if (declared.length === 0) declared.push(...parseLegacyPolicies(windowed ? list : rest));
    }
  }
  const current: Current = {
    limit,
    remaining: parseRepeated(remainingField, parseCount) ?? parameterisedCount(remainingField),
    resetMs: parseRepeated(resetField, (v) => parseResetMs(v, now)),
  };
  const policies = merge(current, declared);
  return policies.length > 0 ? policies : undefined;
}

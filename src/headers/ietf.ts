/**
 * The `RateLimit-Policy` and `RateLimit` fields of the current IETF draft
 * (draft-ietf-httpapi-ratelimit-headers-10 and later): Structured Field lists (RFC 9651) whose
 * items are policy names (Strings) with parameters.
 *
 * ```
 * RateLimit-Policy: "burst";q=100;w=60,"daily";q=1000;w=86400
 * RateLimit: "burst";r=12;t=8
 * ```
 *
 * Parsing is done by the `structured-headers` library. A field that does not parse as a List is
 * ignored whole, as the draft requires of malformed fields; an item that lacks its required
 * parameter (`q`, `r`) or carries one of the wrong type is ignored alone.
 *
 * @module
 */
import { type BareItem, type List, type Parameters, parseList, Token } from 'structured-headers';
import type { FieldMap } from './field-map.js';
import { finishPolicy } from './policy.js';
import type { QuotaPolicy } from './types.js';
import { clampDelay } from './values.js';

/**
 * Parses a Structured Field list, or gives `undefined` for a missing or malformed field (a
 * malformed field is ignored whole, never half-read).
 */
export function safeList(value: string | undefined): List | undefined {
  if (value === undefined) return undefined;
  try {
    return parseList(value);
  } catch {
    return undefined;
  }
}

/** A policy name: an sf-string, or an sf-token from servers that send the name unquoted. */
function policyName(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value instanceof Token) return value.toString();
  return undefined;
}

function nonNegativeInteger(value: BareItem | undefined): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

function base64(value: BareItem | undefined): string | undefined {
  if (!(value instanceof ArrayBuffer)) return undefined;
  let binary = '';
  for (const byte of new Uint8Array(value)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

interface NamedItem {
  name: string;
  params: Parameters;
}

/** The named items of a list; inner lists and items that are not names are skipped. */
function namedItems(list: List | undefined): NamedItem[] {
  const items: NamedItem[] = [];
  for (const member of list ?? []) {
    const [value, params] = member;
    if (Array.isArray(value)) continue;
    const name = policyName(value);
    if (name !== undefined) items.push({ name, params });
  }
  return items;
}

/**
 * The named items of the last `RateLimit-Policy` value parsed, kept with that value: a server
 * sends the same policy field on every response, so it is parsed once, not per response. One
 * entry, read only (the items are never changed once made).
 */
let lastPolicy: string | undefined;
let lastItems: NamedItem[] = [];

function policyItems(value: string | undefined): NamedItem[] {
  if (value !== lastPolicy) {
    lastItems = namedItems(safeList(value));
    lastPolicy = value;
  }
  return lastItems;
}

/**
 * Reads the IETF fields. Returns `undefined` when neither field holds a named item (so older
 * drafts, whose items are integers or dictionaries, fall through to their own parser).
 */
export function parseIetfFields(fields: FieldMap): QuotaPolicy[] | undefined {
  const declared = policyItems(fields.get('ratelimit-policy'));
  const current = namedItems(safeList(fields.get('ratelimit')));
  if (declared.length === 0 && current.length === 0) return undefined;

  const byName = new Map<string, QuotaPolicy>();
  for (const { name, params } of declared) {
    const limit = nonNegativeInteger(params.get('q'));
    if (limit === undefined || byName.has(name)) continue;
    const window = nonNegativeInteger(params.get('w'));
    const unit = params.get('qu');
    byName.set(name, {
      name,
      limit,
      windowMs: window !== undefined && window > 0 ? clampDelay(window * 1000) : undefined,
      unit: typeof unit === 'string' ? unit : undefined,
      partitionKey: base64(params.get('pk')),
    });
  }
  for (const { name, params } of current) {
    const remaining = nonNegativeInteger(params.get('r'));
    const known = byName.get(name);
    // The first report of a name counts (the policy field never sets `remaining`).
    if (remaining === undefined || known?.remaining !== undefined) continue;
    const reset = nonNegativeInteger(params.get('t'));
    const policy = known ?? { name };
    policy.remaining = remaining;
    policy.resetMs = reset === undefined ? undefined : clampDelay(reset * 1000);
    policy.partitionKey ??= base64(params.get('pk'));
    byName.set(name, policy);
  }
  const policies: QuotaPolicy[] = [];
  for (const policy of byName.values()) {
    const finished = finishPolicy(policy);
    if (finished) policies.push(finished);
  }
  return policies;
}

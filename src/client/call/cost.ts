/**
 * What a call costs, per unit. A server may limit a caller in several units at once: requests per
 * minute and tokens per minute (OpenAI, Anthropic, Azure OpenAI, Gemini), or a quota of
 * "requests" where one call counts as several. A call's cost is a number (units of the `requests`
 * kind) or a vector, `{ requests: 1, tokens: 1200 }`; each of the server's policies is charged the
 * cost of its own unit (see {@link chargeFor}).
 *
 * @module
 */

/**
 * A cost per unit: `requests` (default 1), and any unit the server's policies count in, by unit
 * (`tokens`) or by the policy's name (`input-tokens`, `output-tokens` for Anthropic's). Every amount
 * is a number of units from 0 to 1e9.
 */
export interface CostVector {
  /** Units of the `requests` kind: what a number cost means. @default 1 */
  requests?: number;
  /** Tokens (OpenAI's and Anthropic's `tokens` policies, Gemini's TPM). */
  tokens?: number;
  /** Any other unit, or a policy's name. */
  [unit: string]: number | undefined;
}

/** Most units a cost may name, `requests` included (a bound on what a call makes the client hold). */
export const MAX_COST_UNITS = 16;

/** Most units of any kind a cost may name. */
export const MAX_COST = 1e9;

/**
 * A plain object: its prototype is `Object.prototype` (of any realm) or `null`. Not a Promise
 * (an `async` cost function), a `Date`, an array or any class instance, whose own keys say nothing
 * of a cost (they read as `{}`, one request).
 */
function isVector(v: unknown): v is CostVector {
  if (typeof v !== 'object' || v === null) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/**
 * `value` as a {@link Cost}: a number from 0 to `maxRequests` (at most {@link MAX_COST}), or a
 * plain object of at most {@link MAX_COST_UNITS} units whose `requests` is in that range and whose
 * other units are from 0 to {@link MAX_COST}; `undefined` for anything else. Each amount is read
 * once (a getter included), and the cost is made of what was read and checked.
 */
export function costOf(value: unknown, maxRequests = MAX_COST): Cost | undefined {
  const bound = Math.min(maxRequests, MAX_COST);
  if (!isVector(value)) return fits(value, bound) ? toCost(value as number) : undefined;
  const entries = Object.entries(value);
  if (entries.length > MAX_COST_UNITS) return undefined;
  let requests = 1;
  const units: [string, number][] = [];
  for (const [unit, amount] of entries) {
    if (!fits(amount, unit === 'requests' ? bound : MAX_COST)) return undefined;
    if (unit === 'requests') requests = amount as number;
    else units.push([unit, amount as number]);
  }
  return units.length > 0 ? { requests, units } : { requests };
}

/** Whether `v` is a number from 0 to `max`. */
function fits(v: unknown, max: number): boolean {
  return typeof v === 'number' && v >= 0 && v <= max;
}

/** What a cost must be, said of the `value` given; `bound`: the most requests it may cost. */
export function costProblem(value: unknown, bound: number | string = MAX_COST): string {
  if (isVector(value)) {
    return `must be { requests, tokens, ... }: at most ${MAX_COST_UNITS} units, requests from 0 to ${bound}, any other from 0 to ${MAX_COST}`;
  }
  const problem = `must be a number from 0 to ${bound}`;
  if (typeof value === 'number') return problem;
  const vector = `${problem}, or { requests, tokens, ... }`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return vector;
  // An `async` cost function: its Promise has no amounts yet when the call is admitted.
  return `${vector} as a plain object${'then' in value ? ', not a Promise: a cost is read synchronously' : ''}`;
}

/** Amounts per unit, `[unit or policy name, units]`. */
export type UnitCosts = readonly (readonly [string, number])[];

/** A call's cost, normalized: its `requests` units, and the other units it names. */
export interface Cost {
  requests: number;
  /** `[unit or policy name, units]`, when the call named any besides `requests`. */
  units?: UnitCosts;
}

/** The cost of a call with no cost of its own: one request. */
export const ONE_REQUEST: Cost = Object.freeze({ requests: 1 }) as Cost;

/** A cost as users give it, normalized. */
export function toCost(value: number | CostVector): Cost {
  if (typeof value === 'number') return value === 1 ? ONE_REQUEST : { requests: value };
  const units: [string, number][] = [];
  for (const [unit, amount] of Object.entries(value)) {
    if (unit !== 'requests' && typeof amount === 'number') units.push([unit, amount]);
  }
  const requests = value.requests ?? 1;
  return units.length > 0 ? { requests, units } : { requests };
}

/** The IETF units counted in requests (a request takes one of them, or `cost.requests`). */
const REQUEST_UNITS: ReadonlySet<string | undefined> = new Set([
  undefined,
  'requests',
  'concurrent-requests',
]);

/**
 * What a policy named `name`, counting in `unit`, is charged for a call of `cost`: the amount the
 * call names for the policy's name (any policy: this is how a caller charges a policy whose headers
 * do not say their unit); else its `requests` for a policy of requests (or of no stated unit, or of
 * concurrent requests); else the amount the call names for the policy's unit (`tokens`); else
 * `undefined`: the call does not say, so it spends nothing from that policy (the client cannot
 * know) but waits while the policy is spent.
 */
export function chargeFor(cost: Cost, unit: string | undefined, name?: string): number | undefined {
  return charge(cost.requests, cost.units, unit, name);
}

/** {@link chargeFor} of a cost given as its parts (no object on the admission's path). */
export function charge(
  requests: number,
  units: UnitCosts | undefined,
  unit: string | undefined,
  name: string | undefined,
): number | undefined {
  let byUnit: number | undefined;
  if (units !== undefined) {
    for (const [key, amount] of units) {
      if (key === name) return amount;
      if (key === unit) byUnit = amount;
    }
  }
  return REQUEST_UNITS.has(unit) ? requests : byUnit;
}

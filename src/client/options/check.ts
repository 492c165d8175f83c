/**
 * The checks built on the schema (`schema.ts`): {@link parseOptions} at construction (unknown keys
 * refused: a typo must not pass silently), {@link checkCallOptions} on every call (its own keys
 * only: a `RequestInit` has many others) and {@link parseInitOptions} for `limitedInit`. A mistake
 * reads `invalid option retry.retries: must be an integer from 0 to 100, got 1.5` (see
 * `option-checks.ts`).
 *
 * @module
 */
import { InvalidOptionError } from '../../shared/errors.js';
import { invalidOption } from '../../shared/option-checks.js';
import { hostPatternProblem } from '../host/host-match.js';
import type { LimitedInitOptions, LimitedRequestInit } from '../types.js';
import { checkBurst, checkBurstHasRate } from './cross-checks.js';
import { assertValid } from './parts.js';
import { CALL_KEYS, callShape, hostSchema, makeInitSchema, optionsSchema } from './schema.js';
import type { HostOptions, LimitedClientOptions } from './types.js';

let initSchema: ReturnType<typeof makeInitSchema> | undefined;

/**
 * Validates the options of `LimitedClient` or `wrapFetch` and returns them in a new object
 * (functions, the store, the clock and headers passed through as given). Throws
 * {@link InvalidOptionError} naming the option, the value given and what is allowed: `invalid
 * option hosts["api.example.com"].rate: must be a number above 0 and up to 1000000000, got -1`.
 */
export function parseOptions(options: unknown): LimitedClientOptions {
  const input = options ?? {};
  assertValid(optionsSchema, input);
  const parsed: LimitedClientOptions = { ...(input as LimitedClientOptions) };
  if (parsed.hosts !== undefined) parsed.hosts = parseHosts(parsed.hosts);
  checkBurst(parsed, 'options');
  for (const [pattern, host] of Object.entries(parsed.hosts ?? {})) {
    checkBurst({ ...parsed, ...host }, `hosts[${JSON.stringify(pattern)}]`);
  }
  checkBurstHasRate(parsed);
  return parsed;
}

/** Each `hosts` entry: its pattern, then its options (a new object, own keys only). */
function parseHosts(hosts: Record<string, unknown>): Record<string, HostOptions> {
  const entries: [string, HostOptions][] = [];
  for (const pattern of Object.keys(hosts)) {
    const path = `hosts[${JSON.stringify(pattern)}]`;
    const problem = hostPatternProblem(pattern);
    if (problem) throw new InvalidOptionError(path, problem);
    const entry = hosts[pattern];
    if (entry === undefined) throw invalidOption(path, 'must be an object', entry);
    assertValid(hostSchema, entry, path);
    entries.push([pattern, entry as HostOptions]);
  }
  // Defines each key as an own property, `__proto__` included.
  return Object.fromEntries(entries);
}

/**
 * Checks a call's own options (`cost`, `retry`, `timeoutMs`... of a `LimitedRequestInit`) before
 * anything is sent; other keys are fetch's. Throws {@link InvalidOptionError} naming the option
 * under `init` (`init.retry.retries`) and the call (its method, from `init` or `input`, and
 * `url`). On the path of every call: a call that sets none of them costs seven property reads,
 * and each one set is checked alone (tens of nanoseconds for a number), never the whole `init`.
 */
export function checkCallOptions(
  init: LimitedRequestInit | undefined,
  url: string,
  input?: Request,
): void {
  if (init === undefined || init === null) return;
  for (const key of CALL_KEYS) {
    const value = init[key];
    if (value !== undefined && callShape[key].problem(value) !== undefined) {
      const method = (init.method ?? input?.method ?? 'GET').toUpperCase();
      assertValid(callShape[key], value, `init.${key}`, { method, url });
    }
  }
}

/**
 * The options of `limitedInit`, copied into a new object (each read once, getters included; a
 * key `__proto__` stays a key) and checked. Throws {@link InvalidOptionError} naming the option
 * (`limitedInit.cost`), the value and what is allowed; for an unknown key (`createBody` included)
 * or anything but an object. A cost is checked against the most any cost may be here, and
 * against the host's burst on each call.
 */
export function parseInitOptions(options: unknown): LimitedInitOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalidOption('limitedInit', "must be an object of a call's own options", options);
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(options)) {
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined) Object.defineProperty(copy, key, { value, enumerable: true });
  }
  initSchema ??= makeInitSchema();
  assertValid(initSchema, copy, 'limitedInit');
  return copy as LimitedInitOptions;
}

/**
 * `limitedInit`: a call's own options (`cost`, `partition`, `retry`...) in the shape an SDK's
 * `fetchOptions` takes, so that they reach the `wrapFetch` the SDK calls.
 *
 * @module
 */
import { parseInitOptions } from '../options/check.js';
import type { LimitedInit, LimitedInitOptions } from '../types.js';

/**
 * A call's own options, checked and frozen, typed as fetch options without the fields an SDK sets
 * itself (`body`, `headers`, `method`, `signal`). An SDK that passes its `fetchOptions` to fetch's
 * init (OpenAI's, per client or per request) hands them to the `wrapFetch` given as its `fetch`,
 * which reads them as it reads any call's `init`. The undici interceptor does not see them
 * (undici's fetch keeps its own init): with `limited()`, give the options at construction.
 *
 * @param options a call's own options (see `LimitedRequestInit`), but `createBody`.
 * @returns a new frozen object of the options given, nothing else.
 * @throws InvalidOptionError naming the option (`limitedInit.cost`), the value and what is
 *   allowed; for an unknown key, `createBody` included. The host's `burst` is checked on each call.
 * @example
 * const openai = new OpenAI({ fetch: wrapFetch() });
 * await openai.chat.completions.create(body, {
 *   fetchOptions: limitedInit({ cost: { requests: 1, tokens: 1200 }, partition: 'gpt-4o' }),
 * });
 */
export function limitedInit(options: LimitedInitOptions): LimitedInit {
  return Object.freeze(parseInitOptions(options));
}

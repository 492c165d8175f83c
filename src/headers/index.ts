export { parseHttpDate, parseRfc3339 } from './dates.js';
export type { HeaderRecord, HeadersInput } from './field-map.js';
export {
  DATE_AGREEMENT_MS,
  type ParseRateLimitHeadersOptions,
  parseRateLimitHeaders,
} from './parse.js';
export { compareRestrictiveness, sortByRestrictiveness } from './policy.js';
export { type ParseRetryAfterOptions, parseRetryAfter } from './retry-after.js';
export type { QuotaPolicy, RateLimitInfo, RateLimitSource } from './types.js';
export { MAX_DELAY_MS, parseDurationMs, parseResetMs } from './values.js';

/**
 * Header parsing's public face: `parseRateLimitHeaders`, `parseRetryAfter`, what they return and
 * take, and `MAX_DELAY_MS`, the longest delay they report. The parsers of single fields, dates
 * and dialects behind them are internals (tests import them from their modules).
 *
 * @module
 */
export type { HeaderRecord, HeadersInput } from './field-map.js';
export { type ParseRateLimitHeadersOptions, parseRateLimitHeaders } from './parse.js';
export { type ParseRetryAfterOptions, parseRetryAfter } from './retry-after.js';
export type { QuotaPolicy, RateLimitInfo, RateLimitSource } from './types.js';
export { MAX_DELAY_MS } from './values.js';

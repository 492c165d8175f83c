/**
 * limited-client: a fetch client that stays under other people's rate limits.
 *
 * This entry is runtime-agnostic: it uses only `fetch`, `Headers`, `AbortSignal` and
 * `crypto.randomUUID`, so it runs in Node, browsers, Deno, Bun and workers.
 *
 * @module
 */

export * from './client/index.js';
export { type Clock, MAX_TIMER_MS, sleep, systemClock } from './clock.js';
export * from './errors.js';
export * from './headers/index.js';

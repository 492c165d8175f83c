/**
 * limited-client: a fetch client that stays under other people's rate limits.
 *
 * This entry is runtime-agnostic: it uses only `fetch`, `Headers`, `AbortSignal` and
 * `crypto.randomUUID`, so it runs in Node, browsers, Deno, Bun and workers.
 *
 * What it exports is a promise: the names the README documents, each with a doc comment, listed
 * per entry in `test/package/api.txt`, which a test compares with the built package.
 *
 * @module
 */

export * from './client/index.js';
export * from './headers/index.js';
export { type Clock, systemClock } from './shared/clock.js';
export * from './shared/errors.js';

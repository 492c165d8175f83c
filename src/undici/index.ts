/**
 * limited-client/undici: the client's pipeline as an interceptor for undici 7's
 * `dispatcher.compose()`, so that `undici.request`, `undici.fetch` and, installed with
 * `setGlobalDispatcher`, Node's global fetch and every SDK built on it stay under the servers'
 * limits.
 *
 * undici is an optional peer dependency of this entry only; nothing here imports it at run time
 * (the interceptor is handed its dispatch by `compose()`), and the core entry knows nothing of it.
 *
 * @module
 */
export { type LimitedInterceptor, limited } from './interceptor.js';
export { MAX_REPLAYABLE_BODY_BYTES } from './request-body.js';

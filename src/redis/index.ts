/**
 * limited-client/redis: state in Redis, shared by every process that uses the same Redis (Node
 * only). Built on the `redis` package (node-redis v5), an optional peer dependency: install it
 * yourself and pass your own connected client.
 *
 * @module
 */
export { isStoreUnavailableError, StoreUnavailableError } from '../errors.js';
export {
  RedisStore,
  type RedisStoreEvents,
  type RedisStoreHealth,
  type RedisStoreOptions,
} from './redis-store.js';
export type { EvalOptions, RedisScriptingClient } from './runner.js';

/**
 * limited-client/redis: state in Redis, shared by every process that uses the same Redis (Node
 * only). Takes your own connected client of node-redis 5 or 6 (the `redis` package) or ioredis 5
 * or 6, optional peer dependencies: the store imports neither.
 *
 * @module
 */
export { isStoreUnavailableError, StoreUnavailableError } from '../shared/errors.js';
export type {
  EvalOptions,
  IoRedisScriptingClient,
  RedisScriptingClient,
  RedisStoreClient,
} from './clients.js';
export {
  RedisStore,
  type RedisStoreEvents,
  type RedisStoreHealth,
  type RedisStoreOptions,
} from './redis-store.js';

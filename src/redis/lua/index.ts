/**
 * One Lua script per algorithm, each serving take, peek and refund, with its SHA1 for `EVALSHA`
 * and the order in which it expects the algorithm's parameters.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { AlgorithmName } from '../../server/types.js';
import { CONCURRENCY, GCRA, LEAKY_BUCKET, TOKEN_BUCKET } from './buckets.js';
import { OPERATIONS, PRELUDE } from './common.js';
import { FIXED_WINDOW, SLIDING_LOG, SLIDING_WINDOW_COUNTER } from './windows.js';

/** A script as Redis caches it. */
export interface LuaScript {
  /** The source, for `EVAL` (which also caches it) when `EVALSHA` answers `NOSCRIPT`. */
  readonly source: string;
  /** SHA1 of the source, hex: what `EVALSHA` names. */
  readonly sha: string;
}

/** A limiter script and the names of the parameters it reads from `ARGV[8]` on, in order. */
export interface LimiterScript extends LuaScript {
  readonly params: readonly string[];
}

/** Makes a {@link LuaScript} of `source`. */
export function luaScript(source: string): LuaScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

function limiter(body: string, params: readonly string[]): LimiterScript {
  return { ...luaScript(`${PRELUDE}${body}${OPERATIONS}`), params };
}

/** The script of each algorithm. */
export const LIMITER_SCRIPTS: Readonly<Record<AlgorithmName, LimiterScript>> = Object.freeze({
  'fixed-window': limiter(FIXED_WINDOW, ['limit', 'windowMs']),
  'sliding-log': limiter(SLIDING_LOG, ['limit', 'windowMs']),
  'sliding-window-counter': limiter(SLIDING_WINDOW_COUNTER, ['limit', 'windowMs']),
  'token-bucket': limiter(TOKEN_BUCKET, ['capacity', 'refillPerSecond']),
  gcra: limiter(GCRA, ['rate', 'burst']),
  'leaky-bucket': limiter(LEAKY_BUCKET, ['rate', 'capacity']),
  concurrency: limiter(CONCURRENCY, ['limit', 'retryAfterMs']),
});

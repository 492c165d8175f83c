/**
 * The limiters' Lua: one Redis Function library holding a function per algorithm (`FCALL`), and
 * the same code as one script per algorithm for servers that refuse functions (`EVALSHA`), with
 * the order in which each expects the algorithm's parameters.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { AlgorithmName } from '../../server/types.js';
import { GCRA, LEAKY_BUCKET, TOKEN_BUCKET } from './buckets.js';
import { GENERIC, HELPERS } from './common.js';
import { CONCURRENCY } from './concurrency.js';
import { SLIDING_LOG } from './sliding-log.js';
import { FIXED_WINDOW, SLIDING_WINDOW_COUNTER } from './windows.js';

/** A Redis Function library (`FUNCTION LOAD`). */
export interface FunctionLibrary {
  /** The library's name, versioned by its code: two versions of this package never collide. */
  readonly name: string;
  /** The code, starting with its `#!lua name=...` line. */
  readonly source: string;
}

/** A script as Redis caches it, and optionally the function of a library that does the same. */
export interface LuaScript {
  /** The source, for `EVAL` (which also caches it) when `EVALSHA` answers `NOSCRIPT`. */
  readonly source: string;
  /** SHA1 of the source, hex: what `EVALSHA` names. */
  readonly sha: string;
  /**
   * The same code as a function (`FCALL`), tried first when the client can call functions; the
   * script is the fallback where the server refuses functions.
   */
  readonly function?: { readonly name: string; readonly library: FunctionLibrary };
}

/** A limiter script and the names of its two parameters, in the order its configuration has them. */
export interface LimiterScript extends LuaScript {
  readonly params: readonly string[];
}

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

/** Makes a {@link LuaScript} of `source`. */
export function luaScript(source: string): LuaScript {
  return { source, sha: sha1(source) };
}

/** Each algorithm's Lua (defining `run(keys, args)`) and its parameters. */
const PARTS: Readonly<Record<AlgorithmName, { code: string; params: readonly string[] }>> = {
  'fixed-window': { code: FIXED_WINDOW + GENERIC, params: ['limit', 'windowMs'] },
  'sliding-log': { code: SLIDING_LOG, params: ['limit', 'windowMs'] },
  'sliding-window-counter': {
    code: SLIDING_WINDOW_COUNTER + GENERIC,
    params: ['limit', 'windowMs'],
  },
  'token-bucket': { code: TOKEN_BUCKET + GENERIC, params: ['capacity', 'refillPerSecond'] },
  gcra: { code: GCRA + GENERIC, params: ['rate', 'burst'] },
  'leaky-bucket': { code: LEAKY_BUCKET + GENERIC, params: ['rate', 'capacity'] },
  concurrency: { code: CONCURRENCY, params: ['limit', 'retryAfterMs'] },
};

const ALGORITHMS = Object.keys(PARTS) as AlgorithmName[];
const version = sha1(HELPERS + ALGORITHMS.map((a) => PARTS[a].code).join('')).slice(0, 12);

/**
 * Each function's name is short (it travels with every `FCALL`, and Redis hashes it to find the
 * function: about 20 instructions a character) and carries the library's version.
 */
const SHORT_NAMES: Readonly<Record<AlgorithmName, string>> = {
  'fixed-window': 'fw',
  'sliding-log': 'sl',
  'sliding-window-counter': 'swc',
  'token-bucket': 'tb',
  gcra: 'gcra',
  'leaky-bucket': 'lb',
  concurrency: 'cc',
};
const functionName = (algorithm: AlgorithmName) => `lc_${version}_${SHORT_NAMES[algorithm]}`;

/**
 * The library: the helpers at its top level (run once, when it is loaded), then each algorithm in
 * a block of its own that registers its function.
 */
export const LIMITER_LIBRARY: FunctionLibrary = Object.freeze({
  name: `limited_client_${version}`,
  source: [
    `#!lua name=limited_client_${version}`,
    HELPERS,
    ...ALGORITHMS.map(
      (a) => `do\n${PARTS[a].code}\nredis.register_function('${functionName(a)}', run)\nend`,
    ),
  ].join('\n'),
});

function limiter(algorithm: AlgorithmName): LimiterScript {
  const { code, params } = PARTS[algorithm];
  return Object.freeze({
    ...luaScript(`${HELPERS}${code}\nreturn run(KEYS, ARGV)\n`),
    function: { name: functionName(algorithm), library: LIMITER_LIBRARY },
    params,
  });
}

/** The script (and function) of each algorithm. */
export const LIMITER_SCRIPTS: Readonly<Record<AlgorithmName, LimiterScript>> = Object.freeze(
  Object.fromEntries(ALGORITHMS.map((a) => [a, limiter(a)])) as Record<
    AlgorithmName,
    LimiterScript
  >,
);

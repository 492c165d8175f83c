/**
 * The entries of the built package share one copy of what they have in common: an error thrown by
 * `limited-client/redis` or `limited-client/server` is an instance of the class `limited-client`
 * exports, in ESM and in CJS (each format has its copy; across formats, the `isX()` guards work:
 * see exports.test.ts). Runs in separate Node processes, by package name (after `npm run build`).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

// `core`, `server` and `redis` are the three entries, loaded by the caller.
const probe = `
  const results = [];
  results.push(core.StoreUnavailableError === redis.StoreUnavailableError);
  results.push(core.isStoreUnavailableError === redis.isStoreUnavailableError);
  // An InvalidOptionError thrown by the server's code, and by the Redis store's.
  try { new server.FixedWindow({ limit: 0, windowMs: 1000 }); } catch (e) {
    results.push(e instanceof core.InvalidOptionError, e instanceof core.LimitedClientError);
  }
  const down = { isReady: false, evalSha: async () => 1, eval: async () => 1 };
  try { new redis.RedisStore(down, { prefix: 'a{b}' }); } catch (e) {
    results.push(e instanceof core.InvalidOptionError);
  }
  // A StoreUnavailableError thrown by the Redis store (its client is not ready), through a limiter.
  const limiter = new server.FixedWindow({ limit: 1, windowMs: 1000, store: new redis.RedisStore(down) });
  limiter.take('k').then(
    () => console.log('no error'),
    (e) => {
      results.push(e instanceof core.StoreUnavailableError, e instanceof core.LimitedClientError);
      console.log(JSON.stringify(results));
    },
  );`;

function node(args: string[]): boolean[] {
  const out = execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }).trim();
  return JSON.parse(out);
}

const all = [true, true, true, true, true, true, true];

describe('one copy of the shared classes across entries', () => {
  it('in ESM', () => {
    const results = node([
      '--input-type=module',
      '-e',
      `import * as core from 'limited-client';
       import * as server from 'limited-client/server';
       import * as redis from 'limited-client/redis';
       ${probe}`,
    ]);
    expect(results).toEqual(all);
  });

  it('in CJS', () => {
    const results = node([
      '-e',
      `const core = require('limited-client');
       const server = require('limited-client/server');
       const redis = require('limited-client/redis');
       ${probe}`,
    ]);
    expect(results).toEqual(all);
  });
});

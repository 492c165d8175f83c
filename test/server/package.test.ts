/**
 * `limited-client/server` as users load it: the built files, through the package's exports map,
 * in ESM and in CJS. Needs `npm run build` (which `npm test` runs first).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

type ServerEntry = typeof import('../../src/server/index.js');

const root = join(import.meta.dirname, '../..');
// A variable, so that the type checker (which runs before the build) does not resolve it.
const entry: string = 'limited-client/server';
const built = existsSync(join(root, 'dist/server/index.js'));

describe.skipIf(!built)('the built server entry (run npm run build first)', () => {
  it('imports as ESM and serves', async () => {
    const server = (await import(entry)) as ServerEntry;
    const mock = await server.createMockServer({ routes: [{ path: '/' }] });
    try {
      expect((await fetch(mock.url)).status).toBe(200);
    } finally {
      await mock.close();
    }
    expect(typeof server.TokenBucket).toBe('function');
  });

  it('requires as CJS, with the same API', async () => {
    const require = createRequire(join(root, 'package.json'));
    const server = require(entry) as ServerEntry;
    const bucket = new server.Gcra({ rate: 10, burst: 5 });
    expect((await bucket.take('k', { now: 0 })).limit).toBe(6);
    const esm = (await import(entry)) as ServerEntry;
    expect(Object.keys(server).sort()).toEqual(Object.keys(esm).sort());
  });
});

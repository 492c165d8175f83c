import { defineConfig } from 'vitest/config';

/**
 * `LIMITED_CLIENT_UNDICI=8`: the tests' `undici` is undici 8 (the `undici8` dev dependency, an npm
 * alias), for test/undici run under Node 22 by test/undici/undici8.test.ts. Only the modules vite
 * compiles (tests and src/) are aliased; no dependency imports undici itself.
 */
const undiciAlias: Record<string, string> =
  process.env.LIMITED_CLIENT_UNDICI === '8' ? { undici: 'undici8' } : {};

export default defineConfig({
  resolve: { alias: undiciAlias },
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Integration tests bind loopback ports; files run in parallel, tests inside a file in order.
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: { name: 'main', include: ['test/**/*.test.ts'], exclude: ['test/redis/**'] },
      },
      // The Redis tests share one server, and some pause it or measure rates against it: one file
      // at a time (they run beside the other project's files).
      {
        extends: true,
        test: { name: 'redis', include: ['test/redis/**/*.test.ts'], fileParallelism: false },
      },
    ],
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
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

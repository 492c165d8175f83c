import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Integration tests bind loopback ports and Redis keys; files run in parallel, tests inside a
    // file run in order.
    pool: 'forks',
  },
});

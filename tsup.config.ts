import { defineConfig, type Options } from 'tsup';

const entry = {
  index: 'src/index.ts',
  'server/index': 'src/server/index.ts',
  'redis/index': 'src/redis/index.ts',
  // The `limited-client-server` bin (package.json `bin`); tsup keeps its shebang and mode.
  'server/cli': 'src/server/bin.ts',
};

const shared: Options = {
  entry,
  target: 'node20',
  sourcemap: true,
  dts: true,
  splitting: false,
  treeshake: true,
};

export default defineConfig([
  // ESM: dependencies stay external, so users deduplicate them.
  { ...shared, format: ['esm'] },
  // CJS: p-retry and p-limit (and their dependencies) are ESM-only. Bundling them here lets
  // `require('limited-client')` work on every Node 20, not only from 20.19 (require(esm)).
  {
    ...shared,
    format: ['cjs'],
    noExternal: ['p-retry', 'p-limit', 'is-network-error', 'yocto-queue'],
  },
]);

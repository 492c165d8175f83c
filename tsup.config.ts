import { defineConfig } from 'tsup';

// ESM and CJS for every entry, with declarations. Runtime dependencies (structured-headers, zod)
// ship both formats, so they stay external in both builds; `redis` and `undici` are optional peers
// (the undici entry imports only undici's types).
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'server/index': 'src/server/index.ts',
    // The `limited-client-server` bin (package.json `bin`); tsup keeps its shebang and mode.
    'server/cli': 'src/server/bin.ts',
    'redis/index': 'src/redis/index.ts',
    'undici/index': 'src/undici/index.ts',
  },
  format: ['esm', 'cjs'],
  target: 'node20',
  sourcemap: true,
  dts: true,
  splitting: false,
  treeshake: true,
});

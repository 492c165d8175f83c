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
    // Not an export: an entry of its own puts the header parser in chunks of its own, so a
    // bundler that takes `parseRateLimitHeaders` alone drops the client's schemas and zod with
    // their chunks (DESIGN.md: 8 KB; test/package/bundle-size.test.ts).
    'headers/index': 'src/headers/index.ts',
  },
  format: ['esm', 'cjs'],
  target: 'node20',
  // No source maps: the output is readable, unminified JavaScript, and maps would either carry
  // every source again (`sourcesContent`, most of the tarball) or point at sources not shipped.
  sourcemap: false,
  dts: true,
  // Code shared by several entries (the errors, the clock, the server's algorithms) goes into
  // chunks that every entry imports, in ESM and in CJS alike: one `StoreUnavailableError` class
  // per format, whichever entry throws it, so `instanceof` holds across entries
  // (test/package/entries.test.ts). With `false`, each entry would carry its own copy.
  splitting: true,
  // No module of src/ runs anything on import, so no chunk is imported for its side effects alone:
  // a bare `import './chunk.js'` would make esbuild warn every user (package.json says
  // `sideEffects: false`) and keep the chunk in a bundle that uses none of it.
  treeshake: { preset: 'recommended', moduleSideEffects: false },
});

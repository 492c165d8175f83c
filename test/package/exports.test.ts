/**
 * Imports the built package as users do: by its name, through the `exports` map, in a separate
 * Node process (no vitest transforms), once with `import` and once with `require`, for every entry.
 * Runs after `npm run build` (part of `npm test`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const entries = [
  'limited-client',
  'limited-client/server',
  'limited-client/redis',
  'limited-client/undici',
  'limited-client/otel',
] as const;

function node(args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8' }).trim();
}

describe('the built package', () => {
  it('has been built (run `npm run build` first)', () => {
    expect(existsSync(`${root}/dist/index.js`)).toBe(true);
    expect(existsSync(`${root}/dist/index.cjs`)).toBe(true);
    expect(existsSync(`${root}/dist/index.d.ts`)).toBe(true);
    expect(existsSync(`${root}/dist/index.d.cts`)).toBe(true);
  });

  it.each(entries)('%s loads with import (ESM)', (entry) => {
    const out = node([
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(entry)}); console.log(JSON.stringify(Object.keys(m).sort()));`,
    ]);
    expect(Array.isArray(JSON.parse(out))).toBe(true);
  });

  it.each(entries)('%s loads with require (CJS)', (entry) => {
    const out = node([
      '-e',
      `console.log(JSON.stringify(Object.keys(require(${JSON.stringify(entry)})).sort()))`,
    ]);
    expect(Array.isArray(JSON.parse(out))).toBe(true);
  });

  it('exposes the same core API to ESM and CJS, and it works', () => {
    const esm = node([
      '--input-type=module',
      '-e',
      `import { parseRetryAfter, parseRateLimitHeaders } from 'limited-client';
       console.log(parseRetryAfter('7'), parseRateLimitHeaders({ RateLimit: '"p";r=1;t=2' }).resetMs);`,
    ]);
    const cjs = node([
      '-e',
      `const { parseRetryAfter, parseRateLimitHeaders } = require('limited-client');
       console.log(parseRetryAfter('7'), parseRateLimitHeaders({ RateLimit: '"p";r=1;t=2' }).resetMs);`,
    ]);
    expect(esm).toBe('7000 2000');
    expect(cjs).toBe(esm);
    const esmKeys = node([
      '--input-type=module',
      '-e',
      `const m = await import('limited-client'); console.log(Object.keys(m).sort().join())`,
    ]);
    const cjsKeys = node([
      '-e',
      `console.log(Object.keys(require('limited-client')).sort().join())`,
    ]);
    expect(cjsKeys).toBe(esmKeys);
  });

  it('error guards work across the ESM and CJS copies (brand, not instanceof)', () => {
    const out = node([
      '--input-type=module',
      '-e',
      `import { createRequire } from 'node:module';
       import * as esm from 'limited-client';
       const cjs = createRequire(import.meta.url)('limited-client');
       const e = new cjs.QueueFullError(3);
       console.log(esm.isQueueFullError(e), e instanceof esm.QueueFullError, e.code);`,
    ]);
    expect(out).toBe('true false ERR_QUEUE_FULL');
  });

  it('limited-client/redis exposes RedisStore to ESM and CJS without loading the redis or ioredis peer', () => {
    const probe = `console.log(typeof m.RedisStore, Object.keys(require.cache ?? {}).some((k) => /node_modules\\/(redis|@redis|ioredis)\\//.test(k)))`;
    const esm = node([
      '--input-type=module',
      '-e',
      `import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);
       const m = await import('limited-client/redis'); ${probe}`,
    ]);
    const cjs = node(['-e', `const m = require('limited-client/redis'); ${probe}`]);
    expect(esm).toBe('function false');
    expect(cjs).toBe('function false');
  });

  it('limited-client/undici composes onto an undici Agent from ESM and CJS; neither it nor the core loads undici', () => {
    // A loopback server, an Agent composed with the interceptor, one request through it.
    const run = (load: string) => `${load}
      const http = require('node:http');
      const server = http.createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1', async () => {
        const interceptor = limited();
        const agent = new Agent().compose(interceptor);
        const r = await request('http://127.0.0.1:' + server.address().port + '/x', { dispatcher: agent });
        console.log(r.statusCode, await r.body.text(), interceptor.stats().totals.requests);
        await interceptor.close(); server.close();
      });`;
    const esm = node([
      '--input-type=module',
      '-e',
      run(`import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);
           const { limited } = await import('limited-client/undici'); const { Agent, request } = require('undici');`),
    ]);
    const cjs = node([
      '-e',
      run(
        `const { limited } = require('limited-client/undici'); const { Agent, request } = require('undici');`,
      ),
    ]);
    expect(esm).toBe('200 ok 1');
    expect(cjs).toBe('200 ok 1');
    const loaded = node([
      '-e',
      `require('limited-client'); require('limited-client/undici');
       console.log(Object.keys(require.cache).some((k) => k.includes('node_modules/undici/')))`,
    ]);
    expect(loaded).toBe('false');
  });

  it('limited-client/otel reports to a real MeterProvider from ESM and CJS; the core never loads the OpenTelemetry API', () => {
    // A loopback server, a client instrumented onto the SDK's in-memory exporter, one call.
    const run = (load: string) => `${load}
      const http = require('node:http');
      const sdk = require('@opentelemetry/sdk-metrics');
      const server = http.createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1', async () => {
        const exporter = new sdk.InMemoryMetricExporter(sdk.AggregationTemporality.CUMULATIVE);
        const reader = new sdk.PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3600000 });
        const meterProvider = new sdk.MeterProvider({ readers: [reader] });
        const client = new LimitedClient('http://127.0.0.1:' + server.address().port);
        const handle = instrument(client, { meterProvider });
        await (await client.get('/x')).text();
        await reader.forceFlush();
        const calls = exporter.getMetrics()[0].scopeMetrics[0].metrics.find((m) => m.descriptor.name === 'limited_client.calls');
        console.log(calls.dataPoints[0].value, calls.dataPoints[0].attributes['http.response.status_code']);
        handle.stop(); await client.close(); await meterProvider.shutdown(); server.close();
      });`;
    const esm = node([
      '--input-type=module',
      '-e',
      run(`import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);
           const { instrument } = await import('limited-client/otel'); const { LimitedClient } = await import('limited-client');`),
    ]);
    const cjs = node([
      '-e',
      run(
        `const { instrument } = require('limited-client/otel'); const { LimitedClient } = require('limited-client');`,
      ),
    ]);
    expect(esm).toBe('1 200');
    expect(cjs).toBe('1 200');
    const loaded = node([
      '-e',
      `require('limited-client'); require('limited-client/undici'); require('limited-client/server');
       console.log(Object.keys(require.cache).some((k) => k.includes('@opentelemetry')))`,
    ]);
    expect(loaded).toBe('false');
  });

  it('type-checks for TypeScript users of ESM and CJS (nodenext resolution of the exports map)', () => {
    const tsc = `${root}/node_modules/typescript/bin/tsc`;
    const project = `${root}/test/package/fixtures/tsconfig.json`;
    expect(() =>
      execFileSync(process.execPath, [tsc, '-p', project], { cwd: root, encoding: 'utf8' }),
    ).not.toThrow();
    // A whole tsc run: about 7 s of CPU, 25 s of wall time on a loaded two-core machine. The
    // bound only stops a hang; it says nothing of speed.
  }, 120_000);
});

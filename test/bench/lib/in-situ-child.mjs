/**
 * One process of the in-situ cost benchmark (`test/bench/in-situ-cost.ts`), run by plain `node`
 * under valgrind: a bare `node:http` server answering 200 with two bytes and no rate-limit header
 * (the overhead benchmark's quiet host), and GETs of it one at a time, every body read, through
 * plain fetch or through `wrapFetch` of the package at `LIB` with the options in `OPTIONS` (JSON).
 * With MODE `mock`, the server is the mock server of the package's server entry at `LIB`, made
 * with `OPTIONS` as its configuration (the server benchmark's, from `lib/http-contender.ts`), sent
 * GETs of its first route's path through plain fetch.
 *
 * It sends `WARMUP` requests, prints `ready <pid>` and waits for a line on stdin (the parent turns
 * valgrind's instrumentation on meanwhile), then sends `REQUESTS` more, prints `done <collections
 * meanwhile>` and exits: what valgrind counts is those requests alone, after the code is warm. (No
 * collection is forced before them: a full one made V8 drop compiled code, which the measured
 * requests then compiled again.)
 *
 * With OTEL `noop` or `sdk` (MODE `client`), the client is passed to `instrument()` of the otel
 * entry beside LIB (`<dir of LIB>/otel/index.js`): with no provider (the API's global no-op one),
 * or onto a real SDK `MeterProvider` with a reader that collects only when asked.
 *
 * Environment: LIB (a path to the package's `index.js`, or to its server entry with MODE `mock`),
 * MODE (`fetch`, `client` or `mock`), OPTIONS, OTEL, WARMUP, REQUESTS.
 */
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const { LIB, MODE, OPTIONS, OTEL, WARMUP, REQUESTS } = process.env;
const lib = await import(pathToFileURL(LIB).href);
const options = JSON.parse(OPTIONS || '{}');

/** The quiet host: a bare `node:http` server. */
async function quietHost() {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/free`,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** The mock server with the configuration in `OPTIONS`. */
async function mockServer() {
  const server = await lib.createMockServer(options);
  return {
    url: `http://127.0.0.1:${server.port}${options.routes[0].path}`,
    close: () => server.close(),
  };
}

const host = MODE === 'mock' ? await mockServer() : await quietHost();
const url = host.url;
const client = MODE === 'client' ? lib.wrapFetch(undefined, options) : undefined;
const get = client ?? fetch;
if (client && (OTEL === 'noop' || OTEL === 'sdk')) {
  const otel = await import(pathToFileURL(join(dirname(LIB), 'otel/index.js')).href);
  let meterProvider;
  if (OTEL === 'sdk') {
    const { MeterProvider, MetricReader } = await import('@opentelemetry/sdk-metrics');
    // A reader is what makes the SDK keep measurements; this one collects only when asked.
    class PullReader extends MetricReader {
      async onForceFlush() {}
      async onShutdown() {}
    }
    meterProvider = new MeterProvider({ readers: [new PullReader()] });
  }
  otel.instrument(client, meterProvider ? { meterProvider } : {});
}

async function send(n) {
  for (let i = 0; i < n; i++) {
    const response = await get(url);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`answered ${response.status}`);
  }
}

await send(Number(WARMUP));
let collections = 0;
const observer = new PerformanceObserver((list) => {
  collections += list.getEntries().length;
});
observer.observe({ entryTypes: ['gc'] });
process.stdout.write(`ready ${process.pid}\n`);
await new Promise((resolve) => process.stdin.once('data', resolve));
process.stdin.pause();
await send(Number(REQUESTS));
// The observer reports on a later turn: give it one.
await new Promise((resolve) => setImmediate(resolve));
observer.disconnect();
process.stdout.write(`done ${collections}\n`);
await client?.close();
await host.close();

/**
 * What the interceptors cost by themselves, without HTTP: CPU time per request of a dispatch
 * that answers every request at once (200, a few headers, a 2-byte body) on the next turn,
 * composed with nothing, with a no-op interceptor, with undici's `interceptors.retry()` and with
 * `limited()`. No socket, no server, no parser: what is left is the interceptor, the caller's
 * handler and the promises, so the differences are the interceptors' own, and they are counted
 * (CPU time of this process), which other processes on a shared machine disturb less than a
 * rate. Rounds rotate the order; the table gives the median of the rounds. Numbers only.
 *
 *   npx tsx test/bench/undici-micro.ts [--requests 50000] [--rounds 7] [--concurrency 16]
 *     [--only limited]   (the contenders whose name starts so: for a CPU profile)
 *     [--legacy]   (the path `undici.request` takes under undici 7: the caller's handler of the
 *     legacy API wrapped as `compose()` wraps it, and a dispatch that speaks the legacy API with
 *     raw header buffers, unwrapping a handler of the new API as undici's Agent does)
 *     [--before <dir>/undici/index.ts]   (another checkout's `limited()` in the same rounds,
 *     marked `(before)`, and the ratio of the two medians)
 *
 * @module
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { type Dispatcher, interceptors } from 'undici';
import { limited } from '../../src/undici/index.js';
import { median } from './lib/paired.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '7' },
    concurrency: { type: 'string', default: '16' },
    only: { type: 'string' },
    before: { type: 'string' },
    legacy: { type: 'boolean', default: false },
  },
});
const requests = Number(values.requests);
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);

const HEADERS = {
  'content-type': 'text/plain',
  'content-length': '2',
  date: new Date().toUTCString(),
  connection: 'keep-alive',
  'keep-alive': 'timeout=5',
};
const BODY = Buffer.from('ok');

/** A controller that does nothing: the answer is played at once. */
const controller: Dispatcher.DispatchController = {
  abort() {},
  pause() {},
  resume() {},
  aborted: false,
  paused: false,
  reason: null,
};

/** The dispatcher's part: the whole answer, on the next turn (a socket answers later, too). */
const answerAtOnce: Dispatcher.Dispatch = (_opts, handler) => {
  setImmediate(() => {
    const h = handler as Dispatcher.DispatchHandler;
    h.onRequestStart?.(controller, {});
    h.onResponseStart?.(controller, 200, { ...HEADERS }, 'OK');
    h.onResponseData?.(controller, BODY);
    h.onResponseEnd?.(controller, {});
  });
  return true;
};

/** undici 7's handler adapters, which it does not export (`--legacy`). */
interface HandlerAdapters {
  wrap(handler: unknown): Dispatcher.DispatchHandler;
  unwrap(handler: Dispatcher.DispatchHandler): LegacyHandler;
}
interface LegacyHandler {
  onConnect(abort: () => void): void;
  onHeaders(status: number, raw: Buffer[], resume: () => void, message: string): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(trailers: Buffer[]): void;
}
const require = createRequire(import.meta.url);
const adapters: HandlerAdapters | undefined = values.legacy
  ? {
      wrap: require('undici/lib/handler/wrap-handler.js').wrap,
      unwrap: require('undici/lib/handler/unwrap-handler.js').unwrap,
    }
  : undefined;
const RAW = Object.entries(HEADERS).flatMap(([name, value]) => [
  Buffer.from(name),
  Buffer.from(value),
]);

/** The dispatcher's part as undici 7's Agent plays it: the legacy API, raw header buffers. */
const answerLegacy: Dispatcher.Dispatch = (_opts, handler) => {
  const h = (adapters as HandlerAdapters).unwrap(handler);
  setImmediate(() => {
    h.onConnect(() => {});
    h.onHeaders(200, RAW.slice(), () => {}, 'OK');
    h.onData(BODY);
    h.onComplete([]);
  });
  return true;
};

/**
 * What the contenders dispatch to. Under `--legacy` every contender, the dispatch alone included,
 * gets the wrapped handler, so "the dispatch alone" pays undici's two header conversions (what a
 * no-op interceptor costs over HTTP) and `limited()`, which skips them, can come out below it.
 */
const answer = adapters ? answerLegacy : answerAtOnce;

/** `--legacy`'s caller: a handler of the legacy API, wrapped as `compose()` wraps it. */
function callLegacy(dispatch: Dispatcher.Dispatch): Promise<void> {
  return new Promise((resolve, reject) => {
    const legacy = {
      onConnect() {},
      onHeaders: () => true,
      onData: () => true,
      onComplete: () => resolve(),
      onError: (error: Error) => reject(error),
    };
    dispatch(
      { origin: 'http://bench.test', path: '/free', method: 'GET', headers: {} },
      (adapters as HandlerAdapters).wrap(legacy),
    );
  });
}

/** The caller's handler: `undici.request`'s part without its body stream. */
function call(dispatch: Dispatcher.Dispatch): Promise<void> {
  if (adapters) return callLegacy(dispatch);
  return new Promise((resolve, reject) => {
    dispatch(
      { origin: 'http://bench.test', path: '/free', method: 'GET', headers: {} },
      {
        onRequestStart() {},
        onResponseStart() {},
        onResponseData() {},
        onResponseEnd: () => resolve(),
        onResponseError: (_c, error) => reject(error),
      },
    );
  });
}

async function cpuPerRequest(dispatch: Dispatcher.Dispatch): Promise<number> {
  let next = 0;
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) {
        next++;
        await call(dispatch);
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / requests;
}

const interceptor = limited();
const all: [string, Dispatcher.Dispatch][] = [
  ['dispatch alone', answer],
  ['no-op interceptor', (opts, handler) => answer(opts, handler)],
  ['interceptors.retry()', interceptors.retry()(answer)],
  ['limited()', interceptor(answer)],
];
const beforeInterceptor: typeof interceptor | undefined = values.before
  ? (await import(pathToFileURL(resolve(values.before)).href)).limited()
  : undefined;
if (beforeInterceptor) all.push(['limited() (before)', beforeInterceptor(answer)]);
const contenders = values.only
  ? all.filter(([name]) => name.startsWith(values.only as string))
  : all;
for (const [, dispatch] of contenders) await cpuPerRequest(dispatch);
const samples = contenders.map(() => [] as number[]);
for (let round = 0; round < rounds; round++) {
  for (let k = 0; k < contenders.length; k++) {
    const i = (k + round) % contenders.length;
    samples[i]?.push(await cpuPerRequest((contenders[i] as [string, Dispatcher.Dispatch])[1]));
  }
}
await interceptor.close();
await beforeInterceptor?.close();
const base = median(samples[0] as number[]);
console.log(
  `undici-micro: ${requests} requests x ${rounds} rounds, ${concurrency} in flight, Node ${process.version}`,
);
console.log('| contender | CPU µs per request (median) | over the dispatch alone |');
console.log('|---|---|---|');
contenders.forEach(([name], i) => {
  const m = median(samples[i] as number[]);
  console.log(`| ${name} | ${m.toFixed(2)} | ${(m - base).toFixed(2)} |`);
});
const now = contenders.findIndex(([name]) => name === 'limited()');
const then = contenders.findIndex(([name]) => name === 'limited() (before)');
if (now >= 0 && then >= 0) {
  const over = (i: number) => median(samples[i] as number[]) - base;
  console.log(
    `\nlimited() over limited() (before), overhead over the dispatch alone: ${(over(now) / over(then)).toFixed(3)}`,
  );
}

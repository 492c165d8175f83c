/**
 * Soak benchmark (issue 11): the client and the mock server for about a minute under mixed normal
 * and hostile traffic, sampled every window so that growth is visible.
 *
 * Three processes, so that each one's memory and event loop are its own:
 *
 * - this one, the **client** under test: a `LimitedClient` making normal calls to the mock
 *   server's declared-limit routes, and a `wrapFetch` "crawler" (`maxHosts` 50) calling hostile
 *   servers on 64 loopback addresses (`127.0.0.2`...), in partitions some of which are named like
 *   `Object.prototype`'s properties, with a state store of 256 keys (of about a thousand it can
 *   make);
 * - the **mock server** under test (`createMockServer`), in a child;
 * - the **hostile** party, in a child: the servers the crawler calls (fresh policy names by the
 *   hundred, generated junk headers from the hostile property's arbitraries, 429 forever, slow
 *   bodies, dropped connections, answers that never come), and raw requests at the mock server
 *   (pipelined requests dropped after 50 ms, 256 kB bodies with fresh idempotency keys,
 *   absolute-form targets, garbage request lines and headers).
 *
 * Each window prints, per process, the heap used (after a full collection), the RSS, the
 * event-loop delay p99, and the calls or requests per second; the end prints the first and the
 * last window side by side with the ratio end / start.
 *
 *   npm run bench:soak -- [--warmup 10] [--seconds 60] [--window 10] [--body-kb 256]
 *
 * The warm-up (traffic as in the run, its numbers printed but not compared) lets the client's
 * state reach its bounds (pipelines, learned policies, store keys) and its pace open up, so that
 * the first and the last window compare like with like.
 *
 * Loopback only, bounded in time; it stops by itself and stops its children.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import {
  isLimitedClientError,
  LimitedClient,
  MemoryStateStore,
  wrapFetch,
} from '../../src/index.js';
import { createMockServer } from '../../src/server/index.js';
import { answer, LATE_MS, renderAnswer } from '../hostile/client-answers.js';
import { PROTOTYPE_NAMES } from '../hostile/helpers.js';
import { fixed, markdownTable } from './lib/table.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '10' },
    window: { type: 'string', default: '10' },
    'body-kb': { type: 'string', default: '256' },
    role: { type: 'string', default: 'client' },
    server: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
/** Seconds of traffic before the first window, so that every bound is reached before it starts. */
const WARMUP = Number(values.warmup);
const WINDOW_MS = Number(values.window) * 1000;
const BODY_BYTES = Number(values['body-kb']) * 1024;
const SELF = fileURLToPath(import.meta.url);

/** Hostile servers, one per loopback address: the crawler's hosts. */
const HOSTILE_ADDRESSES = 64;
/** The crawler's partitions: `Object.prototype`'s names and a few of its own. */
const PARTITIONS = [...PROTOTYPE_NAMES, 'search', 'core', 'uploads', 'a'.repeat(256)];
/** State keys the crawler can make: one per host and partition (and the host's own). */
const KEY_SPACE = HOSTILE_ADDRESSES * (PARTITIONS.length + 1);
/** The crawler's store keeps at most this many (`maxKeys`). */
const STORE_KEYS = 256;

// ---------------------------------------------------------------------------------------------
// What every process reports each window.

/** One process's window. */
interface Sample {
  heapMB: number;
  /** Memory outside the heap: buffers, array buffers. */
  externalMB: number;
  rssMB: number;
  /** CPU time over the window's wall time, percent of one core. */
  cpuPercent: number;
  eldP99Ms: number;
  /** Per second over the window, by counter name. */
  rates: Record<string, number>;
}

/** Heap after a full collection, RSS, event-loop delay, and counters, per window. */
class Probe {
  private readonly gc: () => void;
  private readonly eld = monitorEventLoopDelay({ resolution: 10 });
  private readonly counters = new Map<string, number>();
  private last = performance.now();
  private lastCpu = process.cpuUsage();

  constructor() {
    setFlagsFromString('--expose-gc');
    this.gc = runInNewContext('gc') as () => void;
    this.eld.enable();
  }

  count(name: string, n = 1): void {
    this.counters.set(name, (this.counters.get(name) ?? 0) + n);
  }

  sample(): Sample {
    const now = performance.now();
    const seconds = (now - this.last) / 1000;
    this.last = now;
    const cpu = process.cpuUsage(this.lastCpu);
    this.lastCpu = process.cpuUsage();
    this.gc();
    this.gc();
    const memory = process.memoryUsage();
    const rates: Record<string, number> = Object.create(null);
    for (const [name, n] of this.counters) rates[name] = n / seconds;
    this.counters.clear();
    const sample = {
      heapMB: memory.heapUsed / 1048576,
      externalMB: memory.external / 1048576,
      rssMB: memory.rss / 1048576,
      cpuPercent: (cpu.user + cpu.system) / 10_000 / seconds,
      eldP99Ms: this.eld.percentile(99) / 1e6,
      rates,
    };
    this.eld.reset();
    return sample;
  }
}

type FromChild =
  | { type: 'ready'; url?: string; urls?: string[] }
  | { type: 'sample'; sample: Sample };

/** Answers the parent's `sample` messages, and exits when the parent goes. */
function serveProbe(probe: Probe, before?: () => void): void {
  process.on('message', (message: { type: string }) => {
    if (message.type === 'sample') {
      before?.();
      process.send?.({ type: 'sample', sample: probe.sample() } satisfies FromChild);
    } else if (message.type === 'exit') process.exit(0);
  });
  process.on('disconnect', () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------
// The mock server under test.

async function runServer(): Promise<void> {
  const probe = new Probe();
  const server = await createMockServer({
    routes: [
      {
        path: '/api/:id',
        limits: [{ algorithm: 'token-bucket', capacity: 100, refillPerSecond: 400, key: 'global' }],
      },
      {
        method: 'POST',
        path: '/orders',
        limits: [
          { algorithm: 'sliding-window-counter', limit: 100, windowMs: 1000, key: 'global' },
        ],
      },
      { path: '/slow', faults: { latencyMs: 200 } },
      {
        path: '/pool',
        faults: { latencyMs: 20 },
        limits: [{ algorithm: 'concurrency', limit: 8, key: 'global' }],
      },
      {
        path: '/items/:id',
        limits: [{ algorithm: 'fixed-window', limit: 1, windowMs: 60_000, key: 'global' }],
      },
      { method: 'POST', path: '/upload' },
    ],
  });
  let decided = 0;
  serveProbe(probe, () => {
    const stats = server.stats();
    const total = stats.admitted + stats.rejected;
    probe.count('decisions', total - decided);
    decided = total;
  });
  process.send?.({ type: 'ready', url: server.url } satisfies FromChild);
}

// ---------------------------------------------------------------------------------------------
// The hostile party: servers the crawler calls, and raw requests at the mock server.

async function runHostile(mockUrl: string): Promise<void> {
  const probe = new Probe();
  // Junk answers from the hostile property's arbitraries, the same every run.
  const JUNK = fc.sample(answer, { numRuns: 500, seed: 11 });
  const serial = { next: 0 };
  const servers: Server[] = [];
  const urls: string[] = [];
  for (let i = 0; i < HOSTILE_ADDRESSES; i++) {
    const server = createServer((req, res) => {
      req.resume();
      probe.count('answers');
      const mode = (req.url ?? '/').split('/')[1];
      if (mode === 'drop') return req.socket.destroy();
      if (mode === 'hang') {
        setTimeout(() => req.socket.destroy(), 5000).unref();
        return;
      }
      if (mode === '429') {
        const after = ['1', '3600', '1e300', new Date(Date.now() + 2000).toUTCString()];
        res.writeHead(429, { 'Retry-After': after[serial.next++ % after.length] as string });
        return res.end('slow down');
      }
      if (mode === 'fresh') {
        const names = Array.from({ length: 150 }, () => `f${serial.next++}`);
        res.writeHead(200, [
          'RateLimit-Policy',
          names.map((n) => `"${n}";q=1000;w=60`).join(', '),
          'RateLimit',
          names.map((n) => `"${n}";r=999;t=30`).join(', '),
        ]);
        return res.end('fresh');
      }
      if (mode === 'slow-body') {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        let chunks = 0;
        const timer = setInterval(() => {
          if (chunks++ >= 10 || res.destroyed) {
            clearInterval(timer);
            res.end();
          } else res.write('x'.repeat(1024));
        }, 100);
        return;
      }
      if (mode === 'junk') {
        const a = JUNK[serial.next++ % JUNK.length];
        if (a === undefined || a.mode === 'drop') return req.socket.destroy();
        const scripted = renderAnswer(a, serial);
        const flat = (scripted.headers ?? []).flat();
        const send = () => {
          if (res.destroyed) return;
          res.writeHead(scripted.status, flat);
          res.end(scripted.body);
        };
        if (a.mode === 'late') setTimeout(send, LATE_MS);
        else send();
        return;
      }
      res.end('ok');
    });
    server.keepAliveTimeout = 1000;
    const host = `127.0.0.${i + 2}`;
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    servers.push(server);
    urls.push(`http://${host}:${(server.address() as AddressInfo).port}`);
  }

  const port = Number(new URL(mockUrl).port);
  const rawRequest = (data: string | Buffer, dropAfterMs?: number) =>
    new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.on('data', () => {});
      socket.on('close', () => resolve());
      socket.setTimeout(5000, () => socket.destroy());
      socket.write(data);
      if (dropAfterMs !== undefined) setTimeout(() => socket.destroy(), dropAfterMs);
      probe.count('raw requests');
    });
  const every = (ms: number, fn: () => Promise<void>) =>
    setInterval(() => {
      fn().catch(() => {});
    }, ms);

  // Pipelined and dropped: a slow request and three to the concurrency-limited route behind it on
  // one connection, gone at 50 ms (issue 11, item 3).
  every(2000, () =>
    rawRequest(
      `GET /slow HTTP/1.1\r\nHost: x\r\n\r\n${'GET /pool HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(3)}`,
      50,
    ),
  );
  // Bodies of --body-kb with fresh idempotency keys, bytes that JSON escapes sixfold among them.
  let key = 0;
  every(250, () => {
    const body = Buffer.alloc(BODY_BYTES);
    for (let i = 0; i < body.length; i++) body[i] = (i * 7919 + key) % 128;
    const head =
      `POST /upload HTTP/1.1\r\nHost: x\r\nIdempotency-Key: soak-${key++}\r\n` +
      `Content-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    return rawRequest(Buffer.concat([Buffer.from(head), body]));
  });
  // Absolute-form targets at a route allowing one a minute.
  every(100, () =>
    rawRequest(
      `GET http://h.example/items/${key % 3} HTTP/1.1\r\nHost: h.example\r\nConnection: close\r\n\r\n`,
    ),
  );
  // Garbage: odd methods and targets, header names from Object.prototype, bytes out of place.
  let g = 0;
  every(50, () => {
    g++;
    const name = PROTOTYPE_NAMES[g % PROTOTYPE_NAMES.length];
    const lines = [
      `${['GET', 'BREW', 'G\x00T', 'POST'][g % 4]} ${['/api/1', '*', '/%zz', '//x/../..'][g % 4]} HTTP/1.1`,
      'Host: x',
      `${name}: ${g % 2 ? '{"__proto__":{"polluted":1}}' : 'v\x01\x7f'}`,
      `X-Forwarded-For: ${g % 256}.0.0.1`,
      g % 3 ? 'Content-Length: 5' : 'Transfer-Encoding: chunked',
      'Connection: close',
    ];
    return rawRequest(`${lines.join('\r\n')}\r\n\r\n${g % 3 ? 'hello' : '0\r\n\r\n'}`);
  });

  serveProbe(probe);
  process.send?.({ type: 'ready', urls } satisfies FromChild);
}

// ---------------------------------------------------------------------------------------------
// The client under test, and the run.

interface Child {
  ready: Promise<Extract<FromChild, { type: 'ready' }>>;
  sample(): Promise<Sample>;
  stop(): void;
}

function startChild(args: string[]): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', SELF, ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let onReady: (m: Extract<FromChild, { type: 'ready' }>) => void = () => {};
  const waiting: ((s: Sample) => void)[] = [];
  child.on('message', (message: FromChild) => {
    if (message.type === 'ready') onReady(message);
    else waiting.shift()?.(message.sample);
  });
  return {
    ready: new Promise((resolve) => {
      onReady = resolve;
    }),
    sample: () =>
      new Promise((resolve) => {
        waiting.push(resolve);
        child.send({ type: 'sample' });
      }),
    stop: () => {
      if (child.connected) child.send({ type: 'exit' });
      setTimeout(() => child.kill(), 2000).unref();
    },
  };
}

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

/** How a call ended, for the counters. */
function outcome(error: unknown): string {
  if (isLimitedClientError(error)) return error.code;
  if (error instanceof Error) return error.name === 'TypeError' ? 'fetch failed' : error.name;
  return 'other';
}

async function runClient(): Promise<void> {
  const probe = new Probe();
  const server = startChild(['--role', 'server']);
  const { url: mockUrl } = await server.ready;
  const hostile = startChild(['--role', 'hostile', '--server', mockUrl as string]);
  const { urls: hostileUrls = [] } = await hostile.ready;
  console.log(
    `soak: ${WARMUP} s of warm-up, then ${SECONDS} s in ${WINDOW_MS / 1000} s windows; mock server ${mockUrl}; ` +
      `${hostileUrls.length} hostile hosts; uploads of ${BODY_BYTES / 1024} kB. ` +
      'Heap is measured after a full collection.',
  );

  // Normal traffic: declared limits, a few writes with idempotency keys, a slow route.
  const api = new LimitedClient(mockUrl as string, { timeoutMs: 5000 });
  // Hostile answers: many hosts, partitions named by outsiders, every kind of bad answer.
  // A store bound below the keys the crawler can make, so that the bound is reached in the first
  // window and held (the default, 10,000, would take longer than the run to reach).
  const crawlerStore = new MemoryStateStore({ maxKeys: STORE_KEYS });
  const crawler = wrapFetch(undefined, {
    store: crawlerStore,
    maxHosts: 50,
    timeoutMs: 3000,
    attemptTimeoutMs: 1000,
  });
  const modes = ['fresh', 'fresh', 'junk', 'junk', 'junk', '429', '429', 'slow-body', 'drop'];
  const moreModes = [...modes, 'hang', 'ok', 'ok'];

  let running = true;
  const normalWorker = async (w: number) => {
    for (let i = 0; running; i++) {
      const r = Math.random();
      const route = r < 0.7 ? 'api' : r < 0.9 ? 'orders' : 'pool';
      try {
        const response =
          route === 'orders'
            ? await api.post('/orders', { worker: w, i })
            : await api.get(route === 'api' ? `/api/${i % 100}` : '/pool');
        await response.arrayBuffer();
        probe.count('normal calls');
        probe.count(`normal ${route} ${response.status}`);
        if (response.ok) probe.count('normal 2xx');
      } catch (error) {
        probe.count('normal calls');
        probe.count(`normal ${route} ${outcome(error)}`);
      }
    }
  };
  const crawlerWorker = async () => {
    while (running) {
      const target = `${pick(hostileUrls)}/${pick(moreModes)}/${Math.random()}`;
      const partition = Math.random() < 0.3 ? pick(PARTITIONS) : undefined;
      const method = Math.random() < 0.2 ? 'POST' : 'GET';
      try {
        const response = await crawler(target, {
          method,
          partition,
          body: method === 'POST' ? 'x'.repeat(100) : undefined,
          signal: AbortSignal.timeout(4000),
        });
        await response.arrayBuffer();
        probe.count('crawler calls');
      } catch (error) {
        probe.count('crawler calls');
        probe.count(`crawler ${outcome(error)}`);
      }
    }
  };
  const workers = [
    ...Array.from({ length: 8 }, (_, w) => normalWorker(w)),
    ...Array.from({ length: 24 }, () => crawlerWorker()),
  ];

  interface Row {
    t: number;
    client: Sample;
    server: Sample;
    hostile: Sample;
    pipelines: number;
    policies: number;
    storeKeys: number;
  }
  const rows: Row[] = [];
  const started = performance.now();
  probe.sample();
  await Promise.all([server.sample(), hostile.sample()]);
  /** Samples every process, prints the window, and returns it. */
  const takeWindow = async (seconds: number, label: string): Promise<Row> => {
    const hosts = Object.values(crawler.stats().hosts);
    const [client, serverSample, hostileSample] = [
      probe.sample(),
      ...(await Promise.all([server.sample(), hostile.sample()])),
    ] as [Sample, Sample, Sample];
    const row: Row = {
      t: seconds,
      client,
      server: serverSample,
      hostile: hostileSample,
      pipelines: hosts.length,
      policies: hosts.reduce((n, h) => n + h.policies.length, 0),
      storeKeys: crawlerStore.size,
    };
    console.log(
      `${label} client heap ${fixed(client.heapMB, 1)} MB rss ${fixed(client.rssMB, 0)} MB ` +
        `cpu ${fixed(client.cpuPercent, 0)}% ` +
        `eld p99 ${fixed(client.eldP99Ms, 1)} ms normal ${fixed(client.rates['normal 2xx'] ?? 0, 0)} ok/s ` +
        `of ${fixed(client.rates['normal calls'] ?? 0, 0)}/s, crawler ${fixed(client.rates['crawler calls'] ?? 0, 0)}/s ` +
        `(${row.pipelines} pipelines, ${row.policies} policies, ${row.storeKeys} store keys) | server heap ${fixed(serverSample.heapMB, 1)} MB ` +
        `external ${fixed(serverSample.externalMB, 1)} MB cpu ${fixed(serverSample.cpuPercent, 0)}% ` +
        `rss ${fixed(serverSample.rssMB, 0)} MB eld p99 ${fixed(serverSample.eldP99Ms, 1)} ms ` +
        `${fixed(serverSample.rates.decisions ?? 0, 0)} decisions/s | hostile ` +
        `${fixed(hostileSample.rates['raw requests'] ?? 0, 0)} raw/s ${fixed(hostileSample.rates.answers ?? 0, 0)} answers/s`,
    );
    const outcomes = Object.entries(client.rates)
      .filter(([name]) => name.startsWith('normal ') && !/calls|2xx/.test(name))
      .map(([name, rate]) => `${name.slice(7)} ${fixed(rate, 1)}/s`);
    const crawlerErrors = Object.entries(client.rates)
      .filter(([name]) => name.startsWith('crawler ') && name !== 'crawler calls')
      .map(([name, rate]) => `${name.slice(8)} ${fixed(rate, 1)}/s`);
    console.log(`  normal: ${outcomes.join(', ')}; crawler refusals: ${crawlerErrors.join(', ')}`);
    return row;
  };

  const at = (ms: number) =>
    new Promise((resolve) => setTimeout(resolve, started + ms - performance.now()));
  if (WARMUP > 0) {
    await at(WARMUP * 1000);
    await takeWindow(0, `warm-up (${WARMUP} s, not compared)`);
  }
  for (let t = WINDOW_MS; t <= SECONDS * 1000; t += WINDOW_MS) {
    await at(WARMUP * 1000 + t);
    rows.push(await takeWindow(t / 1000, `t=${t / 1000}s`));
  }

  running = false;
  await Promise.all(workers);
  await api.close();
  await crawler.close();
  server.stop();
  hostile.stop();

  const first = rows[0] as Row;
  const last = rows.at(-1) as Row;
  const line = (name: string, get: (r: Row) => number, digits = 1): (string | number)[] => [
    name,
    fixed(get(first), digits),
    fixed(get(last), digits),
    fixed(get(last) / get(first), 2),
  ];
  console.log(
    `\nFirst window (${first.t - WINDOW_MS / 1000}-${first.t} s) and last window (${last.t - WINDOW_MS / 1000}-${last.t} s), after the warm-up:\n`,
  );
  console.log(
    markdownTable(
      ['', 'start', 'end', 'end / start'],
      [
        line('client heap used, MB', (r) => r.client.heapMB),
        line('client external memory, MB', (r) => r.client.externalMB),
        line('client RSS, MB', (r) => r.client.rssMB, 0),
        line('client CPU, % of a core', (r) => r.client.cpuPercent, 0),
        line('client event-loop delay p99, ms', (r) => r.client.eldP99Ms),
        line('client normal calls/s', (r) => r.client.rates['normal calls'] ?? 0, 0),
        line('client normal 2xx/s', (r) => r.client.rates['normal 2xx'] ?? 0, 0),
        line('client crawler calls/s', (r) => r.client.rates['crawler calls'] ?? 0, 0),
        line('client pipelines (crawler)', (r) => r.pipelines, 0),
        line('client learned policies (crawler)', (r) => r.policies, 0),
        line(
          `client store keys (crawler, maxKeys ${STORE_KEYS} of ${KEY_SPACE})`,
          (r) => r.storeKeys,
          0,
        ),
        line('server heap used, MB', (r) => r.server.heapMB),
        line('server external memory, MB', (r) => r.server.externalMB),
        line('server RSS, MB', (r) => r.server.rssMB, 0),
        line('server CPU, % of a core', (r) => r.server.cpuPercent, 0),
        line('server event-loop delay p99, ms', (r) => r.server.eldP99Ms),
        line('server decisions/s', (r) => r.server.rates.decisions ?? 0, 0),
        line('hostile raw requests/s', (r) => r.hostile.rates['raw requests'] ?? 0, 0),
      ],
    ),
  );
}

if (values.role === 'server') await runServer();
else if (values.role === 'hostile') await runHostile(values.server as string);
else await runClient();

/**
 * The `limited-client-server` command: starts the mock server from flags or a JSON config file,
 * prints one line a second with the admitted and rejected counts, and stops cleanly on Ctrl-C.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { isInvalidOptionError } from '../shared/errors.js';
import {
  ALGORITHM_PARAMETERS,
  LIMIT_COMMON_PARAMETERS,
  type LimitConfig,
  type MockServerConfig,
} from './http/config.js';
import { createMockServer, type MockServer } from './http/server.js';
import type { RateLimitStore } from './store.js';

/** What `--limit` takes besides the algorithm's parameters (a store is for code only). */
const COMMON_PARAMETERS = LIMIT_COMMON_PARAMETERS.filter((name) => name !== 'store');

/** One line per algorithm, with its parameters, from the schema's own shapes. */
const ALGORITHM_LINES = Object.entries(ALGORITHM_PARAMETERS)
  .map(([algorithm, params]) => `  ${algorithm.padEnd(27)}${params.join(', ')}`)
  .join('\n');

/** Usage text of the command. */
export const USAGE = `Usage: limited-client-server [options]

Starts a rate-limited mock HTTP server and prints the admitted and rejected requests every second.
Ctrl-C stops it.

Options:
  -c, --config <file>        JSON configuration (the shape createMockServer takes). The flags
                             below then only override the port and host, and add --cors,
                             --metrics, --dashboard and --redis.
  -p, --port <n>             Port; 0 picks a free one (default 0, or the config's)
      --host <address>       Interface to listen on (default 127.0.0.1, or the config's)
  -l, --limit <spec>         A limit on every request, repeatable:
                             <algorithm>:<param>=<value>,...   for example
                             token-bucket:capacity=10,refillPerSecond=2
                             fixed-window:limit=100,windowMs=60000,key=header:x-api-key
                             (key is ip, global, header:<name> or json:<field path>, one
                             budget per value, e.g. key=json:model; name=<policy name>;
                             unit=tokens; cost=<n> or, read from each request,
                             cost=header:<name>|json:<field path>|default:<n>;
                             resource=<GitHub resource or Discord bucket>; partitionKey=true
                             writes the IETF pk)
      --cost <n>             Units each request spends (default 1)
      --headers <family>     ietf | draft-7 | draft-6 | x-ratelimit | openai | github | discord |
                             none (default ietf)
      --retry-after <format> seconds | http-date | none (default seconds)
      --reject-status <n>    429 | 403 (GitHub's primary limit) (default 429)
      --cors                 Answer CORS for pages on any origin: preflights, and every
                             rate-limit field exposed to scripts (default off, or the config's)
      --metrics              Serve Prometheus metrics at GET /__metrics (decisions, latency,
                             store health, Retry-After, top keys) (default off, or the config's)
      --dashboard            Serve a live dashboard page at GET /__dashboard (its JSON at
                             /__dashboard/data); turns --metrics on (default off, or the config's)
      --trust-proxy <value>  false | true | <number of proxies> (default false)
      --fail-mode <mode>     When the store fails: closed (503) | open (a local share of each
                             limit) (default closed)
      --fail-open-share <n>  With --fail-mode open, the share of each limit kept locally
                             (default 0.25)
      --redis <url>          Keep the limits in Redis (redis://host:port), shared by every
                             server started with the same URL; needs the redis package
      --interval <ms>        Milliseconds between report lines (default 1000)
  -q, --quiet                No report lines
  -h, --help                 This text

Algorithms of --limit and their parameters: rate and refillPerSecond per second, windowMs and
retryAfterMs in milliseconds, limit, capacity and burst in requests (or in the limit's unit=).
Any limit also takes ${COMMON_PARAMETERS.join(', ')}.
${ALGORITHM_LINES}
`;

/** What the command line asks for. */
export interface CliOptions {
  /** The server's configuration. */
  config: MockServerConfig;
  /** Milliseconds between report lines; 0 for none. */
  intervalMs: number;
  /** Keep the limits in the Redis at this URL. */
  redisUrl?: string;
}

/** A command-line mistake: printed with the usage hint, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const flags = {
  config: { type: 'string', short: 'c' },
  port: { type: 'string', short: 'p' },
  host: { type: 'string' },
  limit: { type: 'string', short: 'l', multiple: true },
  cost: { type: 'string' },
  headers: { type: 'string' },
  'retry-after': { type: 'string' },
  'reject-status': { type: 'string' },
  'trust-proxy': { type: 'string' },
  cors: { type: 'boolean' },
  metrics: { type: 'boolean' },
  dashboard: { type: 'boolean' },
  'fail-mode': { type: 'string' },
  'fail-open-share': { type: 'string' },
  redis: { type: 'string' },
  interval: { type: 'string' },
  quiet: { type: 'boolean', short: 'q' },
  help: { type: 'boolean', short: 'h' },
} as const;

function integer(flag: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) {
    throw new UsageError(`--${flag} must be a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return n;
}

function scalar(value: string): string | number {
  return value !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
}

/**
 * A limit's `cost=` on the command line: a number, or `|`-separated sources read from the request
 * (`header:x-token-estimate|json:max_tokens|default:1`).
 */
function costSpec(spec: string, value: string): unknown {
  if (/^\d+$/.test(value)) return Number(value);
  const from: Record<string, unknown> = Object.create(null);
  for (const part of value.split('|')) {
    const colon = part.indexOf(':');
    const kind = part.slice(0, colon);
    const arg = part.slice(colon + 1);
    if (colon <= 0 || !['header', 'json', 'default'].includes(kind)) {
      throw new UsageError(
        `--limit ${spec}: cost must be a number or header:<name>|json:<path>|default:<n>, got ${part}`,
      );
    }
    from[kind] = kind === 'default' ? scalar(arg) : arg;
  }
  return from;
}

/**
 * Parses `algorithm:param=value,...` into a limit. Values that look like numbers are numbers;
 * `key=header:<name>` is a header key, `key=json:<path>` a JSON body field's; `cost=json:max_tokens|header:x-token-estimate|default:1`
 * reads the cost from the request. The limit is checked later, with the whole configuration.
 */
export function parseLimitSpec(spec: string): LimitConfig {
  const colon = spec.indexOf(':');
  const algorithm = colon < 0 ? spec : spec.slice(0, colon);
  // Both come from the command line: own keys only (`__proto__` is no algorithm).
  const own = Object.hasOwn(ALGORITHM_PARAMETERS, algorithm)
    ? ALGORITHM_PARAMETERS[algorithm as LimitConfig['algorithm']]
    : undefined;
  if (own === undefined) {
    throw new UsageError(
      `--limit ${spec}: unknown algorithm ${JSON.stringify(algorithm)}; one of ${Object.keys(ALGORITHM_PARAMETERS).join(', ')}`,
    );
  }
  // Parameter names come from the command line: a null prototype keeps `__proto__=1` a key, which
  // validation then refuses like any unknown option.
  const limit: Record<string, unknown> = Object.assign(Object.create(null), { algorithm });
  const params = colon < 0 ? '' : spec.slice(colon + 1);
  for (const pair of params.split(',').filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--limit ${spec}: expected param=value, got ${pair}`);
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (!own.includes(name) && !COMMON_PARAMETERS.includes(name)) {
      throw new UsageError(
        `--limit ${spec}: unknown parameter ${JSON.stringify(name)}; ${algorithm} takes ${own.join(', ')} (any limit also takes ${COMMON_PARAMETERS.join(', ')})`,
      );
    }
    if (name === 'key') {
      if (value.startsWith('header:')) limit.key = { header: value.slice('header:'.length) };
      else if (value.startsWith('json:')) limit.key = { json: value.slice('json:'.length) };
      else limit.key = value;
    } else if (name === 'name' || name === 'unit' || name === 'resource') limit[name] = value;
    else if (name === 'partitionKey')
      limit[name] = value === 'true' ? true : value === 'false' ? false : value;
    else if (name === 'cost') limit.cost = costSpec(spec, value);
    else limit[name] = scalar(value);
  }
  return limit as unknown as LimitConfig;
}

function trustProxy(value: string): boolean | number {
  if (value === 'true') return true;
  if (value === 'false') return false;
  return integer('trust-proxy', value);
}

/**
 * Turns the arguments into a configuration, reading the `--config` file when given. Returns
 * `undefined` for `--help`. Throws {@link UsageError} for a malformed command line; the
 * configuration itself is validated by `createMockServer`.
 */
export async function parseCli(argv: readonly string[]): Promise<CliOptions | undefined> {
  let values: ReturnType<typeof parseArgs<{ options: typeof flags }>>['values'];
  try {
    ({ values } = parseArgs({ args: [...argv], options: flags, strict: true }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return undefined;
  let config: MockServerConfig;
  if (values.config !== undefined) {
    let text: string;
    try {
      text = await readFile(values.config, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read ${values.config}: ${(error as Error).message}`);
    }
    try {
      config = JSON.parse(text) as MockServerConfig;
    } catch (error) {
      throw new UsageError(`${values.config} is not JSON: ${(error as Error).message}`);
    }
    if (typeof config !== 'object' || config === null || Array.isArray(config)) {
      throw new UsageError(`${values.config} must hold a JSON object`);
    }
    const routeFlags = [
      'limit',
      'cost',
      'headers',
      'retry-after',
      'reject-status',
      'trust-proxy',
      'fail-mode',
      'fail-open-share',
    ] as const;
    const mixed = routeFlags.find((flag) => values[flag] !== undefined);
    if (mixed)
      throw new UsageError(`--${mixed} cannot be combined with --config; set it in the file`);
  } else {
    const route: MockServerConfig['routes'][number] = {
      path: '*',
      limits: (values.limit ?? []).map(parseLimitSpec),
    };
    if (values.cost !== undefined) route.cost = integer('cost', values.cost);
    if (values.headers !== undefined) route.headers = values.headers as never;
    if (values['retry-after'] !== undefined) route.retryAfter = values['retry-after'] as never;
    if (values['reject-status'] !== undefined) {
      route.rejectStatus = scalar(values['reject-status']) as never;
    }
    if (values['fail-mode'] !== undefined) route.failMode = values['fail-mode'] as never;
    if (values['fail-open-share'] !== undefined) {
      route.failOpenShare = scalar(values['fail-open-share']) as number;
    }
    config = { routes: [route] };
    if (values['trust-proxy'] !== undefined) config.trustProxy = trustProxy(values['trust-proxy']);
  }
  if (values.port !== undefined) config.port = integer('port', values.port);
  if (values.host !== undefined) config.host = values.host;
  // A config file's own CORS settings (an origin, fewer fields exposed) are kept.
  if (values.cors && (config.cors === undefined || config.cors === false)) config.cors = true;
  if (values.metrics) config.metrics = true;
  if (values.dashboard) config.dashboard = true;
  const intervalMs = values.quiet ? 0 : integer('interval', values.interval ?? '1000');
  if (values.redis === undefined) return { config, intervalMs };
  if (!/^rediss?:\/\//.test(values.redis)) {
    throw new UsageError(
      `--redis must be a redis:// or rediss:// URL, got ${JSON.stringify(values.redis)}`,
    );
  }
  return { config, intervalMs, redisUrl: values.redis };
}

/** Where the command writes, and which signals stop it. Injected by tests. */
export interface CliIo {
  stdout(line: string): void;
  stderr(line: string): void;
  /** Calls `stop` on the first Ctrl-C / SIGTERM; returns a function that stops listening. */
  onStop(stop: () => void): () => void;
}

function processIo(): CliIo {
  return {
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
    onStop(stop) {
      const handler = () => stop();
      process.once('SIGINT', handler);
      process.once('SIGTERM', handler);
      return () => {
        process.off('SIGINT', handler);
        process.off('SIGTERM', handler);
      };
    },
  };
}

/**
 * Runs the command until it is stopped. Resolves to the exit code: 0 after a clean stop, 1 when
 * the server cannot start, 2 for a usage or configuration mistake.
 *
 * @example
 * // bin: limited-client-server --limit gcra:rate=10,burst=5 --port 8080
 * process.exitCode = await runCli(process.argv.slice(2));
 */
export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let options: CliOptions | undefined;
  try {
    options = await parseCli(argv);
  } catch (error) {
    io.stderr(`limited-client-server: ${(error as Error).message}`);
    io.stderr('Run limited-client-server --help for usage.');
    return 2;
  }
  if (options === undefined) {
    io.stdout(USAGE.trimEnd());
    return 0;
  }
  let redis: SharedStore | undefined;
  if (options.redisUrl !== undefined) {
    try {
      redis = await connectRedis(options.redisUrl, io);
    } catch (error) {
      io.stderr(`limited-client-server: ${(error as Error).message}`);
      return 1;
    }
    options.config.store = redis.store;
  }
  let server: MockServer;
  try {
    server = await createMockServer(options.config);
  } catch (error) {
    io.stderr(`limited-client-server: ${(error as Error).message}`);
    await redis?.close();
    return isInvalidOptionError(error) ? 2 : 1;
  }
  const routes = options.config.routes.length;
  const where = redis ? `, limits in Redis at ${redis.url}` : '';
  io.stdout(
    `limited-client-server listening on ${server.url} (${routes} route${routes === 1 ? '' : 's'}${where}); Ctrl-C stops it`,
  );
  if (options.config.metrics || options.config.dashboard) {
    io.stdout(`metrics (Prometheus text) at ${server.url}/__metrics`);
  }
  if (options.config.dashboard) io.stdout(`dashboard at ${server.url}/__dashboard`);

  let last = server.stats();
  const report = () => {
    const now = server.stats();
    const degraded = now.degraded - last.degraded;
    const failedClosed = now.failedClosed - last.failedClosed;
    const store =
      degraded > 0 || failedClosed > 0
        ? ` store down: degraded ${degraded} failed-closed ${failedClosed}`
        : '';
    io.stdout(
      `${new Date().toISOString()} admitted ${now.admitted - last.admitted} rejected ${now.rejected - last.rejected}${store} (total admitted ${now.admitted} rejected ${now.rejected})`,
    );
    last = now;
  };
  const timer = options.intervalMs > 0 ? setInterval(report, options.intervalMs) : undefined;

  await new Promise<void>((resolve) => {
    const unsubscribe = io.onStop(() => {
      unsubscribe();
      resolve();
    });
  });
  clearInterval(timer);
  await server.close();
  await redis?.close();
  const total = server.stats();
  io.stdout(`stopped: admitted ${total.admitted} rejected ${total.rejected} in total`);
  return 0;
}

/** A Redis store with its connection, opened by the command. */
interface SharedStore {
  url: string;
  store: RateLimitStore;
  close(): Promise<void>;
}

/**
 * Connects to Redis and wraps it in a `RedisStore`, logging the start and end of outages. The first
 * connection fails at once when Redis does not answer; later, node-redis reconnects on its own
 * (backing off up to 2 s) while the routes fail open or closed.
 */
async function connectRedis(url: string, io: CliIo): Promise<SharedStore> {
  let redisPackage: typeof import('redis');
  try {
    redisPackage = await import('redis');
  } catch {
    throw new Error('--redis needs the redis package: npm install redis');
  }
  let connected = false;
  const client = redisPackage.createClient({
    url,
    socket: {
      connectTimeout: 5000,
      reconnectStrategy: (retries: number, cause: Error) =>
        connected ? Math.min(100 * 2 ** retries, 2000) : cause,
    },
  });
  // Outages are reported by the store, once each; node-redis's own errors would repeat them.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`cannot connect to Redis at ${url}: ${(error as Error).message}`);
  }
  connected = true;
  const { RedisStore } = await import('../redis/index.js');
  const store = new RedisStore(client);
  store.on('down', (error) =>
    io.stderr(`${new Date().toISOString()} Redis down: ${error.message}`),
  );
  store.on('up', () => io.stdout(`${new Date().toISOString()} Redis back`));
  return {
    url,
    store,
    close: async () => {
      client.destroy();
    },
  };
}

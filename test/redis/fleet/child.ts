/**
 * One process of a fleet that shares a client-side rate through Redis; spawned by `fleet.ts`.
 * Its argument is a {@link ChildPlan} as JSON, but for `startAt` and `endAt`: once set up it prints
 * `ready` and reads them from standard input as JSON. From `startAt` to `endAt` (epoch ms) it
 * keeps `concurrency` calls going through one `LimitedClient` whose store is a `RedisStore` on its
 * own Redis connection, then prints one {@link ChildReport} as JSON and exits 0. Unhandled
 * rejections are counted, not fatal, so that the report says how many there were.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { LimitedClient } from '../../../src/index.js';
import { RedisStore } from '../../../src/redis/index.js';
import { type ClientName, clientKind } from '../clients.js';

/** What the parent asks of a child. */
export interface ChildPlan {
  url: string;
  redisUrl: string;
  /** The Redis client the process uses (see `clients.ts`). */
  client: ClientName;
  prefix: string;
  /** The client-side rate shared by the fleet, per second, and its burst. */
  rate: number;
  burst: number;
  localShare: number;
  /**
   * How long a Redis command may take before the store runs on its local share, ms. @default 100
   * (the outage test's: the fleet notices a paused Redis fast).
   */
  storeTimeoutMs?: number;
  startAt: number;
  endAt: number;
  concurrency: number;
}

/** What a child reports. */
export interface ChildReport {
  /** When each response arrived, by status: epoch milliseconds. */
  arrivals: Record<string, number[]>;
  /** Calls that rejected (they should not: every call gets a response). */
  errors: string[];
  unhandled: number;
  health: ReturnType<RedisStore['health']>;
}

const plan = JSON.parse(process.argv[2] as string) as ChildPlan;

/** The first line on standard input. */
function readLine(): Promise<string> {
  return new Promise((resolve) => {
    let input = '';
    process.stdin.on('data', (chunk: Buffer) => {
      input += chunk.toString();
      const end = input.indexOf('\n');
      if (end !== -1) resolve(input.slice(0, end));
    });
  });
}
let unhandled = 0;
process.on('unhandledRejection', () => {
  unhandled += 1;
});

const redis = await clientKind(plan.client).connect(plan.redisUrl);
const store = new RedisStore(redis.client, {
  prefix: plan.prefix,
  timeoutMs: plan.storeTimeoutMs ?? 100,
  recheckMs: 100,
  localShare: plan.localShare,
});
const client = new LimitedClient(plan.url, {
  rate: plan.rate,
  burst: plan.burst,
  store,
  maxRetryAfterMs: 10_000,
});

const arrivals: Record<string, number[]> = {};
const errors: string[] = [];
// A trace, printed only when a call failed: what held the calls, and when Redis went and came back.
const trace: string[] = [];
const at = () => Date.now() - plan.startAt;
client.on('held', (e) => trace.push(`${at()} held ${e.reason} ${e.waitMs} ${e.policy ?? ''}`));
store.on('up', () => trace.push(`${at()} Redis up`));
store.on('down', (e) => trace.push(`${at()} Redis down: ${e.message}`));
// Set up: say so, and wait for the parent to say when the traffic starts and ends.
process.stdout.write('ready\n');
const times = JSON.parse(await readLine()) as Pick<ChildPlan, 'startAt' | 'endAt'>;
Object.assign(plan, times);
await sleep(Math.max(0, plan.startAt - Date.now()));
await Promise.all(
  Array.from({ length: plan.concurrency }, async () => {
    while (Date.now() < plan.endAt) {
      try {
        const response = await client.get('/work', { signal: AbortSignal.timeout(5000) });
        await response.arrayBuffer();
        const list = arrivals[response.status] ?? [];
        list.push(Date.now());
        arrivals[response.status] = list;
      } catch (error) {
        errors.push(String(error));
        trace.push(`${at()} ${String(error)}`);
      }
    }
  }),
);
if (errors.length > 0) {
  const shared = await redis.command([
    'HGET',
    `${plan.prefix}state:{limited-client:${plan.url}}`,
    's',
  ]);
  process.stderr.write(
    `fleet process ${process.pid}, ms from the start:\n${trace.slice(-60).join('\n')}\nshared state: ${shared}\n`,
  );
}
await client.close();
const report: ChildReport = { arrivals, errors, unhandled, health: store.health() };
process.stdout.write(`${JSON.stringify(report)}\n`);
await redis.close();

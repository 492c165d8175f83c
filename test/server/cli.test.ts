/**
 * The `limited-client-server` command: its arguments, a run in-process, and the real executable
 * stopped with Ctrl-C (SIGINT).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRateLimitHeaders } from '../../src/headers/index.js';
import { type CliIo, parseCli, runCli } from '../../src/server/cli.js';
import { createMockServer, type MockServerConfig } from '../../src/server/index.js';
import { isInvalidOptionError } from '../../src/shared/errors.js';
import { until } from './http/helpers.js';

describe('parseCli', () => {
  it('builds one catch-all route from flags', async () => {
    const options = await parseCli([
      '--port',
      '8081',
      '-l',
      'token-bucket:capacity=10,refillPerSecond=2.5,name=burst',
      '--limit',
      'fixed-window:limit=100,windowMs=60000,key=header:x-api-key',
      '--cost',
      '2',
      '--headers',
      'draft-7',
      '--trust-proxy',
      '1',
      '--quiet',
    ]);
    expect(options).toEqual({
      intervalMs: 0,
      config: {
        port: 8081,
        trustProxy: 1,
        routes: [
          {
            path: '*',
            cost: 2,
            headers: 'draft-7',
            limits: [
              { algorithm: 'token-bucket', capacity: 10, refillPerSecond: 2.5, name: 'burst' },
              {
                algorithm: 'fixed-window',
                limit: 100,
                windowMs: 60_000,
                key: { header: 'x-api-key' },
              },
            ],
          },
        ],
      },
    });
  });

  it('reads a JSON config file, letting --port and --host override it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lcs-'));
    const file = join(dir, 'server.json');
    await writeFile(file, JSON.stringify({ port: 9000, routes: [{ path: '/x' }] }));
    expect(await parseCli(['-c', file, '-p', '0', '--host', '::1'])).toEqual({
      intervalMs: 1000,
      config: { port: 0, host: '::1', routes: [{ path: '/x' }] },
    });
    await expect(parseCli(['-c', file, '--limit', 'gcra:rate=1'])).rejects.toThrow(
      '--limit cannot be combined with --config',
    );
    await expect(parseCli(['-c', join(dir, 'missing.json')])).rejects.toThrow(/cannot read/);
  });

  it('--cors turns CORS on, and keeps a config file own CORS settings', async () => {
    const options = await parseCli(['--cors', '-l', 'gcra:rate=10,burst=5', '-q']);
    expect(options?.config.cors).toBe(true);
    expect((await parseCli(['-q']))?.config.cors).toBeUndefined();
    const dir = await mkdtemp(join(tmpdir(), 'lcs-'));
    const own = join(dir, 'own.json');
    const cors = { origin: 'http://localhost:5173', exposeHeaders: ['Retry-After'] };
    await writeFile(own, JSON.stringify({ cors, routes: [{ path: '/x' }] }));
    expect((await parseCli(['-c', own, '--cors']))?.config.cors).toEqual(cors);
    const off = join(dir, 'off.json');
    await writeFile(off, JSON.stringify({ cors: false, routes: [{ path: '/x' }] }));
    expect((await parseCli(['-c', off, '--cors']))?.config.cors).toBe(true);
    // The server it starts answers preflights.
    const server = await createMockServer(options?.config as MockServerConfig);
    try {
      const answer = await fetch(server.url, {
        method: 'OPTIONS',
        headers: { origin: 'http://page.test', 'access-control-request-method': 'POST' },
      });
      expect(answer.status).toBe(204);
      expect(answer.headers.get('access-control-allow-headers')).toBe('Idempotency-Key');
    } finally {
      await server.close();
    }
  });

  it('takes the fail mode and a Redis URL', async () => {
    const options = await parseCli([
      '-l',
      'gcra:rate=10,burst=5',
      '--fail-mode',
      'open',
      '--fail-open-share',
      '0.5',
      '--redis',
      'redis://127.0.0.1:6379',
    ]);
    expect(options?.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(options?.config.routes[0]).toMatchObject({ failMode: 'open', failOpenShare: 0.5 });
    await expect(parseCli(['--redis', '127.0.0.1:6379'])).rejects.toThrow(
      '--redis must be a redis:// or rediss:// URL, got "127.0.0.1:6379"',
    );
  });

  it('refuses malformed flags', async () => {
    await expect(parseCli(['--port', '80a'])).rejects.toThrow(
      '--port must be a non-negative integer',
    );
    await expect(parseCli(['--limits', 'x'])).rejects.toThrow(/Unknown option '--limits'/);
    await expect(parseCli(['-l', 'gcra:rate'])).rejects.toThrow('expected param=value, got rate');
    expect(await parseCli(['--help'])).toBeUndefined();
  });

  it('takes a unit and a cost read from the request, and serves the openai fields', async () => {
    const options = await parseCli([
      '-l',
      'fixed-window:limit=10,windowMs=1000,name=requests',
      '-l',
      'fixed-window:limit=600,windowMs=10000,name=tokens,unit=tokens,cost=header:x-token-estimate|json:usage.max|default:2',
      '--headers',
      'openai',
      '--quiet',
    ]);
    expect(options?.config.routes[0]?.limits?.[1]).toEqual({
      algorithm: 'fixed-window',
      limit: 600,
      windowMs: 10_000,
      name: 'tokens',
      unit: 'tokens',
      cost: { header: 'x-token-estimate', json: 'usage.max', default: 2 },
    });
    const server = await createMockServer(options?.config as MockServerConfig);
    try {
      const post = (body: string) =>
        fetch(server.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
      const priced = await post('{"usage": {"max": 100}}');
      expect(priced.headers.get('x-ratelimit-remaining-tokens')).toBe('500');
      expect(priced.headers.get('x-ratelimit-remaining-requests')).toBe('9');
      const unpriced = await post('{}');
      expect(unpriced.headers.get('x-ratelimit-remaining-tokens')).toBe('498');
    } finally {
      await server.close();
    }
    expect(
      (await parseCli(['-l', 'fixed-window:limit=5,windowMs=1000,cost=3']))?.config.routes[0]
        ?.limits?.[0],
    ).toMatchObject({ cost: 3 });
    await expect(parseCli(['-l', 'fixed-window:limit=5,cost=body:n'])).rejects.toThrow(
      'cost must be a number or header:<name>|json:<path>|default:<n>, got body:n',
    );
  });

  it('serves a budget per model (key=json:), GitHub fields with 403, and the IETF pk from flags', async () => {
    const perModel = await parseCli([
      '-l',
      'fixed-window:limit=2,windowMs=60000,key=json:model,name=requests',
      '--headers',
      'openai',
    ]);
    expect(perModel?.config.routes[0]?.limits?.[0]).toMatchObject({ key: { json: 'model' } });
    const github = await parseCli([
      '--headers',
      'github',
      '--reject-status',
      '403',
      '--retry-after',
      'none',
      '-l',
      'fixed-window:limit=1,windowMs=60000,key=header:authorization,resource=core',
    ]);
    expect(github?.config.routes[0]).toMatchObject({ headers: 'github', rejectStatus: 403 });
    const ietf = await parseCli(['-l', 'fixed-window:limit=3,windowMs=60000,partitionKey=true']);
    expect(ietf?.config.routes[0]?.limits?.[0]).toMatchObject({ partitionKey: true });
    const servers = await Promise.all(
      [perModel, github, ietf].map((o) => createMockServer(o?.config as MockServerConfig)),
    );
    const [openaiUrl, githubUrl, ietfUrl] = servers.map((server) => server.url);
    try {
      const ask = (model: string) =>
        fetch(`${openaiUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model }),
        });
      for (const model of ['a', 'a', 'b']) expect((await ask(model)).status).toBe(200);
      expect((await ask('a')).status).toBe(429);
      expect((await fetch(`${githubUrl}/user`)).headers.get('x-ratelimit-resource')).toBe('core');
      const refused = await fetch(`${githubUrl}/user`);
      expect(refused.status).toBe(403);
      expect(refused.headers.has('retry-after')).toBe(false);
      expect((await fetch(`${ietfUrl}/x`)).headers.get('ratelimit')).toMatch(/;pk=:[^:]+:$/);
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
    await expect(
      createMockServer(
        (await parseCli(['--reject-status', '500', '-l', 'gcra:rate=1,burst=1']))
          ?.config as MockServerConfig,
      ),
    ).rejects.toThrow('routes[0].rejectStatus: must be 429 or 403');
  });

  it('refuses a limit parameter named like a prototype property, naming it, and pollutes nothing', async () => {
    const before = Object.getOwnPropertyNames(Object.prototype);
    for (const name of ['__proto__', 'constructor', 'toString']) {
      await expect(
        parseCli(['-l', `fixed-window:limit=1,windowMs=1000,${name}=5`]),
      ).rejects.toThrow(`unknown parameter ${JSON.stringify(name)}`);
    }
    await expect(parseCli(['-l', '__proto__:limit=1'])).rejects.toThrow(
      'unknown algorithm "__proto__"',
    );
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(before);
  });

  it('names a misspelt parameter, the flag it came from and what the algorithm takes', async () => {
    await expect(parseCli(['--limit', 'gcra:rate=10,burts=5'])).rejects.toThrow(
      '--limit gcra:rate=10,burts=5: unknown parameter "burts"; gcra takes rate, burst (any limit also takes key, unit, cost, name, resource, partitionKey)',
    );
    await expect(parseCli(['-l', 'token-bucket:capacity=5,refill=1'])).rejects.toThrow(
      'token-bucket takes capacity, refillPerSecond',
    );
    await expect(parseCli(['-l', 'gcr:rate=10,burst=5'])).rejects.toThrow(
      '--limit gcr:rate=10,burst=5: unknown algorithm "gcr"; one of fixed-window, sliding-log, sliding-window-counter, token-bucket, gcra, leaky-bucket, concurrency',
    );
  });

  it('a config file with a misspelt parameter names it, not the one it was meant to be', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lcs-'));
    const file = join(dir, 'typo.json');
    const limits = [{ algorithm: 'gcra', rate: 10, burts: 5 }];
    await writeFile(file, JSON.stringify({ routes: [{ path: '*', limits }] }));
    const options = await parseCli(['-c', file]);
    const problem = await createMockServer(options?.config as MockServerConfig).then(
      (server) => server.close().then(() => undefined),
      (error: unknown) => error,
    );
    expect(isInvalidOptionError(problem) && problem.message).toBe(
      'invalid option routes[0].limits[0].burts: is not a known option (check its spelling)',
    );
  });
});

function memoryIo() {
  const out: string[] = [];
  const err: string[] = [];
  let stop: (() => void) | undefined;
  const io: CliIo = {
    stdout: (line) => out.push(line),
    stderr: (line) => err.push(line),
    onStop(fn) {
      stop = fn;
      return () => {
        stop = undefined;
      };
    },
  };
  return { io, out, err, stop: () => stop?.() };
}

describe('runCli', () => {
  it('serves, reports every interval, and stops cleanly', async () => {
    const { io, out, stop } = memoryIo();
    const running = runCli(
      ['--limit', 'fixed-window:limit=2,windowMs=60000', '--interval', '20'],
      io,
    );
    await until(() => out.length > 0, 'the listening line');
    const url = /listening on (\S+)/.exec(out[0] as string)?.[1] as string;
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(`${url}/anything`)).status);
    expect(statuses).toEqual([200, 200, 429]);
    const line = /^\d{4}-\d\d-\d\dT\S+ admitted \d+ rejected \d+ \(total admitted 2 rejected 1\)$/;
    await until(() => out.some((l) => line.test(l)), 'a report line with the counts');
    stop();
    expect(await running).toBe(0);
    expect(out.at(-1)).toBe('stopped: admitted 2 rejected 1 in total');
    await expect(fetch(url)).rejects.toThrow();
  });

  it('exits 2 with the field named for a bad configuration, and 0 for --help', async () => {
    const bad = memoryIo();
    expect(await runCli(['-l', 'gcra:rate=0,burst=1'], bad.io)).toBe(2);
    expect(bad.err[0]).toBe(
      'limited-client-server: invalid option routes[0].limits[0].rate: must be a positive, finite number, got 0',
    );
    const share = memoryIo();
    expect(await runCli(['--fail-open-share', '2'], share.io)).toBe(2);
    expect(share.err[0]).toBe(
      'limited-client-server: invalid option routes[0].failOpenShare: must be a number above 0, up to 1, got 2',
    );
    const unreachable = memoryIo();
    expect(await runCli(['--redis', 'redis://127.0.0.1:1'], unreachable.io)).toBe(1);
    expect(unreachable.err[0]).toMatch(
      /^limited-client-server: cannot connect to Redis at redis:\/\/127\.0\.0\.1:1: /,
    );
    const help = memoryIo();
    expect(await runCli(['-h'], help.io)).toBe(0);
    expect(help.out[0]).toMatch(/^Usage: limited-client-server/);
    const typo = memoryIo();
    expect(await runCli(['-l', 'gcra:rate=10,burts=5'], typo.io)).toBe(2);
    expect(typo.err[0]).toMatch(
      /^limited-client-server: --limit gcra:rate=10,burts=5: unknown parameter "burts"; gcra takes rate, burst/,
    );
  });

  it('--help lists every algorithm with its parameters', async () => {
    const help = memoryIo();
    expect(await runCli(['--help'], help.io)).toBe(0);
    const text = help.out.join('\n');
    for (const line of [
      /^ {2}fixed-window +limit, windowMs$/m,
      /^ {2}sliding-log +limit, windowMs$/m,
      /^ {2}sliding-window-counter +limit, windowMs$/m,
      /^ {2}token-bucket +capacity, refillPerSecond$/m,
      /^ {2}gcra +rate, burst$/m,
      /^ {2}leaky-bucket +rate, capacity$/m,
      /^ {2}concurrency +limit, retryAfterMs$/m,
      /Any limit also takes key, unit, cost, name, resource, partitionKey\./,
    ]) {
      expect(text).toMatch(line);
    }
  });
});

describe('the executable', () => {
  const built = join(import.meta.dirname, '../../dist/server/cli.js');
  // What users run once built (npm test builds first); the source through tsx otherwise.
  const command = existsSync(built)
    ? [built]
    : ['--import', 'tsx', join(import.meta.dirname, '../../src/server/bin.ts')];

  it('starts from a config file, answers with headers, and exits 0 on Ctrl-C', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lcs-'));
    const file = join(dir, 'server.json');
    await writeFile(
      file,
      JSON.stringify({
        routes: [
          { path: '/hello', limits: [{ algorithm: 'gcra', rate: 1, burst: 1, name: 'pace' }] },
        ],
      }),
    );
    const child = spawn(process.execPath, [...command, '--config', file, '--quiet'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await until(() => stdout.includes('listening on'), 'the server to start');
      const url = /listening on (\S+)/.exec(stdout)?.[1] as string;
      const response = await fetch(`${url}/hello`);
      expect(response.status).toBe(200);
      expect(parseRateLimitHeaders(response.headers)).toMatchObject({ policy: 'pace', limit: 2 });
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect(stdout).toContain('stopped: admitted 1 rejected 0 in total');
  });
});

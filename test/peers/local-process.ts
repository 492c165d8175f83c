/**
 * What the peers that run as programs of their own (nginx, HAProxy) share: finding the binary,
 * a free loopback port, waiting until the program accepts connections, and stopping it by its pid
 * (SIGTERM, then SIGKILL if it does not exit), with an exit hook that kills whatever is still
 * running if this process ends first.
 */
import { type ChildProcess, spawnSync } from 'node:child_process';
import { connect, createServer as createTcpServer } from 'node:net';

/**
 * The first of `candidates` that runs (`<bin> <versionFlag>` exits 0), or `undefined`. When the
 * environment variable `envName` is set, only its value is tried.
 */
export function findBinary(
  envName: string,
  candidates: readonly string[],
  versionFlag = '-v',
): { binary: string | undefined; tried: readonly string[] } {
  const fromEnv = process.env[envName];
  const tried = fromEnv ? [fromEnv] : candidates;
  return { binary: tried.find((bin) => spawnSync(bin, [versionFlag]).status === 0), tried };
}

/** A free loopback TCP port (free when asked: another process may take it before ours does). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createTcpServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Whether something accepts TCP connections on the loopback `port`. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Waits until `child` accepts connections on `port` (true), or exits or takes longer than
 * `withinMs` (false).
 */
export async function listening(child: ChildProcess, port: number, withinMs = 5000) {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
    if (await accepts(port)) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Registers `child` to be killed if this process exits first. */
export function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** Stops `child` by its pid: SIGTERM, then SIGKILL after 3 s. Resolves once it has exited. */
export function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

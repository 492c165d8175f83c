/**
 * Shared by the hostile-input tests: a loopback HTTP server whose every answer is scripted by the
 * test (status, header lines as raw pairs, body), and a snapshot of `Object.prototype` to check that
 * nothing a server sends reaches it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer: status, raw header pairs (names may repeat), body. */
export interface Scripted {
  status: number;
  headers?: [string, string][];
  body?: string;
}

/** A loopback server answering each request with `answer(request, index)`. */
export interface ScriptedServer {
  url: string;
  /** Requests received so far. */
  readonly received: number;
  close(): Promise<void>;
}

export async function scriptedServer(
  answer: (request: IncomingMessage, index: number) => Scripted | Promise<Scripted>,
): Promise<ScriptedServer> {
  let received = 0;
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const index = received++;
    req.resume();
    const scripted = await answer(req, index);
    const flat: string[] = [];
    for (const [name, value] of scripted.headers ?? []) flat.push(name, value);
    res.writeHead(scripted.status, flat);
    res.end(scripted.body ?? '');
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get received() {
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Every own property of `Object.prototype`, with its descriptor, as a comparable snapshot. */
export function prototypeSnapshot(): string[] {
  return Reflect.ownKeys(Object.prototype).map((key) => {
    const d = Object.getOwnPropertyDescriptor(Object.prototype, key);
    return `${String(key)}:${typeof d?.value}:${typeof d?.get}:${typeof d?.set}`;
  });
}

/** Names an attacker would try as keys: every property of `Object.prototype`, and `__proto__`. */
export const PROTOTYPE_NAMES: readonly string[] = [
  ...new Set(['__proto__', ...Object.getOwnPropertyNames(Object.prototype)]),
];

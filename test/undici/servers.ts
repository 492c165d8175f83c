/**
 * Servers for the interceptor's integration tests, on loopback: the in-repo mock server (from the
 * client's integration helpers), and plain `node:http` servers for what the mock server does not
 * speak (a live event stream, a body larger than memory should hold, an upgrade).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export { closeAll as closeMockServers, pause, start } from '../client/integration/server.js';

const plain: Server[] = [];

/** Starts a `node:http` server on an ephemeral loopback port; `closePlainServers` closes it. */
export async function startPlain(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; url: string }> {
  const server = createServer(handle);
  plain.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}` };
}

/** Closes every plain server, dropping their connections. */
export async function closePlainServers(): Promise<void> {
  await Promise.all(
    plain.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
}

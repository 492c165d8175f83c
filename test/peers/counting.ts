/**
 * What every limiter under test exposes: its base URL, the statuses it answered, and a way to
 * stop it. Statuses are counted on the server side, so every client is measured the same way.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running limiter on loopback. */
export interface PeerServer {
  /** What runs, e.g. `nginx limit_req (429)`. */
  readonly name: string;
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** Responses sent so far, by HTTP status (after `close()`: the final counts). */
  statuses(): ReadonlyMap<number, number>;
  /** Stops the server and everything it started; safe to call twice. */
  close(): Promise<void>;
}

/** Responses with a 2xx status. */
export function admitted(server: PeerServer): number {
  let n = 0;
  for (const [status, count] of server.statuses()) if (status >= 200 && status < 300) n += count;
  return n;
}

/** Responses with any other status: the limiter's rejections (429, 503, 403...). */
export function rejected(server: PeerServer): number {
  let n = 0;
  for (const [status, count] of server.statuses()) if (status < 200 || status >= 300) n += count;
  return n;
}

/** A status counter fed by a Node HTTP server: each response counts once it has been sent. */
export function countResponses(server: Server): Map<number, number> {
  const counts = new Map<number, number>();
  server.on('request', (_request, response) => {
    response.once('finish', () => {
      counts.set(response.statusCode, (counts.get(response.statusCode) ?? 0) + 1);
    });
  });
  return counts;
}

/** Closes a Node HTTP server, its idle keep-alive connections included. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * The {@link PeerServer} of a Node HTTP server told to listen on 127.0.0.1 (waits until it does):
 * its statuses counted from now, `stop` (closing it, by default) run once however often `close()` is.
 */
export async function listening(
  name: string,
  server: Server,
  stop: () => Promise<unknown> = () => closeServer(server),
): Promise<PeerServer> {
  const counts = countResponses(server);
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    name,
    url: `http://127.0.0.1:${port}`,
    statuses: () => counts,
    close() {
      closing ??= stop().then(() => undefined);
      return closing;
    },
  };
}

/**
 * The open connections of a mock server and the exchanges in flight on each.
 *
 * @module
 */
import type { Socket } from 'node:net';

/** Something that ends when its connection does: an exchange. */
export interface Endable {
  end(): void;
}

/**
 * Tracks the exchanges in flight per connection, so that a connection's end ends every one of
 * them. Node emits `close` on the response at the head of a connection when the connection dies,
 * but not on the pipelined responses queued behind it, and a request's own `close` (Node 20) fires
 * as soon as its body has been read, long before its response: only the socket says the client is
 * gone. One `close` listener per socket, whatever the number of requests on it.
 */
export class Connections {
  readonly #open = new Map<Socket, Set<Endable>>();

  /**
   * Records `exchange` as in flight on `socket`, to be ended when the socket closes (at once if it
   * already has). Returns the number now in flight on the socket, this one included.
   */
  add(socket: Socket, exchange: Endable): number {
    let exchanges = this.#open.get(socket);
    if (exchanges === undefined) {
      if (socket.destroyed) {
        exchange.end();
        return 1;
      }
      const created = new Set<Endable>();
      exchanges = created;
      this.#open.set(socket, created);
      socket.once('close', () => {
        this.#open.delete(socket);
        for (const open of created) open.end();
        created.clear();
      });
    }
    exchanges.add(exchange);
    return exchanges.size;
  }

  /** Forgets `exchange`, which has ended. */
  delete(socket: Socket, exchange: Endable): void {
    this.#open.get(socket)?.delete(exchange);
  }

  /** The connections that have carried a request and are still open. */
  get size(): number {
    return this.#open.size;
  }
}

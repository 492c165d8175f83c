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
 * Tracks the open connections and the exchanges in flight on each, so that a connection's end ends
 * every one of them. Node emits `close` on the response at the head of a connection when the
 * connection dies, but not on the pipelined responses queued behind it, and a request's own
 * `close` (Node 20) fires as soon as its body has been read, long before its response: only the
 * socket says the client is gone. One `close` listener per socket, whatever the number of requests
 * on it.
 */
export class Connections {
  readonly #open = new Map<Socket, Set<Endable>>();
  #requests = 0;

  /** Records a new connection (the server's `connection` event). */
  accept(socket: Socket): void {
    const exchanges = new Set<Endable>();
    this.#open.set(socket, exchanges);
    socket.once('close', () => {
      // Each end() calls delete(), which counts the request out.
      for (const exchange of [...exchanges]) exchange.end();
      this.#open.delete(socket);
    });
  }

  /**
   * Records `exchange` as in flight on `socket`, to be ended when the socket closes (at once if it
   * already has). Returns the number now in flight on the socket, this one included.
   */
  add(socket: Socket, exchange: Endable): number {
    const exchanges = this.#open.get(socket);
    if (exchanges === undefined) {
      exchange.end();
      return 1;
    }
    exchanges.add(exchange);
    this.#requests += 1;
    return exchanges.size;
  }

  /** Forgets `exchange`, which has ended. */
  delete(socket: Socket, exchange: Endable): void {
    if (this.#open.get(socket)?.delete(exchange)) this.#requests -= 1;
  }

  /** Open connections. */
  get size(): number {
    return this.#open.size;
  }

  /** Requests in flight, over every connection. */
  get requests(): number {
    return this.#requests;
  }
}

/**
 * Raw HTTP/1.1 over a TCP socket, for what fetch will not send: absolute-form targets, pipelined
 * requests, header names fetch refuses, connections dropped halfway.
 */
import { connect, type Socket } from 'node:net';

/** One response as read off the wire. */
export interface RawResponse {
  status: number;
  /** Header fields by lower-case name (repeated fields joined with `, `). */
  headers: Map<string, string>;
  /** The body, decoded as latin1 (byte for byte). */
  body: string;
}

/**
 * Parses the complete responses at the start of `data`. `methods` are the methods of the requests
 * in order (a response to HEAD has no body whatever its `Content-Length` says). A response with
 * neither `Content-Length` nor chunked encoding runs to the end of `data` (the connection's end).
 * @param ended whether the connection has ended, so that a body running to the end is complete.
 */
export function parseResponses(data: Buffer, methods: readonly string[] = [], ended = false) {
  const text = data.toString('latin1');
  const responses: RawResponse[] = [];
  let at = 0;
  while (at < text.length) {
    const headEnd = text.indexOf('\r\n\r\n', at);
    if (headEnd < 0) break;
    const [statusLine = '', ...lines] = text.slice(at, headEnd).split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
    if (!Number.isInteger(status)) throw new Error(`not a status line: ${statusLine}`);
    const headers = new Map<string, string>();
    for (const line of lines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
    }
    let bodyEnd: number;
    const start = headEnd + 4;
    const length = headers.get('content-length');
    const noBody =
      methods[responses.length] === 'HEAD' || status === 204 || status === 304 || status < 200;
    if (noBody) bodyEnd = start;
    else if (length !== undefined) bodyEnd = start + Number(length);
    else if (headers.get('transfer-encoding') === 'chunked') {
      const decoded = dechunk(text, start);
      if (decoded === undefined) break;
      responses.push({ status, headers, body: decoded.body });
      at = decoded.end;
      continue;
    } else {
      if (!ended) break;
      bodyEnd = text.length;
    }
    if (bodyEnd > text.length) break;
    responses.push({ status, headers, body: text.slice(start, bodyEnd) });
    at = bodyEnd;
  }
  return responses;
}

function dechunk(text: string, from: number): { body: string; end: number } | undefined {
  let body = '';
  let at = from;
  for (;;) {
    const lineEnd = text.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(text.slice(at, lineEnd), 16);
    at = lineEnd + 2;
    if (size === 0) {
      const end = text.indexOf('\r\n', at);
      return end < 0 ? undefined : { body, end: end + 2 };
    }
    if (at + size + 2 > text.length) return undefined;
    body += text.slice(at, at + size);
    at += size + 2;
  }
}

/** An open raw connection: what it has received so far, and whether the server has closed it. */
export class RawConnection {
  readonly socket: Socket;
  #received: Buffer[] = [];
  #ended = false;
  #waiters: (() => void)[] = [];

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#received.push(chunk);
      this.#wake();
    });
    socket.on('close', () => {
      this.#ended = true;
      this.#wake();
    });
    // A reset from the server is an outcome the tests look at, not a failure of the helper.
    socket.on('error', () => {});
  }

  /** Connects to `port` on 127.0.0.1. */
  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RawConnection(socket));
      });
    });
  }

  /** Every byte received so far. */
  get received(): Buffer {
    return Buffer.concat(this.#received);
  }

  /** Whether the server closed the connection. */
  get ended(): boolean {
    return this.#ended;
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** The complete responses received so far (see {@link parseResponses}). */
  responses(methods: readonly string[] = []): RawResponse[] {
    return parseResponses(this.received, methods, this.#ended);
  }

  /**
   * Resolves with the responses once `count` have arrived or the connection has ended. Gives up
   * after 10 s (a safety net for a broken test, not a measurement).
   */
  async waitFor(count: number, methods: readonly string[] = []): Promise<RawResponse[]> {
    const giveUpAt = Date.now() + 10_000;
    for (;;) {
      const responses = this.responses(methods);
      if (responses.length >= count || this.#ended) return responses;
      if (Date.now() > giveUpAt) throw new Error(`gave up waiting for ${count} responses`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Resolves once the server has closed the connection (10 s safety net). */
  async waitForEnd(): Promise<void> {
    const giveUpAt = Date.now() + 10_000;
    while (!this.#ended) {
      if (Date.now() > giveUpAt) throw new Error('gave up waiting for the connection to end');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Drops the connection at once, as a client that goes away does. */
  destroy(): void {
    this.socket.destroy();
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

/**
 * Sends `request` on a new connection and resolves with the first `count` responses (fewer if the
 * server closes first); the connection is then dropped.
 */
export async function rawRequest(
  port: number,
  request: string | Buffer,
  count = 1,
  methods: readonly string[] = [],
): Promise<RawResponse[]> {
  const connection = await RawConnection.open(port);
  try {
    connection.write(request);
    return await connection.waitFor(count, methods);
  } finally {
    connection.destroy();
  }
}

/** A GET request in origin or any other form, with `Host` and extra header lines. */
export function get(target: string, headers: readonly string[] = [], method = 'GET'): string {
  return [`${method} ${target} HTTP/1.1`, 'Host: h', ...headers, '', ''].join('\r\n');
}

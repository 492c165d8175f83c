/**
 * The plumbing of one request and its response: its lifetime, its body, and writing answers.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../shared/clock.js';
import type { Connections, Endable } from './connections.js';

/** What an exchange's pending wait is aborted with: cheaper than the default DOMException. */
const ENDED = new Error('the exchange ended');

/**
 * One request and its response. It ends when the response closes (sent, or the client went away)
 * or when its connection closes (which covers pipelined responses still queued, see
 * {@link Connections}); it then runs its cleanups, once, even those registered late. A request
 * that never waits costs no `AbortController`: one is made for the first wait.
 */
export class Exchange implements Endable {
  /** Requests in flight on its connection when it arrived, itself included: 1 unless pipelined. */
  readonly pipelined: number;
  #ended = false;
  #cleanups: (() => void)[] | undefined;
  #waits: AbortController | undefined;
  readonly #server: AbortSignal;

  /** @param server aborts when the server closes, ending every wait. */
  constructor(
    req: IncomingMessage,
    res: ServerResponse,
    server: AbortSignal,
    connections: Connections,
  ) {
    this.#server = server;
    const socket = req.socket;
    res.once('close', () => this.end());
    this.onClose(() => connections.delete(socket, this));
    this.pipelined = connections.add(socket, this);
  }

  /** Whether the exchange has ended: nothing more should be sent. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Ends the exchange: cancels its waits and runs its cleanups. Idempotent. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#waits?.abort(ENDED);
    const cleanups = this.#cleanups;
    this.#cleanups = undefined;
    if (cleanups !== undefined) for (const cleanup of cleanups) cleanup();
  }

  /** Runs `cleanup` when the exchange ends; at once if it already has. */
  onClose(cleanup: () => void): void {
    if (this.#ended) cleanup();
    else if (this.#cleanups === undefined) this.#cleanups = [cleanup];
    else this.#cleanups.push(cleanup);
  }

  /**
   * Sleeps `ms` on `clock`; false when the exchange ended (or the server closed) first, and then
   * nothing more should be sent.
   */
  async wait(clock: Clock, ms: number): Promise<boolean> {
    if (this.#ended || this.#server.aborted) return false;
    if (ms <= 0) return true;
    this.#waits ??= new AbortController();
    const waits = this.#waits;
    const onServerClose = () => waits.abort(ENDED);
    this.#server.addEventListener('abort', onServerClose, { once: true });
    try {
      await clock.sleep(ms, waits.signal);
      return true;
    } catch {
      return false;
    } finally {
      this.#server.removeEventListener('abort', onServerClose);
    }
  }
}

/**
 * A request header's value (repeated fields joined with `, `), or `undefined` when absent. `name`
 * in lower case. Read from the raw header lines rather than `req.headers`, a plain object in which
 * a name such as `constructor` finds `Object.prototype`'s and a `__proto__` field is dropped.
 */
export function header(req: IncomingMessage, name: string): string | undefined {
  const raw = req.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const field = raw[i] as string;
    if (field.length !== name.length || field.toLowerCase() !== name) continue;
    value = value === undefined ? (raw[i + 1] as string) : `${value}, ${raw[i + 1]}`;
  }
  return value;
}

/** Drops the connection with a TCP RST and no response: what a crashed upstream looks like. */
export function resetConnection(req: IncomingMessage): void {
  req.socket.resetAndDestroy();
}

/**
 * Response header fields as Node's `writeHead` takes them raw: names and values in turn
 * (`['Retry-After', '1', 'RateLimit', '...']`). A list, not an object: names come from the
 * configuration and are never keys of a plain object.
 */
export type HeaderFields = readonly string[];

let dateSecond = Number.NaN;
let dateField = '';

/** The `Date` field for now on `clock`, formatted once per second. */
export function httpDate(clock: Clock): string {
  const second = Math.floor(clock.now() / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateField = new Date(second * 1000).toUTCString();
  }
  return dateField;
}

/** Answers with a JSON body, at once. The `Date` field comes from the server's clock. */
export function sendJson(
  res: ServerResponse,
  clock: Clock,
  status: number,
  headers: HeaderFields,
  payload: unknown,
): void {
  const body = Buffer.from(JSON.stringify(payload));
  res.writeHead(status, [
    ...headers,
    'Date',
    httpDate(clock),
    'Content-Type',
    'application/json',
    'Content-Length',
    String(body.length),
  ]);
  res.end(body);
}

/**
 * Answers with `body`, at once or `slow.chunkBytes` every `slow.intervalMs` on the server's clock
 * (then the returned promise says when it is done). Stops writing (without ending) when the
 * exchange ends first; the connection is gone by then.
 */
export function send(
  res: ServerResponse,
  exchange: Exchange,
  clock: Clock,
  status: number,
  headers: HeaderFields,
  body: Buffer,
  slow?: { chunkBytes: number; intervalMs: number },
): Promise<void> | undefined {
  res.writeHead(status, [
    ...headers,
    'Date',
    httpDate(clock),
    'Content-Length',
    String(body.length),
  ]);
  if (slow === undefined || res.req.method === 'HEAD') {
    res.end(body);
    return undefined;
  }
  return sendSlowly(res, exchange, clock, body, slow);
}

async function sendSlowly(
  res: ServerResponse,
  exchange: Exchange,
  clock: Clock,
  body: Buffer,
  slow: { chunkBytes: number; intervalMs: number },
): Promise<void> {
  for (let at = 0; at < body.length; at += slow.chunkBytes) {
    if (at > 0 && !(await exchange.wait(clock, slow.intervalMs))) return;
    res.write(body.subarray(at, at + slow.chunkBytes));
  }
  res.end();
}

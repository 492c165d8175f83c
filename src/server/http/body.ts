/**
 * Request bodies: read whole, each under a size limit, all of them together under a byte budget.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';

/** The largest request body read, in bytes; larger ones get 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Past this many bytes of an oversized body, the connection is cut instead of read to the end. */
const DRAIN_BYTES = 16 * MAX_BODY_BYTES;

/**
 * The request-body bytes the server holds at once, over every request, under a bound. Bytes are
 * reserved as they arrive and released when the request is done with them.
 */
export class BodyBudget {
  readonly #max: number;
  #held = 0;

  /** @param max the most bytes held at once. */
  constructor(max: number) {
    this.#max = max;
  }

  /** Bytes held now. */
  get held(): number {
    return this.#held;
  }

  /** Reserves `bytes`; false (and nothing reserved) when that would pass the bound. */
  reserve(bytes: number): boolean {
    if (this.#held + bytes > this.#max) return false;
    this.#held += bytes;
    return true;
  }

  /** Gives back `bytes` reserved earlier. */
  release(bytes: number): void {
    this.#held -= bytes;
  }
}

/** What {@link readBody} read. */
export type BodyRead =
  /** The whole body, its bytes reserved in the budget until `release` is called. */
  | { kind: 'body'; body: Buffer; release: () => void }
  /** Over {@link MAX_BODY_BYTES} (413). */
  | { kind: 'too-large' }
  /** The budget could not hold it (503). Nothing stays reserved. */
  | { kind: 'busy' }
  /** The request was aborted before its end. Nothing stays reserved. */
  | { kind: 'aborted' };

/** The read of a request without a body: nothing reserved, nothing to release. */
export const NO_BODY: Extract<BodyRead, { kind: 'body' }> = Object.freeze({
  kind: 'body',
  body: Buffer.alloc(0),
  release: () => {},
});

/**
 * Whether the request has a body to read: a `Content-Length` other than 0, or a
 * `Transfer-Encoding` (RFC 9112 §6.3: without either, a request has none). Lets a bodiless request
 * skip the stream machinery.
 */
export function declaresBody(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 14 && name.toLowerCase() === 'content-length') {
      if (raw[i + 1] !== '0') return true;
    } else if (name.length === 17 && name.toLowerCase() === 'transfer-encoding') return true;
  }
  return false;
}

/**
 * Reads the request body into memory, reserving its bytes in `budget` as they arrive. A body over
 * {@link MAX_BODY_BYTES}, or one the budget cannot hold, is still read (and dropped) up to 16 MiB,
 * so that the client finishes sending and can read the answer; past that the connection is cut.
 */
export async function readBody(req: IncomingMessage, budget: BodyBudget): Promise<BodyRead> {
  const chunks: Buffer[] = [];
  let size = 0;
  let reserved = 0;
  let busy = false;
  const release = () => {
    budget.release(reserved);
    reserved = 0;
  };
  try {
    for await (const chunk of req) {
      const bytes = (chunk as Buffer).length;
      size += bytes;
      if (size > DRAIN_BYTES) {
        req.destroy();
        break;
      }
      if (size > MAX_BODY_BYTES || busy) continue;
      if (budget.reserve(bytes)) {
        reserved += bytes;
        chunks.push(chunk as Buffer);
      } else {
        busy = true;
        chunks.length = 0;
        release();
      }
    }
  } catch {
    release();
    return { kind: 'aborted' };
  }
  if (size > MAX_BODY_BYTES) {
    release();
    return { kind: 'too-large' };
  }
  if (busy) return { kind: 'busy' };
  return { kind: 'body', body: Buffer.concat(chunks), release };
}

/**
 * Making a streamed request body of known, small length replayable, so that its request can be
 * retried.
 *
 * undici's fetch hands every body to the dispatcher as an async iterable (a string included), and
 * a stream can be sent once: without this, no POST made with fetch (or an SDK on it) could be
 * retried after a 429. A body that is an async iterable (a Node `Readable` too) and whose request
 * says its length in `content-length`, at most {@link MAX_REPLAYABLE_BODY_BYTES}, is read into
 * memory before the first attempt and sent as bytes. Any other stream is sent as it comes, once:
 * its request is paced like any other, but not retried.
 *
 * The read is part of the call: the caller's abort, the call's `timeoutMs` and the interceptor's
 * `close()` stop it (a stream that declares a length and never ends would otherwise hold the call
 * before the pipeline, out of their reach), and the stream is closed then.
 *
 * @module
 */

import type { Dispatcher } from 'undici';
import { onAbort } from '../client/call/signals.js';
import { abortReason } from '../shared/clock.js';
import { requestHeader } from './headers.js';

type UndiciHeaders = Dispatcher.DispatchOptions['headers'];

/** Largest streamed body read into memory to be replayable, in bytes (1 MiB). */
export const MAX_REPLAYABLE_BODY_BYTES = 1024 * 1024;

/**
 * Whether `body` is read by {@link readBody} first: an async iterable whose request's
 * `content-length` is at most {@link MAX_REPLAYABLE_BODY_BYTES}.
 */
export function isSmallStream(
  body: unknown,
  headers: UndiciHeaders,
): body is AsyncIterable<unknown> {
  if (!isAsyncIterable(body)) return false;
  const contentLength = requestHeader(headers, 'content-length');
  if (contentLength === undefined) return false;
  const length = Number(contentLength);
  return Number.isInteger(length) && length >= 0 && length <= MAX_REPLAYABLE_BODY_BYTES;
}

function isAsyncIterable(body: unknown): body is AsyncIterable<unknown> {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function'
  );
}

/**
 * Reads `body` into one buffer when it holds at most `maxBytes`; past them (a `content-length`
 * that was wrong) the stream as it was: what was read, then the rest, unread.
 * Rejects with what the stream threw, or with `signal`'s reason as soon as it aborts; the stream
 * is then closed (its iterator's `return()`, which ends a Node stream or a web stream at once).
 */
export function readBody(
  body: AsyncIterable<unknown>,
  maxBytes = MAX_REPLAYABLE_BODY_BYTES,
  signal?: AbortSignal,
): Promise<Buffer | AsyncIterable<Uint8Array>> {
  let iterator: AsyncIterator<unknown>;
  try {
    iterator = body[Symbol.asyncIterator]();
  } catch (error) {
    return Promise.reject(error);
  }
  if (signal === undefined) return readAll(iterator, maxBytes);
  return new Promise((resolve, reject) => {
    const stop = onAbort(signal, () => {
      reject(abortReason(signal));
      close(iterator);
    });
    readAll(iterator, maxBytes).then(
      (read) => {
        stop();
        resolve(read);
      },
      (error: unknown) => {
        stop();
        reject(error);
      },
    );
  });
}

const noop = () => {};

/** Ends a stream being read; not awaited: a generator stuck in a read returns only after it. */
function close(iterator: AsyncIterator<unknown>): void {
  try {
    iterator.return?.()?.then(undefined, noop);
  } catch {
    // A stream that cannot be closed is left to the caller.
  }
}

async function readAll(
  iterator: AsyncIterator<unknown>,
  maxBytes: number,
): Promise<Buffer | AsyncIterable<Uint8Array>> {
  const read: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) return Buffer.concat(read, bytes);
    const chunk = toBytes(next.value);
    read.push(chunk);
    bytes += chunk.length;
    if (bytes > maxBytes) return rest(read, iterator);
  }
}

async function* rest(
  read: Uint8Array[],
  iterator: AsyncIterator<unknown>,
): AsyncIterable<Uint8Array> {
  yield* read;
  for (;;) {
    const next = await iterator.next();
    if (next.done) return;
    yield toBytes(next.value);
  }
}

function toBytes(chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  if (typeof chunk === 'string') return Buffer.from(chunk);
  if (ArrayBuffer.isView(chunk))
    return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  throw new TypeError(`request body: a chunk must be bytes or a string (got ${typeof chunk})`);
}

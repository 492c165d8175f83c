/**
 * The bounded look at a JSON answer's body (docs/body-limits.md): a clone of the response is read,
 * at most {@link MAX_BODY_LOOK_BYTES} bytes for at most {@link BODY_LOOK_MS}, and parsed for the
 * limits a GraphQL API reports there (`parse.ts`). The caller's response is not touched: `clone()`
 * tees its body, so the caller reads the same bytes, with the same headers, whatever the look did.
 * A body that is not JSON, larger than the bound (by `Content-Length` or as read), slower than the
 * time bound, malformed, or that says nothing of limits gives `undefined`; nothing here throws.
 * A response that delivers its body itself (the undici interceptor's) is not looked at.
 *
 * @module
 */
import type { Clock } from '../../shared/clock.js';
import { REPORTS_BODY_END } from '../call/body-watch.js';
import { onAbort } from '../call/signals.js';
import { type BodyLimits, parseBodyLimits } from './parse.js';

/** Most bytes of an answer's body read (64 KiB): a larger body is passed through unread. */
export const MAX_BODY_LOOK_BYTES = 64 * 1024;

/**
 * Longest wait for the body's bytes, in milliseconds of the client's clock: a body that has not
 * ended by then (a stream, a stalled server) is passed through unread.
 */
export const BODY_LOOK_MS = 1000;

/** A JSON content type (`+json` too, GraphQL's `application/graphql-response+json`). */
const JSON_TYPE = /^\s*application\/(?:[\w.-]+\+)?json\b/i;

/**
 * What `response`'s body says about limits, read from a clone (see the module comment). `signal`
 * (the attempt's) ends the look early; `now` reads the clock when the body has been read.
 */
export async function lookAtBody(
  response: Response,
  clock: Clock,
  signal: AbortSignal | undefined,
): Promise<BodyLimits | undefined> {
  try {
    // A response whose body goes to its caller by another way (the undici interceptor's, from the
    // dispatcher's callbacks): opening its stream would take the body from the caller.
    if (REPORTS_BODY_END in response) return undefined;
    // Not `response.body`: a pipeline under this one may watch it through that getter (a
    // `LimitedClient` over `wrapFetch`), and the clone must tee the stream the getter reads. A
    // body used already makes `clone()` throw: passed through unread.
    if (!JSON_TYPE.test(response.headers.get('content-type') ?? '')) return undefined;
    const length = Number(response.headers.get('content-length') ?? 0);
    if (!(length <= MAX_BODY_LOOK_BYTES)) return undefined;
    const text = await readBounded(response.clone(), clock, signal);
    if (text === undefined) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return undefined; // Malformed (or nested past what the engine parses): nothing said.
    }
    return parseBodyLimits(value);
  } catch {
    // A response that cannot be cloned or read (someone else's class): passed through unread.
    return undefined;
  }
}

/**
 * The text of `copy`'s body when it ends within the bounds (bytes and time), else `undefined`;
 * the copy is cancelled when it does not (the caller's branch of the tee goes on).
 */
async function readBounded(
  copy: Response,
  clock: Clock,
  signal: AbortSignal | undefined,
): Promise<string | undefined> {
  const body = copy.body;
  if (body === null) return undefined;
  const reader = body.getReader();
  let cut = false;
  const stop = () => {
    cut = true;
    reader.cancel().catch(() => {});
  };
  const timer = new AbortController();
  clock.sleep(BODY_LOOK_MS, timer.signal).then(stop, () => {});
  // On an abort, fetch errors the body it is reading, both copies with it: the copy is let go
  // rather than cancelled (cancelling it too made fetch's own cancel of the caller's copy reject,
  // unhandled, with the abort).
  const off =
    signal &&
    onAbort(signal, () => {
      cut = true;
      try {
        reader.releaseLock();
      } catch {
        // Released already.
      }
    });
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  try {
    for (;;) {
      const next = await reader.read();
      if (cut) return undefined;
      if (next.done) return text + decoder.decode();
      size += next.value.byteLength;
      if (size > MAX_BODY_LOOK_BYTES) {
        stop();
        return undefined;
      }
      text += decoder.decode(next.value, { stream: true });
    }
  } catch {
    return undefined;
  } finally {
    timer.abort();
    off?.();
  }
}

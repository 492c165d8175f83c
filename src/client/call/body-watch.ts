/**
 * Telling when the body of a `Response` handed to the caller ends, so that its request's slot
 * comes back then (see `open-bodies.ts`), without wrapping the body of every response.
 *
 * A body ends when a consuming method (`text()`, `json()`, `arrayBuffer()`, `blob()`, `bytes()`,
 * `formData()`) settles, or when the stream read from `response.body` is read to its end, fails
 * or is cancelled. The response keeps its identity and its class (`instanceof Response` holds):
 * it gets, once, a prototype that sits between it and its own and overrides those methods and the
 * `body` getter, each calling the original. So a body read with `text()` costs one more promise
 * and nothing else; only a body read as a stream goes through a second stream, which tells each
 * pending read apart from the time between reads (when the grace of `open-bodies.ts` runs).
 * Wrapping every body in a `TransformStream` and making a new `Response` would cost about three
 * times as much as the whole rest of a call (and lose `url`, `redirected` and `type`).
 *
 * A response whose body is `null` (`HEAD`, 204, 304), empty (`Content-Length: 0`) or already used
 * gives its slot back at once; so does one that cannot take the prototype (a frozen object). A response that says when its
 * body ends itself, through the {@link REPORTS_BODY_END} method (the undici interceptor's, whose
 * body goes to the caller's handler from the dispatcher's callbacks), is left to do so.
 *
 * What the second stream does not keep: it is a default stream, so a reader in `byob` mode is
 * refused (fetch's own body is a byte stream); and a `clone()` taken before the body is read is
 * a body of its own, whose reading does not end this one's (the slot then ends with the grace).
 * A response watched already, by a pipeline under this one (a `LimitedClient` over `wrapFetch`,
 * both with a cap), is that pipeline's to hold: this one's slot comes back at once.
 *
 * @module
 */
import type { Slot } from './open-bodies.js';

/**
 * The method a response defines to watch its own body: called with the request's slot, it ends
 * the slot when the body ends (a `Symbol.for`, so that two copies of the package agree on it).
 */
export const REPORTS_BODY_END = Symbol.for('limited-client.reports-body-end');

/** The slot of a watched response; module-private, so that another copy watches on its own. */
const SLOT = Symbol('slot');
/** The stream handed out for a watched response's body, once made. */
const STREAM = Symbol('stream');

interface Watched {
  [SLOT]?: Slot;
  [STREAM]?: ReadableStream<Uint8Array>;
  [REPORTS_BODY_END]?: (slot: Slot) => void;
}

type Method = () => Promise<unknown>;

/** The methods that consume the whole body, each returning a promise (none takes arguments). */
const CONSUMERS = ['arrayBuffer', 'blob', 'bytes', 'formData', 'json', 'text'];

/** The prototype put in front of each response prototype met (a few: one per fetch in use). */
const watchers = new WeakMap<object, object>();

/**
 * Ends `slot` when `response`'s body ends (see the module comment); meanwhile the slot is idle
 * whenever no read is pending. Never throws.
 */
export function watchBody(response: Response, slot: Slot): void {
  const watched = response as unknown as Watched;
  try {
    const own = watched[REPORTS_BODY_END];
    if (typeof own === 'function') {
      own.call(response, slot);
      return;
    }
    // (A body used already, by a hook that read it, is caught by the methods: they reject.)
    if (
      watched[SLOT] !== undefined ||
      response.body === null ||
      response.headers.get('content-length') === '0'
    ) {
      slot.end();
      return;
    }
    // Its own properties before the prototype: V8 adds a property to an object whose prototype
    // was just changed on a slow path (2 µs a call, measured; before, nothing measurable).
    watched[SLOT] = slot;
    watched[STREAM] = undefined;
    Object.setPrototypeOf(response, watcherOf(Object.getPrototypeOf(response) as object));
    slot.idle();
  } catch {
    // A response that takes no prototype nor property: its slot comes back now, as before.
    slot.end();
  }
}

function watcherOf(base: object): object {
  let watcher = watchers.get(base);
  if (watcher === undefined) {
    watcher = makeWatcher(base);
    watchers.set(base, watcher);
  }
  return watcher;
}

/** A prototype over `base` whose consuming methods and `body` getter watch the body. */
function makeWatcher(base: object): object {
  const watcher = Object.create(base) as object;
  for (const name of CONSUMERS) {
    const original = (base as Record<string, unknown>)[name];
    if (typeof original !== 'function') continue;
    Object.defineProperty(watcher, name, {
      configurable: true,
      writable: true,
      value(this: Watched) {
        return consume(this, original as Method);
      },
    });
  }
  Object.defineProperty(watcher, 'body', {
    configurable: true,
    get(this: Watched) {
      return bodyOf(this, base);
    },
  });
  return watcher;
}

/** A consuming method: reading all the way; the slot ends when it settles, before the caller goes on. */
function consume(response: Watched, original: Method): Promise<unknown> {
  const slot = response[SLOT];
  if (slot === undefined) return original.call(response);
  slot.reading();
  let done: Promise<unknown>;
  try {
    done = original.call(response);
  } catch (error) {
    slot.end();
    throw error;
  }
  // `then` rather than `finally`, which makes two more promises per call.
  return done.then(
    (value) => {
      slot.end();
      return value;
    },
    (error: unknown) => {
      slot.end();
      throw error;
    },
  );
}

/** The `body` getter: the same stream every time, read through one that watches the reads. */
function bodyOf(response: Watched, base: object): unknown {
  const made = response[STREAM];
  if (made !== undefined) return made;
  const slot = response[SLOT];
  // The original getter, wherever it is on the chain, called on the response itself.
  const source = Reflect.get(base, 'body', response) as ReadableStream<Uint8Array> | null;
  if (slot === undefined || source === null || slot.ended) return source;
  const stream = readThrough(source, slot);
  response[STREAM] = stream;
  return stream;
}

/**
 * A stream that reads `source` one read at a time (nothing is read ahead): the slot is `reading`
 * while a read is pending, `idle` between reads, and ends with the source's end, its error or a
 * cancel.
 */
function readThrough(source: ReadableStream<Uint8Array>, slot: Slot): ReadableStream<Uint8Array> {
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        reader ??= source.getReader();
        slot.reading();
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await reader.read();
        } catch (error) {
          slot.end();
          throw error;
        }
        if (next.done) {
          slot.end();
          controller.close();
          return;
        }
        controller.enqueue(next.value);
        slot.idle();
      },
      cancel(reason) {
        slot.end();
        return reader ? reader.cancel(reason) : source.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

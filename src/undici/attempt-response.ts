/**
 * The `Response` the pipeline sees for an attempt sent through undici's dispatcher: a real
 * `Response` (status, headers, `instanceof`) whose body is made only when someone asks for it.
 *
 * The pipeline reads an attempt's status and headers, and touches the body only to let go of an
 * answer it will not return (a retried 429). The answer a call ends with goes to the caller's
 * handler straight from the dispatcher's callbacks, never through a stream; so the common call
 * builds no `ReadableStream` at all, which costs more than the rest of the pipeline. A body that
 * is asked for (by that cleanup, or by a `shouldRetry` that reads it) streams from the attempt.
 *
 * @module
 */

import type { IncomingHttpHeaders } from 'node:http';
import { REPORTS_BODY_END } from '../client/body-watch.js';
import type { Slot } from '../client/open-bodies.js';

/** What an attempt gives its response's body: a stream of what is still to be read. */
export interface BodySource {
  /** The body from here on, as a stream; `null` for a response that has none. */
  openStream(): ReadableStream<Uint8Array> | null;
  /** Ends `slot` when the body ends, fails or is let go (see `client/open-bodies.ts`). */
  holdSlot(slot: Slot): void;
}

/** Statuses whose responses have no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** See the module comment. */
export class AttemptResponse extends Response {
  readonly #source: BodySource;
  #full: Response | undefined;

  /**
   * @param status any status undici reports (200 to 999). One outside the 200 to 599 the
   *   constructor accepts is kept as it is on `status` (and `ok` is false).
   * @param statusText the reason phrase; one the constructor refuses is dropped.
   * @param headers undici's response headers (lower-case names; a repeated field as an array).
   *   A name or value `Headers` refuses (undici let it through) is left out rather than failing
   *   the request.
   */
  constructor(
    source: BodySource,
    status: number,
    statusText: string,
    headers: IncomingHttpHeaders,
  ) {
    const inRange = status >= 200 && status <= 599;
    super(null, responseInit(inRange ? status : 200, statusText));
    this.#source = source;
    if (!inRange) {
      Object.defineProperty(this, 'status', { value: status });
      Object.defineProperty(this, 'ok', { value: false });
    }
    // Filled in place: a `Headers` given to the constructor would be copied once more.
    const own = this.headers;
    for (const name of Object.keys(headers)) {
      const value = headers[name];
      if (value === undefined) continue;
      try {
        if (typeof value === 'string') own.append(name, value);
        else for (const v of value) own.append(name, v);
      } catch {
        // A field fetch's Headers does not take: the pipeline does without it.
      }
    }
  }

  /** The attempt behind `response`, when it is one of these. */
  static sourceOf(response: Response): BodySource | undefined {
    return #source in response ? (response as AttemptResponse).#source : undefined;
  }

  /**
   * The call returns this response: its slot ends with the body, as the attempt sees it arrive
   * (see `client/body-watch.ts`), without making a stream of it.
   */
  [REPORTS_BODY_END](slot: Slot): void {
    this.#source.holdSlot(slot);
  }

  /** The same response with its body: made once, on first use. */
  #withBody(): Response {
    if (this.#full === undefined) {
      const status = this.status <= 599 ? this.status : 200;
      const body = NULL_BODY.has(status) ? null : this.#source.openStream();
      this.#full = new Response(body, {
        ...responseInit(status, this.statusText),
        headers: this.headers,
      });
    }
    return this.#full;
  }

  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    return this.#withBody().body as ReadableStream<Uint8Array<ArrayBuffer>> | null;
  }

  override get bodyUsed(): boolean {
    return this.#full === undefined ? false : this.#full.bodyUsed;
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return this.#withBody().arrayBuffer();
  }

  override blob(): Promise<Blob> {
    return this.#withBody().blob();
  }

  override bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#withBody().bytes();
  }

  override formData(): Promise<FormData> {
    return this.#withBody().formData();
  }

  override json(): Promise<unknown> {
    return this.#withBody().json();
  }

  override text(): Promise<string> {
    return this.#withBody().text();
  }

  /** A copy with the body teed, as `Response.clone` does (a status past 599 reads 200 there). */
  override clone(): Response {
    return this.#withBody().clone();
  }
}

/** The init of the constructor, without a reason phrase it would refuse. */
function responseInit(status: number, statusText: string): ResponseInit {
  return REASON_PHRASE.test(statusText) ? { status, statusText } : { status };
}

/** What the Response constructor accepts as `statusText` (RFC 9112's reason-phrase). */
const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/;

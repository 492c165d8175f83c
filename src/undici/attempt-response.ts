/**
 * The `Response` the pipeline sees for an attempt sent through undici's dispatcher: it answers
 * as a `Response` (`instanceof`, status, headers, body methods) but is built from undici's own
 * status and header object, and makes the real `Response`, `Headers` and body stream only when
 * someone asks for them.
 *
 * The pipeline reads an attempt's status and its rate-limit fields, and touches the body only to
 * let go of an answer it will not return (a retried 429). The rate-limit fields are read from
 * undici's header object, or its raw list, directly (see `RAW_FIELDS` in `headers/field-map.ts`
 * and `raw-headers.ts`); the answer a call
 * ends with goes to the caller's handler straight from the dispatcher's callbacks. So the common
 * call builds no `Response`, no `Headers` (filling one checks every name and value: more than
 * the rest of the adapter) and no `ReadableStream`. A hook that reads the headers
 * (`shouldRetry`, an event listener) gets a real `Headers`, filled on its first use; one that
 * reads the body (or that cleanup) gets a stream of the attempt.
 *
 * Why not a subclass of `Response`: its constructor (and the `Headers` it makes) is the cost this
 * avoids. The class takes `Response.prototype` as its prototype and defines every member of it
 * (the tests check that none is left to `Response.prototype`, whose getters would refuse it).
 *
 * @module
 */

import type { IncomingHttpHeaders } from 'node:http';
import { REPORTS_BODY_END } from '../client/call/body-watch.js';
import type { Slot } from '../client/call/open-bodies.js';
import { type HeadersInput, RAW_FIELDS } from '../headers/field-map.js';
import { appendRaw, RawFields, type RawHeaders } from './raw-headers.js';

/** What an attempt gives its response's body: a stream of what is still to be read. */
export interface BodySource {
  /** The body from here on, as a stream; `null` for a response that has none. */
  openStream(): ReadableStream<Uint8Array> | null;
  /** Ends `slot` when the body ends, fails or is let go (see `client/open-bodies.ts`). */
  holdSlot(slot: Slot): void;
}

/** Statuses whose responses have no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/**
 * A `Headers` (`instanceof` holds) that makes the real one, filled from undici's header object,
 * on its first use, and hands every call to it. Until then it holds that object for the
 * rate-limit parser ({@link RAW_FIELDS}), which reads it as it is. Not a subclass: a subclass
 * makes an empty `Headers` (and its list and map) for every attempt, which nothing may read.
 */
export class AttemptHeaders {
  #raw: IncomingHttpHeaders | RawHeaders | undefined;
  #real: Headers | undefined;

  /**
   * @param raw undici's response headers: its object (lower-case names; a repeated field as an
   *   array), or its raw list (see `raw-headers.ts`). A name or value `Headers` refuses (undici
   *   let it through) is left out when it is filled, rather than failing the request.
   */
  constructor(raw: IncomingHttpHeaders | RawHeaders) {
    this.#raw = raw;
  }

  /** undici's headers while the real `Headers` is not made (nobody read or changed it). */
  get [RAW_FIELDS](): HeadersInput | undefined {
    const raw = this.#raw;
    return Array.isArray(raw)
      ? (new RawFields(raw) as unknown as Headers)
      : (raw as IncomingHttpHeaders | undefined);
  }

  /** The real `Headers`, made and filled from undici's headers once. */
  #filled(): Headers {
    if (this.#real !== undefined) return this.#real;
    const real = new Headers();
    const given = this.#raw;
    this.#raw = undefined;
    this.#real = real;
    if (Array.isArray(given)) {
      appendRaw(real, given as RawHeaders);
      return real;
    }
    const raw = given as IncomingHttpHeaders;
    for (const name of Object.keys(raw)) {
      const value = raw[name];
      if (value === undefined) continue;
      try {
        if (typeof value === 'string') real.append(name, value);
        else for (const v of value) real.append(name, v);
      } catch {
        // A field fetch's Headers does not take: the pipeline does without it.
      }
    }
    return real;
  }

  append(name: string, value: string): void {
    this.#filled().append(name, value);
  }
  delete(name: string): void {
    this.#filled().delete(name);
  }
  get(name: string): string | null {
    return this.#filled().get(name);
  }
  getSetCookie(): string[] {
    return this.#filled().getSetCookie();
  }
  has(name: string): boolean {
    return this.#filled().has(name);
  }
  set(name: string, value: string): void {
    this.#filled().set(name, value);
  }
  forEach(
    callback: (value: string, key: string, parent: Headers) => void,
    thisArg?: unknown,
  ): void {
    for (const [name, value] of this.#filled())
      callback.call(thisArg, value, name, this.asHeaders());
  }
  entries(): HeadersIterator<[string, string]> {
    return this.#filled().entries();
  }
  keys(): HeadersIterator<string> {
    return this.#filled().keys();
  }
  values(): HeadersIterator<string> {
    return this.#filled().values();
  }
  [Symbol.iterator](): HeadersIterator<[string, string]> {
    return this.#filled().entries();
  }
  /** These headers, as the type the pipeline takes (they are one: see the class comment). */
  asHeaders(): Headers {
    return this as unknown as Headers;
  }

  /** What `console.log` shows: the real `Headers`. */
  [INSPECT](...args: unknown[]): unknown {
    const real = this.#filled();
    const base = (Headers.prototype as unknown as Record<symbol, unknown>)[INSPECT];
    return typeof base === 'function' ? base.apply(real, args) : real;
  }
}

// `instanceof Headers` holds, and `Symbol.toStringTag` reads 'Headers'; every member is the
// class's own, so none of `Headers.prototype`'s (which check their receiver) is reached.
Object.setPrototypeOf(AttemptHeaders.prototype, Headers.prototype);

/** See the module comment. */
export class AttemptResponse {
  readonly #source: BodySource;
  readonly #status: number;
  readonly #statusText: string;
  readonly #raw: IncomingHttpHeaders | RawHeaders;
  #headers: Headers | undefined;
  #full: Response | undefined;

  /**
   * @param status any status undici reports (200 to 999); one past 599 is kept as it is on
   *   `status` (and `ok` is false), and reads 200 on the `Response` made for its body.
   * @param statusText the reason phrase; one the `Response` constructor would refuse reads `''`.
   * @param headers undici's response headers, object or raw list (see {@link AttemptHeaders}).
   */
  constructor(
    source: BodySource,
    status: number,
    statusText: string,
    headers: IncomingHttpHeaders | RawHeaders,
  ) {
    this.#source = source;
    this.#status = status;
    this.#statusText = REASON_PHRASE.test(statusText) ? statusText : '';
    this.#raw = headers;
  }

  /** The attempt behind `response`, when it is one of these. */
  static sourceOf(response: Response): BodySource | undefined {
    return #source in response ? (response as unknown as AttemptResponse).#source : undefined;
  }

  /** This response, as the type the pipeline takes (it is one: see the module comment). */
  asResponse(): Response {
    return this as unknown as Response;
  }

  /**
   * The call returns this response: its slot ends with the body, as the attempt sees it arrive
   * (see `client/body-watch.ts`), without making a stream of it.
   */
  [REPORTS_BODY_END](slot: Slot): void {
    this.#source.holdSlot(slot);
  }

  get type(): ResponseType {
    return 'default';
  }

  get url(): string {
    return '';
  }

  get redirected(): boolean {
    return false;
  }

  get status(): number {
    return this.#status;
  }

  get ok(): boolean {
    return this.#status >= 200 && this.#status <= 299;
  }

  get statusText(): string {
    return this.#statusText;
  }

  /** A `Headers` that makes the real one on its first use (see {@link AttemptHeaders}). */
  get headers(): Headers {
    if (this.#headers === undefined) this.#headers = new AttemptHeaders(this.#raw).asHeaders();
    return this.#headers;
  }

  /** The same response with its body: made once, on first use. */
  #withBody(): Response {
    if (this.#full === undefined) {
      const status = this.#status <= 599 ? this.#status : 200;
      const body = NULL_BODY.has(status) ? null : this.#source.openStream();
      const init: ResponseInit = { status, headers: this.headers };
      if (this.#statusText !== '') init.statusText = this.#statusText;
      this.#full = new Response(body, init);
    }
    return this.#full;
  }

  get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    return this.#withBody().body as ReadableStream<Uint8Array<ArrayBuffer>> | null;
  }

  get bodyUsed(): boolean {
    return this.#full === undefined ? false : this.#full.bodyUsed;
  }

  arrayBuffer(): Promise<ArrayBuffer> {
    return this.#withBody().arrayBuffer();
  }

  blob(): Promise<Blob> {
    return this.#withBody().blob();
  }

  bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#withBody().bytes();
  }

  formData(): Promise<FormData> {
    return this.#withBody().formData();
  }

  json(): Promise<unknown> {
    return this.#withBody().json();
  }

  text(): Promise<string> {
    return this.#withBody().text();
  }

  /** A copy with the body teed, as `Response.clone` does (a status past 599 reads 200 there). */
  clone(): Response {
    return this.#withBody().clone();
  }

  /** What `console.log` shows: the status, reason and headers. */
  [INSPECT](): object {
    return {
      status: this.#status,
      statusText: this.#statusText,
      headers: this.headers,
      body: this.#full === undefined ? '(not read)' : this.#full.body,
    };
  }
}

// `instanceof Response` holds, and `Symbol.toStringTag` reads 'Response'; every member above is
// this class's own, so none of `Response.prototype`'s (which check their receiver) is reached.
Object.setPrototypeOf(AttemptResponse.prototype, Response.prototype);

/** What the Response constructor accepts as `statusText` (RFC 9112's reason-phrase). */
const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * What the `cost` and `partition` functions see of a call: its method, URL and headers, and its
 * body when that is text already in memory. Nothing is computed until a function asks for it: a
 * function that reads only the URL costs one small object per call, and the body is decoded and
 * parsed at most once per call, however many times (and by however many functions) it is read.
 *
 * Docs: docs/costs.md, "What a cost function sees".
 *
 * @module
 */

/**
 * Most bytes of a request body handed to a `cost` or `partition` function (1 MiB), counted as
 * sent (UTF-8). The same bound as the mock server's bodies and the undici interceptor's replayable
 * ones: an LLM request with a prompt of some 250,000 tokens still fits. Above it the function gets
 * no body at all, never a part of it (a JSON text cut short does not parse, or worse, parses).
 */
export const MAX_VIEWED_BODY_BYTES = 1024 * 1024;

/**
 * The request's headers, read-only: the reading half of `Headers` (names are case-insensitive,
 * repeated fields come combined with `, `). Writing through it is not possible; what a function
 * reads here is what the call sends, less the idempotency key the client adds.
 */
export interface ReadonlyHeaders {
  /** The field's value, or `null` when the request has none. */
  get(name: string): string | null;
  /** Whether the request has the field. */
  has(name: string): boolean;
  /** Calls `callback` with each field, names in lower case, sorted. */
  forEach(callback: (value: string, name: string) => void): void;
  /** `[name, value]` pairs, names in lower case, sorted. */
  entries(): IterableIterator<[string, string]>;
  /** The field names, lower case, sorted. */
  keys(): IterableIterator<string>;
  /** The values, in the order of {@link keys}. */
  values(): IterableIterator<string>;
  /** The same as {@link entries}. */
  [Symbol.iterator](): IterableIterator<[string, string]>;
}

/**
 * What a `cost` or `partition` function is given: the call as it will be sent.
 *
 * The body is handed over when it is text already in memory: a string, a `URLSearchParams` (as
 * the `a=1&b=2` text fetch sends), or bytes (`Uint8Array`, `ArrayBuffer`, a Node `Buffer`) whose
 * `Content-Type` says JSON, text or a URL-encoded form, decoded as UTF-8; and when it is at most
 * {@link MAX_VIEWED_BODY_BYTES} (1 MiB) as sent. A stream, a `Blob`, `FormData`, the body of a
 * `Request` given as the first argument and the bodies `createBody` makes are never read: the
 * function gets no body, and the call goes as it would without one.
 *
 * @example
 * cost: (request) => {
 *   const body = request.json() as { max_tokens?: unknown } | undefined;
 *   const maxTokens = typeof body?.max_tokens === 'number' ? body.max_tokens : 1000;
 *   // A prompt is about 4 characters a token: the body's length is a fair bound for it.
 *   return { requests: 1, tokens: Math.ceil((request.body?.length ?? 0) / 4) + maxTokens };
 * }
 */
export interface CostContext {
  /** HTTP method, upper case. */
  readonly method: string;
  /** The absolute URL. */
  readonly url: string;
  /**
   * The request's headers, read-only: the call's own (from its `init`, else from its `Request`),
   * over the client's `headers` option. Built on first read.
   */
  readonly headers: ReadonlyHeaders;
  /**
   * The body as text, or `undefined`: no body, a body that is not read (a stream, a `Blob`,
   * `FormData`), bytes not labelled as text or not valid UTF-8, or more than
   * {@link MAX_VIEWED_BODY_BYTES} bytes. Decoded on first read, once.
   */
  readonly body: string | undefined;
  /**
   * The body parsed as JSON, whatever its `Content-Type`; `undefined` when there is no
   * {@link body} or it is not JSON. Parsed on the first call, once per call: every later call, and
   * the other function (`partition`, then `cost`), gets the same value. Treat it as read-only.
   * Safe to destructure (`({ json }) => json()`).
   */
  readonly json: () => unknown;
}

/** The reading half of a `Headers`, over one the view owns or the caller's own. */
class HeadersView implements ReadonlyHeaders {
  readonly #headers: Headers;
  constructor(headers: Headers) {
    this.#headers = headers;
  }
  get(name: string): string | null {
    return this.#headers.get(name);
  }
  has(name: string): boolean {
    return this.#headers.has(name);
  }
  forEach(callback: (value: string, name: string) => void): void {
    // Not `Headers.forEach`, whose third argument is the `Headers` itself: it can be written to.
    for (const [name, value] of this.#headers) callback(value, name);
  }
  entries(): IterableIterator<[string, string]> {
    return this.#headers.entries();
  }
  keys(): IterableIterator<string> {
    return this.#headers.keys();
  }
  values(): IterableIterator<string> {
    return this.#headers.values();
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.#headers.entries();
  }
}

/** A content type whose bytes are text: JSON (`+json` too), `text/*`, or a URL-encoded form. */
const TEXT_TYPE =
  /^\s*(?:text\/|application\/(?:[\w.-]+\+)?json\b|application\/x-www-form-urlencoded\b)/i;

/** See {@link CostContext}: one per call, made only when a function will be given it. */
export class RequestView implements CostContext {
  readonly method: string;
  readonly url: string;
  readonly #own: HeadersInit | undefined;
  readonly #defaults: HeadersInit | undefined;
  readonly #body: unknown;
  #headers: HeadersView | undefined;
  /** `null` until the body was looked at. */
  #text: string | undefined | null = null;
  #parsed = false;
  #value: unknown;
  #json: (() => unknown) | undefined;

  /**
   * @param url the absolute URL.
   * @param input the caller's `Request`, when it gave one (its body is never read).
   * @param defaults the client's `headers` option, under the call's own.
   */
  constructor(
    url: string,
    input: Request | undefined,
    init: RequestInit | undefined,
    defaults: HeadersInit | undefined,
  ) {
    this.method = (init?.method ?? input?.method ?? 'GET').toUpperCase();
    this.url = url;
    this.#own = init?.headers ?? input?.headers;
    this.#defaults = defaults;
    this.#body = init?.body;
  }

  /** A function bound to this view, so that `({ json }) => json()` works; made on first read. */
  get json(): () => unknown {
    this.#json ??= () => this.#parse();
    return this.#json;
  }

  get headers(): ReadonlyHeaders {
    this.#headers ??= new HeadersView(this.#merged());
    return this.#headers;
  }

  get body(): string | undefined {
    if (this.#text === null) this.#text = this.#read();
    return this.#text;
  }

  #parse(): unknown {
    if (!this.#parsed) {
      this.#parsed = true;
      const text = this.body;
      if (text !== undefined) this.#value = parseJson(text);
    }
    return this.#value;
  }

  /** The call's headers over the defaults; the caller's own `Headers` as it is when alone. */
  #merged(): Headers {
    const own = this.#own;
    if (this.#defaults === undefined) return own instanceof Headers ? own : new Headers(own);
    const merged = new Headers(this.#defaults);
    new Headers(own).forEach((value, name) => {
      merged.set(name, value);
    });
    return merged;
  }

  #read(): string | undefined {
    const body = this.#body;
    if (typeof body === 'string') return fitsUtf8(body, MAX_VIEWED_BODY_BYTES) ? body : undefined;
    if (typeof URLSearchParams !== 'undefined' && body instanceof URLSearchParams) {
      // Percent-encoded: one byte a character.
      const text = body.toString();
      return text.length <= MAX_VIEWED_BODY_BYTES ? text : undefined;
    }
    const bytes = body instanceof ArrayBuffer || ArrayBuffer.isView(body) ? body : undefined;
    if (bytes === undefined || bytes.byteLength > MAX_VIEWED_BODY_BYTES) return undefined;
    if (!TEXT_TYPE.test(this.headers.get('content-type') ?? '')) return undefined;
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      // Not UTF-8 (or a buffer the decoder refuses): no text to give.
      return undefined;
    }
  }
}

/** `text` parsed as JSON, or `undefined` when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Whether `text` takes at most `max` bytes in UTF-8, as fetch sends it (a lone surrogate as the
 * three bytes of U+FFFD). Counts only when the length alone cannot tell.
 */
export function fitsUtf8(text: string, max: number): boolean {
  const n = text.length;
  // A UTF-16 code unit is 1 to 3 bytes (a pair of them, 4).
  if (n > max) return false;
  if (n * 3 <= max) return true;
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c < 0xdc00 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
    if (bytes > max) return false;
  }
  return true;
}

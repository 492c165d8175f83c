/**
 * Turning a call (`input`, `init`) into the request the pipeline sends: method and URL read once,
 * the idempotency key chosen once, the body checked for replayability, and the view a `cost`
 * function reads made once (see `request-view.ts`). A JSON body given to `post(path, object)` is
 * serialised here, once, and the same string is sent on every attempt.
 *
 * @module
 */
import type { HostConfig } from '../options/resolve.js';
import type { LimitedRequestInit } from '../types.js';
import type { CostVector } from './cost.js';
import { RequestView } from './request-view.js';

/** A call, ready for the pipeline. */
export interface PreparedRequest {
  /** HTTP method, upper case. */
  method: string;
  /** Absolute URL. */
  url: string;
  /** What to hand to fetch as its first argument. */
  input: string | Request;
  /** What to hand to fetch as its second argument (before the attempt's signal). */
  init: LimitedRequestInit | undefined;
  /** Whether the body may be sent again. */
  replayable: boolean;
  /** Whether the request carries an idempotency key (its own or ours). */
  hasKey: boolean;
  /** The key it carries, when it does and keys are on (what a host that honours it echoes). */
  key: string | undefined;
  /** What the host's `cost` function is given, when it has one and the call no cost of its own. */
  view: RequestView | undefined;
  /**
   * The scope the body names (`model:gpt-4o`), once read (`scopes/model-scope.ts`); `null` when it
   * names none. Read only on hosts that limit per model.
   */
  model?: string | null;
  /** The tokens its model call is charged without a cost of its own (`scopes/model-scope.ts`). */
  estimate?: CostVector;
}

const BODYLESS = new Set(['GET', 'HEAD']);

/**
 * `url` without its user name and password, for what the client shows (error messages, events):
 * `https://alice:s3cr3t@api.example.com/x` becomes `https://api.example.com/x`. The same string when
 * it has none (checked without parsing: a URL with credentials has an `@` before its path).
 */
export function withoutCredentials(url: string): string {
  const at = url.indexOf('@');
  if (at === -1) return url;
  const slash = url.indexOf('/', url.indexOf('//') + 2);
  if (slash !== -1 && slash < at) return url;
  try {
    const u = new URL(url);
    if (u.username === '' && u.password === '') return url;
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    return url;
  }
}

/**
 * True for a body fetch can send more than once: a string, bytes, a Blob, form data, URL search
 * params. A stream or an async iterable can be read once.
 */
export function isReplayableBody(body: unknown): boolean {
  if (body === undefined || body === null) return true;
  if (typeof body === 'string') return true;
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return true;
  if (typeof Blob !== 'undefined' && body instanceof Blob) return true;
  if (typeof URLSearchParams !== 'undefined' && body instanceof URLSearchParams) return true;
  if (typeof FormData !== 'undefined' && body instanceof FormData) return true;
  return false;
}

/** True for what fetch accepts as a body as it is (everything else is sent as JSON). */
export function isBodyInit(body: unknown): body is BodyInit {
  if (isReplayableBody(body) && body !== undefined && body !== null) return true;
  if (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream) return true;
  return (
    typeof body === 'object' &&
    body !== null &&
    (Symbol.asyncIterator in body ||
      typeof (body as { getReader?: unknown }).getReader === 'function')
  );
}

/** True for a body fetch can only send as a stream: a `ReadableStream` or an async iterable. */
export function isStreamBody(body: unknown): boolean {
  return !isReplayableBody(body) && isBodyInit(body);
}

/**
 * The body and headers of `post(path, body)`: a `BodyInit` is sent as it is; anything else
 * (an object, an array, a number...) is serialised to JSON once, with `Content-Type:
 * application/json` unless the caller set a content type.
 */
export function jsonInit(body: unknown, init: LimitedRequestInit | undefined): LimitedRequestInit {
  if (body === undefined || isBodyInit(body))
    return { ...init, body: body as BodyInit | undefined };
  const headers = new Headers(init?.headers);
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  return { ...init, headers, body: JSON.stringify(body) };
}

/**
 * The value of `name` in `headers` (as `HeadersInit` allows), or `undefined`, without building a
 * `Headers` for a plain object.
 */
function headerValue(headers: HeadersInit | undefined, name: string): string | undefined {
  if (headers === undefined || headers === null) return undefined;
  if (typeof (headers as Headers).get === 'function') {
    return (headers as Headers).get(name) ?? undefined;
  }
  const wanted = name.toLowerCase();
  const pairs = Array.isArray(headers) ? headers : Object.entries(headers);
  let value: string | undefined;
  for (const [field, v] of pairs) {
    // Repeated fields combine as `Headers` does.
    if (String(field).toLowerCase() === wanted) value = value === undefined ? v : `${value}, ${v}`;
  }
  return value;
}

/** `defaults` with every field of `own` over them (the call's own headers win). */
export function mergeHeaders(
  defaults: HeadersInit | undefined,
  own: HeadersInit | undefined,
): Headers {
  const merged = new Headers(defaults);
  new Headers(own).forEach((value, name) => {
    merged.set(name, value);
  });
  return merged;
}

function newKey(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * Prepares a call for the pipeline.
 *
 * @param url the absolute URL (already resolved against a base URL when there is one).
 * @param input the caller's input when it is a `Request`, else `undefined`.
 * @param defaults client-wide headers, merged under the call's.
 * @param view the call's view, when the `partition` function was given one: the `cost` function
 *   gets the same (a body parsed for one is parsed for both).
 */
export function prepareRequest(
  url: string,
  input: Request | undefined,
  init: LimitedRequestInit | undefined,
  policy: HostConfig,
  defaults: HeadersInit | undefined,
  view?: RequestView,
): PreparedRequest {
  const method = (init?.method ?? input?.method ?? 'GET').toUpperCase();
  const idem = policy.idempotency;
  const wantKey =
    init?.idempotencyKey !== false &&
    (typeof init?.idempotencyKey === 'string' || idem?.methods.has(method) === true);
  let headers: Headers | undefined;
  if (defaults !== undefined || wantKey) {
    headers = mergeHeaders(defaults, init?.headers ?? input?.headers);
  }
  let hasKey = false;
  let key: string | undefined;
  if (headers) {
    const name = idem?.header ?? 'Idempotency-Key';
    if (typeof init?.idempotencyKey === 'string') headers.set(name, init.idempotencyKey);
    else if (wantKey && !headers.has(name)) headers.set(name, newKey());
    hasKey = headers.has(name);
    if (idem) key = headers.get(name) ?? undefined;
  } else if (idem) {
    key = headerValue(init?.headers ?? input?.headers, idem.header);
    hasKey = key !== undefined;
  }

  let finalInit: LimitedRequestInit | undefined = init;
  if (headers) finalInit = { ...init, headers };
  // fetch refuses a stream body without `duplex: 'half'` (the only value it knows): add it.
  if (isStreamBody(init?.body) && (init as { duplex?: string }).duplex === undefined) {
    finalInit = { ...finalInit, duplex: 'half' } as LimitedRequestInit;
  }
  const body = init?.body !== undefined ? init.body : undefined;
  let replayable: boolean;
  if (init?.createBody) replayable = true;
  else if (init?.body !== undefined) replayable = isReplayableBody(body);
  else replayable = !input || input.body === null || BODYLESS.has(method);

  if (view === undefined && typeof policy.cost === 'function' && init?.cost === undefined) {
    // Before `init` is merged into a `Request` below: its body is still the caller's.
    view = new RequestView(url, input, init, defaults);
  }
  let target: string | Request = url;
  if (input) {
    // A Request carries its own body and signal; merge the call's init into it once.
    target = finalInit ? new Request(input, finalInit) : input;
    finalInit = undefined;
  }
  return { method, url, input: target, init: finalInit, replayable, hasKey, key, view };
}

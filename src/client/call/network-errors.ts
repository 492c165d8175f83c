/**
 * Telling a transient network failure (worth retrying, for a request that may be repeated) from
 * everything else fetch may reject with: a programming error (a bad URL, a body without `duplex`),
 * a permanent failure (an unknown host, a bad certificate), an abort.
 *
 * fetch rejects with a `TypeError` for every network failure; runtimes differ in how much they say.
 * Node's (undici) and Bun's set a `code` (on the error or its `cause`), which is read here; browsers
 * give only a message, matched against the ones they are known to use; Deno gives a `cause` with
 * no code, whose message is the network library's (`Connection reset by peer (os error 104)`);
 * workerd rejects with a plain `Error('Network connection lost.')`. Each was seen in the runtime
 * tests (test/runtimes) on a connection reset or a refused connection.
 *
 * @module
 */

/** Error codes of failures that may well not happen again: resets, refusals, timeouts, DNS EAI_AGAIN. */
const TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_REQ_RETRY',
  'ERR_HTTP2_STREAM_ERROR',
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_SESSION_ERROR',
]);

/** Messages runtimes give a network `TypeError` that carries no code. */
const NETWORK_MESSAGES = new Set([
  'fetch failed', // undici, when the cause has no code
  'failed to fetch', // Chromium
  'networkerror when attempting to fetch resource.', // Firefox
  'load failed', // Safari
  'network error',
  'network connection was lost.',
  'terminated', // undici, a body cut short
  'network connection lost.', // workerd, a plain Error
]);

/**
 * Deno's `cause` messages (no code) for a reset, a refusal, a connection closed before the answer
 * (`connection closed before message completed`) and a broken pipe.
 */
const DENO_TRANSIENT = /connection (reset|refused|closed before)|broken pipe/i;

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * True when `error` is a network failure that may succeed if tried again: a connection reset or
 * refused, a socket hang-up, a connect or header timeout, a temporary DNS failure (`EAI_AGAIN`),
 * in Node, Bun, Deno, workerd and browsers alike.
 * False for aborts, for permanent failures (`ENOTFOUND`, certificate errors), for a fetch that
 * failed here rather than on the network (a `TypeError('fetch failed')` whose cause carries no
 * code: the request's body stream threw) and for anything that is not a fetch network error.
 */
export function isTransientNetworkError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const name = (error as { name?: unknown }).name;
  if (name === 'AbortError' || name === 'TimeoutError') return false;
  // Walk the cause chain: the first error with a code decides.
  const caused = typeof (error as { cause?: unknown }).cause === 'object';
  let current: unknown = error;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth++) {
    const code = codeOf(current);
    if (code !== undefined) return TRANSIENT_CODES.has(code);
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      // An AggregateError (happy eyeballs): transient if any attempt was.
      if (errors.some((e) => TRANSIENT_CODES.has(codeOf(e) ?? ''))) return true;
    }
    // Deno: a cause with no code, whose message names a transient failure.
    if (
      depth > 0 &&
      name === 'TypeError' &&
      DENO_TRANSIENT.test(String((current as Error).message))
    )
      return true;
    current = (current as { cause?: unknown }).cause;
  }
  // A cause without a code anywhere is an error of this process (the caller's upload stream
  // failed, say), which fetch wraps the same way: it says nothing about the network or the host.
  const message = (error as { message?: unknown }).message;
  if (caused || (name !== 'TypeError' && message !== 'Network connection lost.')) return false;
  return typeof message === 'string' && NETWORK_MESSAGES.has(message.toLowerCase());
}

/**
 * True when `error` says the connection was refused (`ECONNREFUSED`; Deno's `Connection refused`
 * cause): nothing accepted it, so no byte of the request reached a server, and a write may be sent
 * again. A happy-eyeballs aggregate counts only when every address refused. Browsers and workerd
 * do not tell a refusal from other network failures: false there, the safe answer for a write.
 */
export function isConnectionRefused(error: unknown): boolean {
  const fetchFailure = (error as { name?: unknown } | null)?.name === 'TypeError';
  let current: unknown = error;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth++) {
    const code = codeOf(current);
    if (code !== undefined) return code === 'ECONNREFUSED';
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      return errors.every((e) => codeOf(e) === 'ECONNREFUSED');
    }
    if (depth > 0 && fetchFailure && /connection refused/i.test(String((current as Error).message)))
      return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

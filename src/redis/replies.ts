/**
 * What Redis's replies and errors mean to the runner: which errors say Redis is down, which say a
 * script or a function is missing, and which failed calls are known not to have been applied.
 *
 * @module
 */

/** Errors of calls known not to have been applied: refused before sending, or by the script. */
const unsent = new WeakSet<object>();

/**
 * Whether a failed {@link ScriptRunner.run} may have reached Redis, and so may have been applied
 * (a timeout, a lost connection), as opposed to refused before sending (or refused by the script,
 * see {@link notApplied}).
 */
export function maybeApplied(error: unknown): boolean {
  return !(typeof error === 'object' && error !== null && unsent.has(error));
}

/** Marks `error` as the failure of a call known not to have been applied. Returns it. */
export function notApplied<E extends object>(error: E): E {
  unsent.add(error);
  return error;
}

export function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** Redis answered that it has no such function: the library is to be loaded (on that node). */
export function isNoFunction(error: unknown): boolean {
  return error instanceof Error && /^ERR Function not found/i.test(error.message);
}

/**
 * Redis refuses functions altogether: an older server (`unknown command`), a managed service that
 * disabled them, an ACL without the right. Scripts are used from then on.
 */
export function refusesFunctions(error: unknown): boolean {
  return (
    error instanceof Error &&
    /unknown command|unknown subcommand|NOPERM|disabled|not allowed/i.test(error.message)
  );
}

/**
 * Error replies that say Redis cannot serve anything right now, rather than that this call was
 * wrong: loading its data, busy running a script, a replica cut from its master or one refusing
 * writes, a cluster down or resharding, out of memory.
 */
const UNAVAILABLE_REPLIES = new Set([
  'LOADING',
  'BUSY',
  'MASTERDOWN',
  'READONLY',
  'CLUSTERDOWN',
  'TRYAGAIN',
  'OOM',
]);

/**
 * The error code of an error Redis answered (`WRONGTYPE`, `ERR`, `BUSY`, ...), or `undefined` for
 * any other failure (a connection error, a closed client). node-redis (`ErrorReply`) and ioredis
 * (`ReplyError`) reject with Redis's own text, which starts with the code in capitals; their
 * connection errors do not (`Socket closed unexpectedly`, `The client is closed`, `connect
 * ECONNREFUSED ...`; ioredis's `Connection is closed.`, `Command timed out`, ...).
 */
export function replyCode(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  return /^([A-Z][A-Z0-9_]+)(?: |$)/.exec(error.message)?.[1];
}

/** Whether a failed call means Redis is down, not just that this call failed. */
export function meansDown(error: unknown): boolean {
  const code = replyCode(error);
  return code === undefined || UNAVAILABLE_REPLIES.has(code);
}

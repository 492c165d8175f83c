/**
 * Request targets (RFC 9112 §3.2) reduced to what routing needs: one path however the client wrote
 * it, so that no spelling of a limited path reaches another route.
 *
 * @module
 */

/** A request target as routing sees it. */
export type Target =
  /** Origin-form or absolute-form: the normalised path and the query (without its `?`). */
  | { form: 'path'; path: string; query: string }
  /** Asterisk-form (`OPTIONS *`): the server as a whole. */
  | { form: 'asterisk' }
  /** Authority-form outside CONNECT, a scheme other than http(s), or anything else. */
  | { form: 'invalid' };

const INVALID: Target = { form: 'invalid' };
const ASTERISK: Target = { form: 'asterisk' };
const ABSOLUTE = /^https?:\/\/[^/?#]+/i;

/**
 * Parses `target` (the request line's, as `req.url` holds it):
 * - origin-form `/items/1?x=1`: the path and query;
 * - absolute-form `http://h.example/items/1?x=1` (what proxies are sent): the same path and query,
 *   the authority ignored; an empty path is `/`. Only `http` and `https` with an authority;
 * - asterisk-form `*`;
 * - anything else (authority-form `h.example:443`, which only CONNECT uses, or a relative path) is
 *   invalid.
 *
 * The path is normalised as RFC 3986 §6.2.2 allows without changing what it names: percent-encoded
 * unreserved characters are decoded (`/%69tems` is `/items`) and dot segments removed
 * (`/x/../items` is `/items`). A fragment is dropped.
 */
export function parseTarget(target: string): Target {
  let rest: string;
  if (target.startsWith('/')) rest = target;
  else if (target === '*') return ASTERISK;
  else {
    const authority = ABSOLUTE.exec(target);
    if (authority === null) return INVALID;
    rest = target.slice(authority[0].length);
  }
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const queryAt = rest.indexOf('?');
  const rawPath = queryAt < 0 ? rest : rest.slice(0, queryAt);
  const query = queryAt < 0 ? '' : rest.slice(queryAt + 1);
  return { form: 'path', path: normalizePath(rawPath === '' ? '/' : rawPath), query };
}

const UNRESERVED = /%(2[dDeE]|3\d|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|7[eE])/g;

/** `path` with unreserved characters decoded and dot segments removed; untouched when it has none. */
export function normalizePath(path: string): string {
  let out = path;
  if (out.includes('%')) out = out.replace(UNRESERVED, decodeHex);
  if (out.includes('/.')) out = removeDotSegments(out);
  return out;
}

function decodeHex(percent: string): string {
  return String.fromCharCode(Number.parseInt(percent.slice(1), 16));
}

/** RFC 3986 §5.2.4 on an absolute path: `.` segments dropped, `..` removes the one before. */
function removeDotSegments(path: string): string {
  const segments = path.split('/').slice(1);
  const out: string[] = [];
  for (const [i, segment] of segments.entries()) {
    const last = i === segments.length - 1;
    if (segment === '.' || segment === '..') {
      if (segment === '..') out.pop();
      // A trailing dot segment leaves the path ending in a slash.
      if (last) out.push('');
    } else out.push(segment);
  }
  return `/${out.join('/')}`;
}

/**
 * A call's route, as the client remembers which budget it was answered from: its method and its
 * URL path with the identifiers folded, so `/repos/a/b/issues/7` and `/repos/a/b/issues/8` are one
 * route. What counts as an identifier is what the path alone shows: a segment of digits, a UUID, a
 * long hexadecimal string, or a long run of letters and digits that has both (a token). Names
 * (`issues`, `search`, `v1`) stay. The query string is not part of a route.
 *
 * Discord keeps its budgets per route *and* per "major parameter" (the channel, guild or webhook
 * in the path), so {@link majorOf} reads that one back out of the unfolded path.
 *
 * @module
 */

/** A folded segment. */
const ID = ':id';
/** Longest route kept, in characters: a longer path is cut (its tail is not part of the route). */
export const MAX_ROUTE_LENGTH = 256;

/** A segment of digits, a UUID, 16 or more hex digits, or 20 or more of `[\w-]` with a digit. */
const IDENTIFIER =
  /^(?:\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,}|(?=.*\d)[\w-]{20,})$/i;

/** Whether a path segment is an identifier (see the module comment). */
export function isIdentifier(segment: string): boolean {
  return IDENTIFIER.test(segment);
}

/** The path of an absolute URL (no query, no fragment), or `/`. */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  return start === -1 ? '/' : (url.slice(start).split(/[?#]/, 1)[0] as string);
}

/** The segments of `path` with identifiers folded, empty ones dropped. */
export function foldedSegments(path: string): string[] {
  const out: string[] = [];
  let length = 0;
  for (const segment of path.split('/')) {
    if (segment === '') continue;
    const folded = isIdentifier(segment) ? ID : segment;
    length += folded.length + 1;
    if (length > MAX_ROUTE_LENGTH) break;
    out.push(folded);
  }
  return out;
}

/** Discord's major parameters: the collections whose identifier splits a route's bucket. */
const MAJOR = new Set(['channels', 'guilds', 'webhooks']);

/**
 * The major parameter of a path, as Discord documents it (`channels/<id>`, `guilds/<id>`,
 * `webhooks/<id>`): the first such pair, or `''` when the path has none. A webhook's token (the
 * segment after its id) is a secret: it is never part of a scope's name, and a webhook's budget is
 * kept per id.
 */
export function majorOf(path: string): string {
  const segments = path.split('/');
  for (let i = 0; i < segments.length - 1; i++) {
    const name = segments[i] as string;
    const id = segments[i + 1] as string;
    // Snowflakes are 17 to 20 digits; 24 bounds what a path can put in a scope's name.
    if (MAJOR.has(name) && /^\d{1,24}$/.test(id)) return `${name}/${id}`;
  }
  return '';
}

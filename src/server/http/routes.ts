/**
 * Route matching: a method and a path pattern per route, first match wins.
 *
 * @module
 */

/**
 * A compiled path pattern: returns the parameters (a null-prototype object) when `path` matches,
 * else `undefined`.
 */
export type PathMatcher = (path: string) => Record<string, string> | undefined;

/**
 * Compiles `'/exact'`, `'/items/:id'` (one parameter per `:name` segment), `'/files/*'` (everything
 * under `/files/`, and `/files` itself) or `'*'` (every path). Parameters are URL-decoded; a
 * segment that does not decode fails the match.
 *
 * @example
 * compilePath('/items/:id')('/items/42') // { id: '42' }
 */
export function compilePath(pattern: string): PathMatcher {
  if (pattern === '*') return () => ({});
  const prefix = pattern.endsWith('/*');
  const segments = (prefix ? pattern.slice(0, -2) : pattern).split('/').slice(1);
  return (path) => {
    const parts = path.split('/').slice(1);
    if (prefix ? parts.length < segments.length : parts.length !== segments.length) {
      return undefined;
    }
    // Parameter names come from the configuration: a null prototype keeps `:__proto__` a key.
    const params: Record<string, string> = Object.create(null);
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i] as string;
      const part = parts[i] as string;
      if (segment.startsWith(':') && segment.length > 1) {
        if (part === '') return undefined;
        try {
          params[segment.slice(1)] = decodeURIComponent(part);
        } catch {
          return undefined;
        }
      } else if (segment !== part) return undefined;
    }
    return params;
  };
}

/** Whether a route declared for `routeMethod` (upper case, or undefined for any) answers `method`. */
export function methodMatches(routeMethod: string | undefined, method: string): boolean {
  return (
    routeMethod === undefined ||
    routeMethod === method ||
    (routeMethod === 'GET' && method === 'HEAD')
  );
}

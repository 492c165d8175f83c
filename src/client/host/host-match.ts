/**
 * Matching a request's host against the keys of `options.hosts`: an exact host (`api.example.com`),
 * an exact host and port (`127.0.0.1:8080`), or a wildcard for the subdomains of a domain
 * (`*.example.com`: `a.example.com`, `a.b.example.com`, not `example.com` itself).
 *
 * @module
 */

const EXACT = /^(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;
const WILDCARD = /^\*\.[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$/;

/** Why `pattern` is not a valid key of `options.hosts`, or `undefined` when it is. */
export function hostPatternProblem(pattern: string): string | undefined {
  const key = pattern.toLowerCase();
  if (EXACT.test(key) || WILDCARD.test(key)) return undefined;
  return 'must be a host ("api.example.com"), a host and port ("127.0.0.1:8080") or "*.example.com"';
}

/** Finds, for a host, every entry whose key matches it. Built once; matching is a few lookups. */
export class HostMatcher<T> {
  readonly #exact = new Map<string, T>();
  readonly #wildcards = new Map<string, T>();

  constructor(entries: Readonly<Record<string, T>>) {
    for (const [pattern, value] of Object.entries(entries)) {
      const key = pattern.toLowerCase();
      if (key.startsWith('*.')) this.#wildcards.set(key.slice(1), value);
      else this.#exact.set(key, value);
    }
  }

  /** True when there are no entries at all (the common case: skip matching). */
  get empty(): boolean {
    return this.#exact.size === 0 && this.#wildcards.size === 0;
  }

  /**
   * The matching entries, least specific first, so that merging them in order lets the most
   * specific win: wildcards from the shortest domain to the longest, then the exact hostname, then
   * the exact host with its port.
   *
   * @param hostname the URL's `hostname` (no port).
   * @param host the URL's `host` (with the port when there is one).
   */
  match(hostname: string, host: string): T[] {
    const found: T[] = [];
    if (this.empty) return found;
    const name = hostname.toLowerCase();
    if (this.#wildcards.size > 0) {
      // ".b.example.com", then ".example.com", then ".com": collected longest first, reversed.
      const suffixes: T[] = [];
      for (let dot = name.indexOf('.'); dot !== -1; dot = name.indexOf('.', dot + 1)) {
        const value = this.#wildcards.get(name.slice(dot));
        if (value !== undefined) suffixes.push(value);
      }
      found.push(...suffixes.reverse());
    }
    const byName = this.#exact.get(name);
    if (byName !== undefined) found.push(byName);
    const withPort = host.toLowerCase();
    if (withPort !== name) {
      const byHost = this.#exact.get(withPort);
      if (byHost !== undefined) found.push(byHost);
    }
    return found;
  }
}

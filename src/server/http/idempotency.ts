/**
 * The `Idempotency-Key` store: a request with a key runs its side effect once; a repeat replays
 * the stored response; the same key with a different request is refused.
 *
 * @module
 */
import { createHash } from 'node:crypto';

/** What {@link IdempotencyStore.begin} found. */
export type Claim<R> =
  /** The key is new: run the side effect, then {@link IdempotencyStore.complete} or `abandon`. */
  | { kind: 'new' }
  /** The key's request ran before: replay its response. */
  | { kind: 'replay'; response: R }
  /** The key's request is still running (409 Conflict). */
  | { kind: 'in-progress' }
  /** The key was used for a different request (422 Unprocessable Content). */
  | { kind: 'mismatch' };

type Entry<R> =
  | { state: 'running'; fingerprint: string; expiresAt: number }
  | { state: 'done'; fingerprint: string; expiresAt: number; response: R };

/**
 * The fingerprint of a request: method, path with query, and a hash of the body. Two requests with
 * one key and different fingerprints are a client's bug.
 */
export function fingerprint(method: string, url: string, body: Buffer): string {
  return `${method} ${url} ${createHash('sha256').update(body).digest('base64url')}`;
}

/**
 * Keys to entries, in memory, bounded by count (oldest first) and by age. Times are the server's
 * clock, passed in. `R` is what a replay needs of the stored response.
 */
export class IdempotencyStore<R> {
  readonly #entries = new Map<string, Entry<R>>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;

  constructor(ttlMs: number, maxEntries: number) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
  }

  /** Number of keys held. */
  get size(): number {
    return this.#entries.size;
  }

  /** Looks `key` up for a request with `print`, claiming it when it is new. */
  begin(key: string, print: string, now: number): Claim<R> {
    const entry = this.#entries.get(key);
    if (entry !== undefined && entry.expiresAt > now) {
      if (entry.fingerprint !== print) return { kind: 'mismatch' };
      return entry.state === 'done'
        ? { kind: 'replay', response: entry.response }
        : { kind: 'in-progress' };
    }
    this.#entries.delete(key);
    this.#entries.set(key, { state: 'running', fingerprint: print, expiresAt: now + this.#ttlMs });
    this.#evict(now);
    return { kind: 'new' };
  }

  /** Stores the response of a claimed key, for replay until the key expires. */
  complete(key: string, response: R, now: number): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.set(key, {
      state: 'done',
      fingerprint: entry.fingerprint,
      expiresAt: now + this.#ttlMs,
      response,
    });
  }

  /** Releases a claimed key whose side effect did not run, so that a retry runs it. */
  abandon(key: string): void {
    if (this.#entries.get(key)?.state === 'running') this.#entries.delete(key);
  }

  #evict(now: number): void {
    for (const [key, entry] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && entry.expiresAt > now) return;
      this.#entries.delete(key);
    }
  }
}

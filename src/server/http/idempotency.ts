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
  | { state: 'running'; fingerprint: string; expiresAt: number; bytes: number }
  | { state: 'done'; fingerprint: string; expiresAt: number; bytes: number; response: R };

/**
 * The bytes an entry is counted for besides its key and fingerprint: the `Map` slot, the entry
 * and a stored response of a few numbers: about 130 as measured on Node 20, rounded up generously.
 */
export const ENTRY_OVERHEAD_BYTES = 256;

/**
 * The fingerprint of a request: a SHA-256 of its method, its target in origin-form and its body, 43
 * characters whatever their size. Two requests with one key and different fingerprints are a
 * client's bug.
 */
export function fingerprint(method: string, url: string, body: Buffer): string {
  return createHash('sha256').update(`${method} ${url}\n`).update(body).digest('base64url');
}

/** Limits of an {@link IdempotencyStore}. */
export interface IdempotencyLimits {
  /** Milliseconds an entry is kept. */
  ttlMs: number;
  /** The most entries kept. */
  maxEntries: number;
  /**
   * The most bytes kept, counting each entry as its key's and fingerprint's length plus
   * {@link ENTRY_OVERHEAD_BYTES}.
   */
  maxBytes: number;
}

/**
 * Keys to entries, in memory, bounded by age, by count and by bytes; past a bound the oldest go
 * first. Times are the server's clock, passed in. `R`, what a replay needs of the stored response,
 * must be a few numbers (it is counted in {@link ENTRY_OVERHEAD_BYTES}), not the response's body:
 * the mock server rebuilds the body from the replayed request, which the fingerprint proves is the
 * same.
 */
export class IdempotencyStore<R> {
  readonly #entries = new Map<string, Entry<R>>();
  readonly #limits: IdempotencyLimits;
  #bytes = 0;

  constructor(limits: IdempotencyLimits) {
    this.#limits = limits;
  }

  /** Number of keys held. */
  get size(): number {
    return this.#entries.size;
  }

  /** Bytes held, as counted against `maxBytes`. */
  get bytes(): number {
    return this.#bytes;
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
    this.#delete(key);
    const bytes = key.length + print.length + ENTRY_OVERHEAD_BYTES;
    this.#entries.set(key, {
      state: 'running',
      fingerprint: print,
      expiresAt: now + this.#limits.ttlMs,
      bytes,
    });
    this.#bytes += bytes;
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
      expiresAt: now + this.#limits.ttlMs,
      bytes: entry.bytes,
      response,
    });
  }

  /** Releases a claimed key whose side effect did not run, so that a retry runs it. */
  abandon(key: string): void {
    if (this.#entries.get(key)?.state === 'running') this.#delete(key);
  }

  #delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  /** Drops entries from the oldest until every bound holds and the oldest has not expired. */
  #evict(now: number): void {
    const { maxEntries, maxBytes } = this.#limits;
    for (const [key, entry] of this.#entries) {
      const within = this.#entries.size <= maxEntries && this.#bytes <= maxBytes;
      if (within && entry.expiresAt > now) return;
      this.#delete(key);
    }
  }
}

/**
 * Small in-process servers that answer as some public APIs do when a client goes too fast, for
 * the cases the in-repo mock server does not speak (issue 13): an undeclared secondary limit on
 * writes beside a declared primary quota (answered 429 + `Retry-After: 1`, or GitHub's `403` +
 * `retry-after`), and Reddit's decimal counts. Each limit is a fixed window that starts at the
 * first request it counts; refused requests do not count. Statuses are counted as sent.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listening, type PeerServer } from './counting.js';

/** A fixed window of `limit` requests per `windowMs`, starting at its first admitted request. */
class Window {
  private start = Number.NEGATIVE_INFINITY;
  private used = 0;
  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  /** Counts one request at `now` (epoch ms) if there is room; says whether it was admitted. */
  take(now: number): boolean {
    if (now >= this.start + this.windowMs) {
      this.start = now;
      this.used = 0;
    }
    if (this.used >= this.limit) return false;
    this.used++;
    return true;
  }

  /** Requests counted in the current window. */
  usedAt(now: number): number {
    return now >= this.start + this.windowMs ? 0 : this.used;
  }

  /** Milliseconds from `now` until the current window ends (0 when none is open). */
  resetMsAt(now: number): number {
    return Math.max(0, this.start + this.windowMs - now);
  }
}

async function serve(
  name: string,
  handle: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<PeerServer> {
  const server = createServer((request, response) => {
    request.resume();
    request.once('end', () => handle(request, response));
  });
  server.listen(0, '127.0.0.1');
  return listening(name, server);
}

/** Options of {@link startSecondaryLimit}. */
export interface SecondaryLimitOptions {
  /**
   * How the secondary limit refuses: `429` with `Retry-After: 1` and the IETF `RateLimit` /
   * `RateLimit-Policy` fields of the primary quota (which still has room), or `github`: `403`
   * with `retry-after: 1`, GitHub's `x-ratelimit-*` headers of the primary quota and its message.
   */
  style: '429' | 'github';
  /** Writes (non-GET requests) per window. @default 2 */
  writes?: number;
  /** Secondary window, in milliseconds. @default 1000 */
  windowMs?: number;
}

/**
 * A declared primary quota (5,000 requests an hour, sent on every response) and an undeclared
 * secondary limit on writes: `writes` per `windowMs` across all clients. GETs only spend the
 * primary quota.
 */
export function startSecondaryLimit(options: SecondaryLimitOptions): Promise<PeerServer> {
  const primary = new Window(5000, 3_600_000);
  const secondary = new Window(options.writes ?? 2, options.windowMs ?? 1000);
  const name =
    options.style === 'github'
      ? 'GitHub-style secondary limit (403 + retry-after)'
      : 'declared policy + secondary 429 + Retry-After';
  return serve(name, (request, response) => {
    const now = Date.now();
    const write = request.method !== 'GET' && request.method !== 'HEAD';
    const admitted = !write || secondary.take(now);
    if (admitted) primary.take(now);
    const remaining = primary.limit - primary.usedAt(now);
    const resetSeconds = Math.ceil(primary.resetMsAt(now) / 1000);
    if (options.style === 'github') {
      response.setHeader('x-ratelimit-limit', String(primary.limit));
      response.setHeader('x-ratelimit-remaining', String(remaining));
      response.setHeader('x-ratelimit-used', String(primary.usedAt(now)));
      response.setHeader(
        'x-ratelimit-reset',
        String(Math.ceil((now + primary.resetMsAt(now)) / 1000)),
      );
      response.setHeader('x-ratelimit-resource', 'core');
    } else {
      response.setHeader('ratelimit-policy', `"hour";q=${primary.limit};w=3600`);
      response.setHeader('ratelimit', `"hour";r=${remaining};t=${resetSeconds}`);
    }
    response.setHeader('content-type', 'application/json');
    if (admitted) {
      response.writeHead(write ? 201 : 200).end('{"ok":true}');
    } else if (options.style === 'github') {
      response
        .writeHead(403, { 'retry-after': '1' })
        .end(
          '{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}',
        );
    } else {
      response.writeHead(429, { 'retry-after': '1' }).end('{"error":"too many writes"}');
    }
  });
}

/** Options of {@link startRedditStyle}. */
export interface RedditStyleOptions {
  /** Requests per window. @default 10 */
  limit?: number;
  /** Window, in milliseconds. @default 2000 */
  windowMs?: number;
}

/**
 * Reddit's dialect: `x-ratelimit-remaining` as a decimal (`597.0`, `0.0`), `x-ratelimit-used`
 * as an integer, `x-ratelimit-reset` in whole seconds to go (rounded up), no limit header, and a
 * plain 429 without Retry-After when the window is spent.
 */
export function startRedditStyle(options: RedditStyleOptions = {}): Promise<PeerServer> {
  const window = new Window(options.limit ?? 10, options.windowMs ?? 2000);
  return serve('Reddit-style decimal counts', (_request, response) => {
    const now = Date.now();
    const admitted = window.take(now);
    const used = window.usedAt(now);
    response.setHeader('x-ratelimit-remaining', `${window.limit - used}.0`);
    response.setHeader('x-ratelimit-used', String(used));
    response.setHeader('x-ratelimit-reset', String(Math.ceil(window.resetMsAt(now) / 1000)));
    response.setHeader('content-type', 'application/json');
    if (admitted) response.writeHead(200).end('{"ok":true}');
    else response.writeHead(429).end('{"message":"Too Many Requests","error":429}');
  });
}

/** Options of {@link startLateWindow}. */
export interface LateWindowOptions {
  /** Requests per window. @default 10 */
  limit?: number;
  /** Window, in milliseconds. @default 1000 */
  windowMs?: number;
  /** How long the window outlives the reset it announces, in milliseconds. @default 400 */
  lateMs?: number;
}

/**
 * koa-ratelimit's dialect (`X-RateLimit-Limit / -Remaining`, `X-RateLimit-Reset` in fractional
 * epoch seconds, `Retry-After` truncated to whole seconds) from a window that ends `lateMs` after
 * the reset it announces, as koa's does on a loaded machine (its store's expiry runs late): for
 * its last `lateMs` it answers `Retry-After: 0` and a reset already past, again and again.
 */
export function startLateWindow(options: LateWindowOptions = {}): Promise<PeerServer> {
  const lateMs = options.lateMs ?? 400;
  const window = new Window(options.limit ?? 10, options.windowMs ?? 1000);
  return serve('a window that outlives its announced reset', (_request, response) => {
    const now = Date.now();
    const admitted = window.take(now);
    const announcedMs = window.resetMsAt(now) - lateMs;
    response.setHeader('x-ratelimit-limit', String(window.limit));
    response.setHeader('x-ratelimit-remaining', String(window.limit - window.usedAt(now)));
    response.setHeader('x-ratelimit-reset', String((now + announcedMs) / 1000));
    if (admitted) {
      response.writeHead(200).end('ok');
    } else {
      const retryAfter = Math.max(0, Math.trunc(announcedMs / 1000));
      response.writeHead(429, { 'retry-after': String(retryAfter) }).end('Too Many Requests');
    }
  });
}

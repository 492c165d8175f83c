/**
 * Helpers for the "many budgets per host" tests (issue 26 §6): one request over real HTTP, and a
 * client paced at what a server declares, on the server's fake clock.
 */
import type { FakeClock } from './helpers.js';

/** What one request got: its status, header fields and parsed JSON body. */
export interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** Sends one request and reads its whole answer. */
export async function call(url: string, init?: RequestInit): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
}

/** A JSON POST. */
export function postJson(body: unknown): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
}

/**
 * A client paced at `limit` requests per `windowMs`, evenly (one every `windowMs / limit`, the
 * first at the clock's time), for `windows` windows: the statuses it got, in order.
 */
export async function pacedStatuses(
  clock: FakeClock,
  limit: number,
  windowMs: number,
  windows: number,
  send: () => Promise<Answer>,
): Promise<number[]> {
  const statuses: number[] = [];
  const start = clock.now();
  for (let i = 0; i < limit * windows; i++) {
    // Whole milliseconds, never before the even spacing: the server's clock has that grain.
    const at = start + Math.ceil((i * windowMs) / limit);
    clock.advance(at - clock.now());
    statuses.push((await send()).status);
  }
  return statuses;
}

/** `n` times `status`, to compare a run against. */
export function all(status: number, n: number): number[] {
  return Array.from({ length: n }, () => status);
}

/**
 * Issue 11, item 8: a URL's user name and password never appear in what the client shows: error
 * messages, error fields, events. (Node's fetch refuses such URLs; a custom fetch may not.)
 */
import { describe, expect, it } from 'vitest';
import { withoutCredentials } from '../../src/client/call/request.js';
import { wrapFetch } from '../../src/index.js';

const SECRET = 's3cr3t';

describe('URL credentials', () => {
  it('stay out of errors and events', async () => {
    // A fetch that takes such URLs, and answers a 429 asking for more than the caller waits.
    const fetch = wrapFetch(
      async () => new Response('slow down', { status: 429, headers: { 'retry-after': '3600' } }),
      { coldStart: false },
    );
    const seen: unknown[] = [];
    for (const name of ['rate-limited', 'give-up', 'retry', 'held', 'queued'] as const) {
      fetch.on(name, (event) => seen.push(event));
    }
    const url = `http://alice:${SECRET}@h.example/x`;
    const first = await fetch(url);
    expect(first.status).toBe(429);
    // The host is now held for an hour: the next call is refused without being sent.
    const refused = await fetch(url).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Error);
    const shown = JSON.stringify([seen, String(refused), { ...(refused as object) }]);
    expect(seen.length).toBeGreaterThan(0);
    expect(shown).toContain('http://h.example/x');
    expect(shown).not.toContain(SECRET);
    expect(shown).not.toContain('alice');
    await fetch.close();
  });

  it('withoutCredentials strips user and password only', () => {
    expect(withoutCredentials(`https://alice:${SECRET}@api.example.com/v1?q=1`)).toBe(
      'https://api.example.com/v1?q=1',
    );
    expect(withoutCredentials('https://api.example.com/users/@me')).toBe(
      'https://api.example.com/users/@me',
    );
    expect(withoutCredentials('https://api.example.com/?mail=a@b.c')).toBe(
      'https://api.example.com/?mail=a@b.c',
    );
  });
});

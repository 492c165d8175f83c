/**
 * Which host a request through the interceptor belongs to, when requests alternate between
 * origins and paths: the interceptor remembers the last origin and path it parsed
 * (`DispatchTargets` in `src/client/entries/entry.ts`), and a request to another one must never take
 * the last one's host or URL.
 */
import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { limited } from '../../src/undici/index.js';
import { answer, RecordingHandler, scriptedDispatch } from './helpers.js';

describe('the target of a request through the interceptor', () => {
  it('follows each request, whatever the one before it was', async () => {
    const interceptor = limited();
    const { dispatch, sent } = scriptedDispatch();
    const limitedDispatch = interceptor(dispatch);
    const urls: string[] = [];
    interceptor.on('sent', (e) => urls.push(e.url));
    const a = 'http://a.test';
    const b = 'http://b.test:8080';
    const requests: [string | URL, string][] = [
      [a, '/x'],
      [a, '/x'],
      [b, '/x'],
      [a, '/x?q=1'],
      [`${a}/`, '/y'],
      [new URL(`${b}/`), '/x'],
      [a, '/x'],
    ];
    for (const [origin, path] of requests) {
      const handler = new RecordingHandler();
      const opts = { origin, path, method: 'GET' } as Dispatcher.DispatchOptions;
      limitedDispatch(opts, handler);
      await new Promise((resolve) => setImmediate(resolve));
      const last = sent.at(-1);
      expect(last?.opts.path).toBe(path);
      answer(last as (typeof sent)[number], 200, {}, ['ok']);
      await handler.done;
      expect(handler.status).toBe(200);
    }
    expect(urls).toEqual([
      `${a}/x`,
      `${a}/x`,
      `${b}/x`,
      `${a}/x?q=1`,
      `${a}/y`,
      `${b}/x`,
      `${a}/x`,
    ]);
    const { hosts } = interceptor.stats();
    expect(hosts[a]?.requests).toBe(5);
    expect(hosts[b]?.requests).toBe(2);
    await interceptor.close();
  });
});

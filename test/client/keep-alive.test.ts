import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { KeepAlive } from '../../src/client/queue/keep-alive.js';

describe('KeepAlive', () => {
  it('counts waiting calls; each release is idempotent', () => {
    const k = new KeepAlive();
    const a = k.acquire();
    const b = k.acquire();
    expect(k.waiting).toBe(2);
    a();
    a();
    expect(k.waiting).toBe(1);
    b();
    expect(k.waiting).toBe(0);
  });

  it('keeps a Node process up while a call is held, and lets it exit after', () => {
    // Only a held request is pending: without the keep-alive the process would exit before it.
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const script = `
      import { wrapFetch } from './src/index.ts';
      let n = 0;
      const stub = async () => n++ === 0
        ? new Response(null, { status: 429, headers: { 'retry-after': '1' } })
        : new Response('done');
      const fetch = wrapFetch(stub);
      const r = await fetch('https://a.example/x');
      console.log(r.status, await r.text());`;
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        cwd: root,
        encoding: 'utf8',
      },
    );
    expect(out.trim()).toBe('200 done');
  });
});

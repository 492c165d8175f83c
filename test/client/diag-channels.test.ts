/**
 * Where the client finds `diagnostics_channel`: through `process.getBuiltinModule`, once per
 * process, and nowhere when the runtime lacks it or refuses it (then nothing is published and the
 * events work as before). Each case loads a fresh copy of the package (`vi.resetModules`), so the
 * lookup runs again under the runtime the case shapes. Over loopback against the mock server.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { closeAll, start } from './integration/server.js';

afterAll(closeAll);

type GetBuiltinModule = (id: string) => unknown;
const proc = process as unknown as { getBuiltinModule?: GetBuiltinModule };
const original = proc.getBuiltinModule;
afterEach(() => {
  proc.getBuiltinModule = original;
});

/** A fresh copy of the core entry, whose channels are not looked up yet. */
async function freshCore() {
  vi.resetModules();
  return import('../../src/index.js');
}

/** Calls `/ok` once through a fresh client; returns what its `done` listener and a subscriber got. */
async function oneCall(url: string) {
  const { LimitedClient } = await freshCore();
  const published: unknown[] = [];
  const onMessage = (message: unknown) => published.push(message);
  subscribe('limited-client:call:done', onMessage);
  try {
    const client = new LimitedClient(url);
    const heard: number[] = [];
    client.on('done', (e) => heard.push(e.status ?? 0));
    await (await client.get('/ok')).arrayBuffer();
    await client.close();
    return { heard, published };
  } finally {
    unsubscribe('limited-client:call:done', onMessage);
  }
}

describe('finding diagnostics_channel', () => {
  it('this Node has it: a subscriber hears the call', async () => {
    const server = await start({ routes: [{ path: '/ok' }] });
    const { heard, published } = await oneCall(server.url);
    expect(heard).toEqual([200]);
    expect(published).toMatchObject([{ status: 200, origin: server.url }]);
  });

  it('a runtime without process.getBuiltinModule: nothing published, listeners still hear', async () => {
    const server = await start({ routes: [{ path: '/ok' }] });
    proc.getBuiltinModule = undefined;
    const { heard, published } = await oneCall(server.url);
    expect(heard).toEqual([200]);
    expect(published).toEqual([]);
  });

  it('a runtime that refuses the module (it throws): nothing published, the call goes on', async () => {
    const server = await start({ routes: [{ path: '/ok' }] });
    proc.getBuiltinModule = () => {
      throw new Error('ERR_ACCESS_DENIED');
    };
    const { heard, published } = await oneCall(server.url);
    expect(heard).toEqual([200]);
    expect(published).toEqual([]);
  });

  it('a module without channel(): nothing published', async () => {
    const server = await start({ routes: [{ path: '/ok' }] });
    proc.getBuiltinModule = () => ({});
    const { heard, published } = await oneCall(server.url);
    expect(heard).toEqual([200]);
    expect(published).toEqual([]);
  });

  it('looks the module up once, however many clients and hosts', async () => {
    const servers = await Promise.all([1, 2, 3].map(() => start({ routes: [{ path: '/ok' }] })));
    const asked: string[] = [];
    proc.getBuiltinModule = (id: string) => {
      asked.push(id);
      return original?.(id);
    };
    const { LimitedClient, wrapFetch } = await freshCore();
    expect(asked).toEqual([]); // nothing at import time
    const fetch = wrapFetch();
    const clients = servers.map((s) => new LimitedClient(s.url));
    for (const [i, s] of servers.entries()) {
      await (await fetch(`${s.url}/ok`)).arrayBuffer();
      await (await clients[i]?.get('/ok'))?.arrayBuffer();
    }
    await Promise.all([fetch.close(), ...clients.map((c) => c.close())]);
    expect(asked).toEqual(['node:diagnostics_channel']);
  });
});

import { describe, expect, it } from 'vitest';
import { isReplayableBody, jsonInit, prepareRequest } from '../../src/client/call/request.js';
import { ResolvedOptions } from '../../src/client/options/resolve.js';

const policy = new ResolvedOptions({}).forHost('a.com', 'a.com');
const noKeys = new ResolvedOptions({ idempotency: false }).forHost('a.com', 'a.com');

describe('prepareRequest', () => {
  it('gives POST and PATCH a fresh UUID key, other methods none', () => {
    const a = prepareRequest('https://a.com/x', undefined, { method: 'post' }, policy, undefined);
    const b = prepareRequest('https://a.com/x', undefined, { method: 'PATCH' }, policy, undefined);
    const get = prepareRequest('https://a.com/x', undefined, undefined, policy, undefined);
    const keyA = new Headers(a.init?.headers).get('idempotency-key');
    const keyB = new Headers(b.init?.headers).get('idempotency-key');
    expect(keyA).toMatch(/^[0-9a-f-]{36}$/);
    expect(keyB).toMatch(/^[0-9a-f-]{36}$/);
    expect(keyA).not.toBe(keyB);
    expect(a.method).toBe('POST');
    expect(a.hasKey).toBe(true);
    expect(get.hasKey).toBe(false);
    expect(get.init).toBeUndefined();
  });

  it("keeps the caller's key, takes one from init, or sends none when told", () => {
    const own = prepareRequest(
      'https://a.com/x',
      undefined,
      { method: 'POST', headers: { 'Idempotency-Key': 'mine' } },
      policy,
      undefined,
    );
    expect(new Headers(own.init?.headers).get('idempotency-key')).toBe('mine');
    const given = prepareRequest(
      'https://a.com/x',
      undefined,
      { method: 'PUT', idempotencyKey: 'k1' },
      policy,
      undefined,
    );
    expect(new Headers(given.init?.headers).get('idempotency-key')).toBe('k1');
    const none = prepareRequest(
      'https://a.com/x',
      undefined,
      { method: 'POST', idempotencyKey: false },
      policy,
      undefined,
    );
    expect(none.hasKey).toBe(false);
    const off = prepareRequest('https://a.com/x', undefined, { method: 'POST' }, noKeys, undefined);
    expect(off.hasKey).toBe(false);
  });

  it('uses the configured header name', () => {
    const custom = new ResolvedOptions({ idempotency: { header: 'X-Request-Id' } }).forHost(
      'a.com',
      'a.com',
    );
    const r = prepareRequest('https://a.com/x', undefined, { method: 'POST' }, custom, undefined);
    expect(new Headers(r.init?.headers).has('x-request-id')).toBe(true);
  });

  it('merges client headers under the call headers', () => {
    const r = prepareRequest(
      'https://a.com/x',
      undefined,
      { headers: { accept: 'text/plain' } },
      policy,
      { accept: 'application/json', authorization: 'Bearer t' },
    );
    const h = new Headers(r.init?.headers);
    expect(h.get('accept')).toBe('text/plain');
    expect(h.get('authorization')).toBe('Bearer t');
  });

  it('marks streams as single-use, unless createBody is given', () => {
    const stream = new ReadableStream();
    expect(
      prepareRequest(
        'https://a.com/x',
        undefined,
        { method: 'PUT', body: stream },
        policy,
        undefined,
      ).replayable,
    ).toBe(false);
    expect(
      prepareRequest(
        'https://a.com/x',
        undefined,
        { method: 'PUT', body: stream, createBody: () => 'x' },
        policy,
        undefined,
      ).replayable,
    ).toBe(true);
    const withBody = new Request('https://a.com/x', { method: 'POST', body: 'x' });
    expect(
      prepareRequest('https://a.com/x', withBody, undefined, policy, undefined).replayable,
    ).toBe(false);
    const get = new Request('https://a.com/x');
    expect(prepareRequest('https://a.com/x', get, undefined, policy, undefined).replayable).toBe(
      true,
    );
  });
});

describe('bodies', () => {
  it('knows what can be sent twice', () => {
    for (const b of [
      'x',
      new Uint8Array(2),
      new ArrayBuffer(2),
      new Blob(['x']),
      new URLSearchParams('a=1'),
      new FormData(),
      null,
      undefined,
    ]) {
      expect(isReplayableBody(b)).toBe(true);
    }
    expect(isReplayableBody(new ReadableStream())).toBe(false);
  });

  it('serialises a JSON body once, with its content type', () => {
    const init = jsonInit({ a: 1 }, undefined);
    expect(init.body).toBe('{"a":1}');
    expect(new Headers(init.headers).get('content-type')).toBe('application/json');
    expect(jsonInit('raw', undefined).body).toBe('raw');
    expect(
      jsonInit([1], { headers: { 'content-type': 'application/vnd.x+json' } }).headers,
    ).toBeInstanceOf(Headers);
    expect(
      new Headers(
        jsonInit([1], { headers: { 'content-type': 'application/vnd.x+json' } }).headers,
      ).get('content-type'),
    ).toBe('application/vnd.x+json');
    expect(jsonInit(undefined, undefined).body).toBeUndefined();
  });
});

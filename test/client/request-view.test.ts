/**
 * What a `cost` or `partition` function is given (`RequestView`): the headers as a read-only
 * view, the body as text when it is text in memory and at most MAX_VIEWED_BODY_BYTES as sent,
 * never a stream, a Blob or FormData, never a part of a body; JSON parsed lazily, once.
 * Over HTTP, through the client: test/hostile/client-cost-input.test.ts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  fitsUtf8,
  MAX_VIEWED_BODY_BYTES,
  RequestView,
} from '../../src/client/call/request-view.js';

const URL_ = 'https://api.example.com/v1/chat/completions';
const MAX = MAX_VIEWED_BODY_BYTES;

function view(init: RequestInit | undefined, input?: Request, defaults?: HeadersInit) {
  return new RequestView(URL_, input, init, defaults);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the request view: method, URL and headers', () => {
  it('has the method in upper case (GET by default), the URL, the call over the defaults', () => {
    const v = view({ method: 'post', headers: { 'X-Model': 'gpt-4o', 'x-team': 'a' } }, undefined, {
      'x-team': 'default',
      'x-client': 'c',
    });
    expect(v.method).toBe('POST');
    expect(v.url).toBe(URL_);
    expect([...v.headers]).toEqual([
      ['x-client', 'c'],
      ['x-model', 'gpt-4o'],
      ['x-team', 'a'],
    ]);
    expect(v.headers.get('X-MODEL')).toBe('gpt-4o');
    expect(v.headers.has('x-missing')).toBe(false);
    expect(view(undefined).method).toBe('GET');
  });

  it("takes a Request's method and headers when the init has none", () => {
    const input = new Request(URL_, { method: 'PUT', headers: { 'x-a': '1' } });
    const v = view(undefined, input);
    expect(v.method).toBe('PUT');
    expect(v.headers.get('x-a')).toBe('1');
  });

  it("is read-only: no way to write through it to the caller's headers", () => {
    const own = new Headers({ 'x-a': '1' });
    const headers = view({ headers: own }).headers;
    for (const method of ['set', 'append', 'delete']) expect(method in headers).toBe(false);
    const seen: unknown[][] = [];
    headers.forEach((...args: unknown[]) => {
      seen.push(args);
    });
    // Two arguments, not Headers.forEach's third (the Headers itself, which can be written to).
    expect(seen).toEqual([['1', 'x-a']]);
    expect([...headers.keys()]).toEqual(['x-a']);
    expect([...headers.values()]).toEqual(['1']);
    expect([...headers.entries()]).toEqual([['x-a', '1']]);
    expect(own.get('x-a')).toBe('1');
  });
});

describe('the request view: the body', () => {
  it('a string, as it is', () => {
    expect(view({ method: 'POST', body: 'plain text' }).body).toBe('plain text');
  });

  it('URLSearchParams, as the text fetch sends', () => {
    const body = new URLSearchParams({ model: 'm', q: 'a b&c' });
    expect(view({ method: 'POST', body }).body).toBe('model=m&q=a+b%26c');
  });

  it('bytes labelled JSON, text or a form, decoded as UTF-8 (what the undici interceptor hands over)', () => {
    const bytes = new TextEncoder().encode('{"max_tokens":5,"p":"é"}');
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'application/vnd.api+json',
      'text/plain;charset=UTF-8',
      'application/x-www-form-urlencoded',
    ]) {
      const v = view({ method: 'POST', body: bytes, headers: { 'content-type': type } });
      expect(v.body, type).toBe('{"max_tokens":5,"p":"é"}');
    }
    const json = { 'content-type': 'application/json' };
    const arrayBuffer = new TextEncoder().encode('{"a":1}').buffer;
    expect(view({ method: 'POST', body: arrayBuffer, headers: json }).json()).toEqual({ a: 1 });
    // A Node Buffer: a view into a larger pool, read from its own offset.
    const buffer = Buffer.from('{"b":2}');
    expect(buffer.byteOffset).toBeGreaterThan(0);
    expect(view({ method: 'POST', body: buffer, headers: json }).json()).toEqual({ b: 2 });
  });

  it('no body for bytes of another type, without a type, or not UTF-8', () => {
    const bytes = new TextEncoder().encode('{"max_tokens":5}');
    expect(view({ method: 'POST', body: bytes }).body).toBeUndefined();
    const octets = { 'content-type': 'application/octet-stream' };
    expect(view({ method: 'POST', body: bytes, headers: octets }).body).toBeUndefined();
    const notUtf8 = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]);
    const json = { 'content-type': 'application/json' };
    const v = view({ method: 'POST', body: notUtf8, headers: json });
    expect(v.body).toBeUndefined();
    expect(v.json()).toBeUndefined();
  });

  it('never reads a stream, a Blob, FormData or the body of a Request', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('{"max_tokens":5}'));
        c.close();
      },
    });
    const form = new FormData();
    form.set('max_tokens', '5');
    const blob = new Blob(['{"max_tokens":5}'], { type: 'application/json' });
    const input = new Request(URL_, { method: 'POST', body: '{"max_tokens":5}' });
    const json = { 'content-type': 'application/json' };
    for (const v of [
      view({ method: 'POST', body: stream, headers: json }),
      view({ method: 'POST', body: form }),
      view({ method: 'POST', body: blob, headers: json }),
      view(undefined, input),
    ]) {
      expect(v.body).toBeUndefined();
      expect(v.json()).toBeUndefined();
    }
    // Each is still whole for fetch to send.
    expect(stream.locked).toBe(false);
    expect(input.bodyUsed).toBe(false);
    expect(await new Response(stream).text()).toBe('{"max_tokens":5}');
    expect(await input.text()).toBe('{"max_tokens":5}');
  });

  it(`at the bound: a body of ${MAX} bytes as sent is handed over, one byte more is not`, () => {
    const at = 'a'.repeat(MAX);
    expect(view({ method: 'POST', body: at }).body).toBe(at);
    expect(view({ method: 'POST', body: `${at}a` }).body).toBeUndefined();
    // Counted in UTF-8 bytes, not characters: é is two.
    const accents = 'é'.repeat(MAX / 2);
    expect(view({ method: 'POST', body: accents }).body).toBe(accents);
    expect(view({ method: 'POST', body: `${accents}a` }).body).toBeUndefined();
    const json = { 'content-type': 'application/json' };
    expect(
      view({ method: 'POST', body: new Uint8Array(MAX).fill(0x20), headers: json }).body,
    ).toHaveLength(MAX);
    expect(
      view({ method: 'POST', body: new Uint8Array(MAX + 1).fill(0x20), headers: json }).body,
    ).toBeUndefined();
    const params = new URLSearchParams({ q: 'x'.repeat(MAX - 2) });
    expect(view({ method: 'POST', body: params }).body).toHaveLength(MAX);
    params.set('q', 'x'.repeat(MAX - 1));
    expect(view({ method: 'POST', body: params }).body).toBeUndefined();
  });

  it('above the bound, JSON is never cut short: the function gets no body at all', () => {
    const big = JSON.stringify({ max_tokens: 5, prompt: 'p'.repeat(MAX) });
    const v = view({ method: 'POST', body: big, headers: { 'content-type': 'application/json' } });
    expect(v.body).toBeUndefined();
    expect(v.json()).toBeUndefined();
  });

  it('counts UTF-8 bytes as fetch sends them: a pair of surrogates is 4, a lone one 3', () => {
    const max = 12;
    expect(fitsUtf8('😀'.repeat(3), max)).toBe(true); // 6 code units, 12 bytes
    expect(fitsUtf8(`${'😀'.repeat(3)}a`, max)).toBe(false);
    expect(fitsUtf8('\ud800'.repeat(4), max)).toBe(true); // 4 x U+FFFD, 12 bytes
    expect(fitsUtf8(`${'\ud800'.repeat(4)}a`, max)).toBe(false);
    expect(new TextEncoder().encode('\ud800'.repeat(4))).toHaveLength(12);
  });
});

describe('the request view: JSON, parsed lazily and once', () => {
  const body = JSON.stringify({ model: 'm', max_tokens: 42 });

  it('parses nothing and decodes nothing for a function that reads only the URL', () => {
    const parse = vi.spyOn(JSON, 'parse');
    const decode = vi.spyOn(TextDecoder.prototype, 'decode');
    const json = { 'content-type': 'application/json' };
    const v = view({ method: 'POST', body: new TextEncoder().encode(body), headers: json });
    expect(v.url).toBe(URL_);
    expect(parse).not.toHaveBeenCalled();
    expect(decode).not.toHaveBeenCalled();
  });

  it('parses on the first json() only, and gives the same value every time', () => {
    const parse = vi.spyOn(JSON, 'parse');
    const v = view({ method: 'POST', body });
    const first = v.json();
    expect(first).toEqual({ model: 'm', max_tokens: 42 });
    expect(v.json()).toBe(first);
    expect(v.json()).toBe(first);
    expect(parse).toHaveBeenCalledTimes(1);
  });

  it('invalid JSON is no JSON, tried once; the text is still the body', () => {
    const parse = vi.spyOn(JSON, 'parse');
    const v = view({ method: 'POST', body: '{"max_tokens": 4' });
    expect(v.json()).toBeUndefined();
    expect(v.json()).toBeUndefined();
    expect(parse).toHaveBeenCalledTimes(1);
    expect(v.body).toBe('{"max_tokens": 4');
  });

  it('json can be destructured, as the docs write it', () => {
    const { json, body: text } = view({ method: 'POST', body });
    expect((json() as { max_tokens: number }).max_tokens).toBe(42);
    expect(text).toBe(body);
  });

  it('a body without JSON: json() is undefined', () => {
    expect(view(undefined).json()).toBeUndefined();
    expect(view({ method: 'POST', body: 'a=1&b=2' }).json()).toBeUndefined();
  });
});

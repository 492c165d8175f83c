/**
 * One attempt through a dispatch, without HTTP: the response the pipeline sees, the body it holds
 * (and the bound past which it pauses the dispatcher), the stream made on demand, the delivery to
 * the caller with its pauses, and aborts.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { RAW_FIELDS } from '../../src/headers/field-map.js';
import { parseRateLimitHeaders } from '../../src/headers/parse.js';
import { AttemptResponse } from '../../src/undici/attempt-response.js';
import { CallSignal } from '../../src/undici/call-signal.js';
import { AttemptExchange, type BodySink, HELD_BYTES } from '../../src/undici/exchange.js';
import { answer, scriptedDispatch } from './helpers.js';

const opts = { origin: 'http://h.test', path: '/x', method: 'GET' as const };

function started() {
  const { dispatch, sent } = scriptedDispatch();
  const exchange = new AttemptExchange();
  const response = exchange.send(dispatch, opts, undefined);
  const d = sent[0];
  if (!d) throw new Error('not dispatched');
  d.handler.onRequestStart?.(d.controller, {});
  return { exchange, response, d };
}

class Sink implements BodySink {
  paused = false;
  chunks: string[] = [];
  ended = 0;
  error: unknown;
  data(chunk: Buffer): void {
    this.chunks.push(chunk.toString());
  }
  end(): void {
    this.ended++;
  }
  fail(error: unknown): void {
    this.error = error;
  }
}

describe('AttemptExchange', () => {
  it('resolves at the final status with a Response: status, reason, every header; 1xx ignored', async () => {
    const { response, d } = started();
    d.handler.onResponseStart?.(d.controller, 103, { link: '</a>' }, 'Early Hints');
    d.handler.onResponseStart?.(
      d.controller,
      429,
      { 'retry-after': '2', 'set-cookie': ['a=1', 'b=2'] },
      'Too Many Requests',
    );
    const r = await response;
    expect(r).toBeInstanceOf(Response);
    expect(r.status).toBe(429);
    expect(r.ok).toBe(false);
    expect(r.statusText).toBe('Too Many Requests');
    expect(r.headers.get('retry-after')).toBe('2');
    expect(r.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(r.headers.has('link')).toBe(false);
  });

  it('keeps a status past 599 and drops what Headers refuses instead of failing', async () => {
    const { response, d } = started();
    d.handler.onResponseStart?.(d.controller, 999, { ok: 'yes', 'bad name': 'x' }, 'Odd\u0001');
    const r = await response;
    expect(r.status).toBe(999);
    expect(r.ok).toBe(false);
    expect(r.statusText).toBe('');
    expect([...r.headers]).toEqual([['ok', 'yes']]);
  });

  it('answers every member of Response itself: none is left to Response.prototype', async () => {
    const { response, d } = started();
    d.handler.onResponseStart?.(d.controller, 200, { 'content-type': 'text/plain' }, 'OK');
    const r = await response;
    const names = Object.getOwnPropertyNames(Response.prototype).filter((n) => n !== 'constructor');
    expect(names.length).toBeGreaterThan(10);
    for (const name of names) {
      expect(Object.getOwnPropertyDescriptor(AttemptResponse.prototype, name), name).toBeDefined();
    }
    for (const name of ['type', 'url', 'redirected', 'status', 'ok', 'statusText', 'bodyUsed']) {
      expect(() => Reflect.get(r, name), name).not.toThrow();
    }
    expect(Object.prototype.toString.call(r)).toBe('[object Response]');
    expect(r.headers).toBeInstanceOf(Headers);
    expect(inspect(r)).toContain('text/plain');
    d.handler.onResponseData?.(d.controller, Buffer.from('hi'));
    d.handler.onResponseEnd?.(d.controller, {});
    expect(await r.clone().text()).toBe('hi');
  });

  it("reads the rate-limit fields from undici's object, and fills the Headers only when read", async () => {
    const raw = {
      'ratelimit-policy': '"q";q=10;w=60',
      ratelimit: '"q";r=3;t=20',
      'retry-after': '5',
      date: 'Tue, 01 Dec 2026 23:00:00 GMT',
      'set-cookie': ['a=1', 'b=2'],
    };
    const { response, d } = started();
    d.handler.onResponseStart?.(d.controller, 429, raw, 'Too Many Requests');
    const r = await response;
    const headers = r.headers as Headers & { [RAW_FIELDS]?: unknown };
    expect(headers[RAW_FIELDS]).toBe(raw);
    const now = Date.parse(raw.date);
    const filled = new Headers();
    for (const [name, value] of Object.entries(raw)) {
      for (const v of Array.isArray(value) ? value : [value]) filled.append(name, v);
    }
    const expected = parseRateLimitHeaders(filled, { now });
    expect(expected?.remaining).toBe(3);
    expect(parseRateLimitHeaders(headers, { now })).toEqual(expected);
    // A hook that reads or changes the headers gets them all, and the parser reads what it changed.
    expect(headers.get('retry-after')).toBe('5');
    expect(headers[RAW_FIELDS]).toBe(undefined);
    headers.set('retry-after', '9');
    expect(parseRateLimitHeaders(headers, { now })?.retryAfterMs).toBe(9000);
  });

  it('rejects with the dispatcher error before the headers', async () => {
    const { response, d } = started();
    const error = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    d.handler.onResponseError?.(d.controller, error);
    await expect(response).rejects.toBe(error);
  });

  it(`holds the body up to ${HELD_BYTES} bytes, then pauses the dispatcher`, async () => {
    const { response, d } = started();
    d.handler.onResponseStart?.(d.controller, 200, {}, 'OK');
    await response;
    d.handler.onResponseData?.(d.controller, Buffer.alloc(HELD_BYTES - 1));
    expect(d.controller.pauses).toBe(0);
    d.handler.onResponseData?.(d.controller, Buffer.alloc(1));
    expect(d.controller.pauses).toBe(1);
    d.handler.onResponseData?.(d.controller, Buffer.alloc(10));
    expect(d.controller.pauses).toBe(1);
  });

  it('streams the body on demand: what was held, then what arrives, in order; reading resumes', async () => {
    const { response, d } = started();
    d.handler.onResponseStart?.(d.controller, 200, {}, 'OK');
    const r = await response;
    d.handler.onResponseData?.(d.controller, Buffer.alloc(HELD_BYTES, 'a'));
    expect(d.controller.paused).toBe(true);
    const text = r.text();
    await new Promise((resolve) => setImmediate(resolve));
    expect(d.controller.resumes).toBe(1);
    d.handler.onResponseData?.(d.controller, Buffer.from('bc'));
    d.handler.onResponseEnd?.(d.controller, {});
    expect(await text).toBe(`${'a'.repeat(HELD_BYTES)}bc`);
    expect(r.bodyUsed).toBe(true);
  });

  it('a cancelled body aborts a body still arriving, and leaves a finished one alone', async () => {
    const first = started();
    first.d.handler.onResponseStart?.(first.d.controller, 503, {}, 'Unavailable');
    await (await first.response).body?.cancel();
    expect(first.d.controller.aborted).toBe(true);

    const second = started();
    answer(second.d, 429, {}, ['{}']);
    await (await second.response).body?.cancel();
    expect(second.d.controller.aborted).toBe(false);
  });

  it('delivers what it holds, then what arrives, following the sink pauses', async () => {
    const { exchange, response, d } = started();
    d.handler.onResponseStart?.(d.controller, 200, {}, 'OK');
    await response;
    d.handler.onResponseData?.(d.controller, Buffer.from('1'));
    d.handler.onResponseData?.(d.controller, Buffer.from('2'));
    const sink = new Sink();
    expect(exchange.deliver(sink)).toBe(true);
    exchange.flush();
    expect(sink.chunks).toEqual(['1', '2']);
    d.handler.onResponseData?.(d.controller, Buffer.from('3'));
    expect(sink.chunks).toEqual(['1', '2', '3']);
    sink.paused = true;
    exchange.pause();
    d.handler.onResponseData?.(d.controller, Buffer.from('4'));
    d.handler.onResponseEnd?.(d.controller, { 'x-trailer': 'y' });
    expect(sink.chunks).toEqual(['1', '2', '3']);
    expect(sink.ended).toBe(0);
    expect(d.controller.paused).toBe(true);
    sink.paused = false;
    exchange.resume();
    expect(sink.chunks).toEqual(['1', '2', '3', '4']);
    expect(sink.ended).toBe(1);
  });

  it('delivers the rest of a body a hook began to read, and ends that stream', async () => {
    const { exchange, response, d } = started();
    d.handler.onResponseStart?.(d.controller, 200, {}, 'OK');
    const r = await response;
    d.handler.onResponseData?.(d.controller, Buffer.from('read by the hook'));
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    expect(Buffer.from((await reader.read()).value ?? []).toString()).toBe('read by the hook');
    const pending = reader.read();
    const sink = new Sink();
    exchange.deliver(sink);
    expect((await pending).done).toBe(true);
    d.handler.onResponseData?.(d.controller, Buffer.from('rest'));
    d.handler.onResponseEnd?.(d.controller, {});
    expect(sink.chunks).toEqual(['rest']);
    expect(sink.ended).toBe(1);
  });

  it('does not deliver a body that was cancelled', async () => {
    const { exchange, response, d } = started();
    answer(d, 200, {}, ['x']);
    await (await response).body?.cancel();
    expect(exchange.deliver(new Sink())).toBe(false);
  });

  it('an abort before the dispatcher started the request rejects at once, and aborts it when it starts', async () => {
    const { dispatch, sent } = scriptedDispatch();
    const signal = new CallSignal();
    const exchange = new AttemptExchange();
    const response = exchange.send(dispatch, opts, signal.asAbortSignal());
    signal.abort(new Error('stop'));
    await expect(response).rejects.toThrow('stop');
    const d = sent[0];
    expect(d?.controller.aborted).toBe(false);
    d?.handler.onRequestStart?.(d.controller, {});
    expect(d?.controller.reason?.message).toBe('stop');
    // What the dispatcher says after that is for nobody.
    d?.handler.onResponseStart?.(d.controller, 200, {}, 'OK');
    d?.handler.onResponseData?.(d.controller, Buffer.from('late'));
    expect(exchange.deliver(new Sink())).toBe(false);
  });

  it('an error while the body arrives reaches the sink at once', async () => {
    const { exchange, response, d } = started();
    d.handler.onResponseStart?.(d.controller, 200, {}, 'OK');
    await response;
    const sink = new Sink();
    exchange.deliver(sink);
    exchange.flush();
    const error = new Error('terminated');
    d.handler.onResponseError?.(d.controller, error);
    expect(sink.error).toBe(error);
  });
});

describe('CallSignal', () => {
  it('calls each listener once with its reason, and not a removed one', () => {
    const signal = new CallSignal();
    const heard: unknown[] = [];
    const kept = () => heard.push(signal.reason);
    const removed = () => heard.push('removed');
    signal.addEventListener('abort', kept);
    signal.addEventListener('abort', kept);
    signal.addEventListener('abort', removed);
    signal.removeEventListener('abort', removed);
    signal.abort('why');
    signal.abort('again');
    expect(heard).toEqual(['why']);
    expect(signal.aborted).toBe(true);
    expect(() => signal.throwIfAborted()).toThrow();
  });

  it('aborts with an AbortError when given no reason', () => {
    const signal = new CallSignal();
    signal.abort();
    expect(signal.reason).toBeInstanceOf(DOMException);
    expect((signal.reason as DOMException).name).toBe('AbortError');
  });
});

describe('AttemptExchange, a body read before any chunk arrived', () => {
  it('waits for the first chunk, then streams it', async () => {
    const { response, d } = started();
    d.handler.onResponseStart?.(d.controller, 200, {}, 'OK');
    const r = await response;
    const text = r.text();
    await new Promise((resolve) => setImmediate(resolve));
    d.handler.onResponseData?.(d.controller, Buffer.from('late'));
    d.handler.onResponseEnd?.(d.controller, {});
    expect(await text).toBe('late');
  });

  it('reads an empty body to its end', async () => {
    const { response, d } = started();
    d.handler.onResponseStart?.(d.controller, 200, {}, 'OK');
    d.handler.onResponseEnd?.(d.controller, {});
    expect(await (await response).text()).toBe('');
  });
});

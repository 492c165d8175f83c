/**
 * Costs read from the request (a header, a JSON body field) and the Go durations of the `openai`
 * header family, as pure functions.
 */
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { parseDurationMs } from '../../../src/headers/values.js';
import { compileCost, costInput, jsonField, NO_JSON } from '../../../src/server/http/costs.js';
import { goDuration } from '../../../src/server/http/rate-limit-headers.js';

function input(headers: Record<string, string>, body: string, json = true) {
  const map = new Map(Object.entries(headers));
  return costInput((name) => map.get(name), Buffer.from(body), json);
}

describe('compileCost', () => {
  const tokens = compileCost({ header: 'X-Token-Estimate', json: 'max_tokens', default: 7 }, 1);

  it('a fixed cost, or the route cost when the limit has none, reads nothing', () => {
    expect(compileCost(5, 1)).toMatchObject({ fallback: 5, fromRequest: false });
    expect(compileCost(undefined, 3)).toMatchObject({ fallback: 3, fromRequest: false });
    expect(compileCost(5, 1).read(input({ 'x-token-estimate': '9' }, ''))).toEqual({
      ok: true,
      cost: 5,
    });
  });

  it('reads the header first (case-insensitively), then the JSON body, then the default', () => {
    expect(tokens.fromRequest).toBe(true);
    expect(tokens.fallback).toBe(7);
    const body = '{"max_tokens": 50}';
    expect(tokens.read(input({ 'x-token-estimate': ' 120 ' }, body))).toEqual({
      ok: true,
      cost: 120,
    });
    expect(tokens.read(input({}, body))).toEqual({ ok: true, cost: 50 });
    expect(tokens.read(input({}, '{"model": "m"}'))).toEqual({ ok: true, cost: 7 });
    expect(tokens.read(input({}, ''))).toEqual({ ok: true, cost: 7 });
  });

  it('a body that is not JSON by its type, or does not parse, has no field: the default', () => {
    expect(tokens.read(input({}, '{"max_tokens": 50}', false))).toEqual({ ok: true, cost: 7 });
    expect(tokens.read(input({}, '{"max_tokens": 50'))).toEqual({ ok: true, cost: 7 });
    expect(tokens.read(input({}, 'null'))).toEqual({ ok: true, cost: 7 });
  });

  it('the default falls back to the route cost', () => {
    expect(compileCost({ json: 'n' }, 4).read(input({}, '{}'))).toEqual({ ok: true, cost: 4 });
  });

  it.each([
    ['0', '"0"'],
    ['-5', '"-5"'],
    ['1.5', '"1.5"'],
    ['12abc', '"12abc"'],
    ['', '""'],
    ['1, 2', '"1, 2"'],
    ['1234567890123456', '"1234567890123456"'],
  ])('refuses the header value %j', (value, described) => {
    expect(tokens.read(input({ 'x-token-estimate': value }, '{"max_tokens": 5}'))).toEqual({
      ok: false,
      source: 'header x-token-estimate',
      value: described,
    });
  });

  it.each([
    ['0', '0'],
    ['-1', '-1'],
    ['1.5', '1.5'],
    ['"12"', '"12"'],
    ['null', 'null'],
    ['true', 'true'],
    ['{"a": 1}', 'an object'],
    ['[1]', 'an array'],
    ['9007199254740993', '9007199254740992'],
    ['1e400', 'Infinity'],
  ])('refuses the JSON value %s', (value, described) => {
    expect(tokens.read(input({}, `{"max_tokens": ${value}}`))).toEqual({
      ok: false,
      source: 'json max_tokens',
      value: described,
    });
  });

  it('quotes a long bad value within 64 characters', () => {
    const read = tokens.read(input({}, JSON.stringify({ max_tokens: 'x'.repeat(10_000) })));
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.value).toHaveLength(64);
  });

  it('parses the body once, on the first read that needs it, and not for a fixed cost', () => {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const shared = costInput(() => undefined, Buffer.from('{"a": 3, "b": 4}'), true);
      compileCost(5, 1).read(shared);
      compileCost({ header: 'x' }, 1).read(shared);
      expect(parse).not.toHaveBeenCalled();
      expect(compileCost({ json: 'a' }, 1).read(shared)).toEqual({ ok: true, cost: 3 });
      expect(compileCost({ json: 'b' }, 1).read(shared)).toEqual({ ok: true, cost: 4 });
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });
});

describe('jsonField', () => {
  const body = JSON.parse(
    '{"usage": {"total_tokens": 12}, "messages": [{"tokens": 3}, {"tokens": 4}], "__proto__": 5}',
  ) as unknown;

  it('walks dotted paths through objects and array indexes', () => {
    expect(jsonField(body, ['usage', 'total_tokens'])).toBe(12);
    expect(jsonField(body, ['messages', '1', 'tokens'])).toBe(4);
    expect(jsonField(body, ['messages', 'length'])).toBeUndefined();
    expect(jsonField(body, ['messages', '2', 'tokens'])).toBeUndefined();
    expect(jsonField(body, ['usage', 'total_tokens', 'x'])).toBeUndefined();
    expect(jsonField(NO_JSON, ['usage'])).toBeUndefined();
  });

  it('finds only what the body holds: no prototype property answers', () => {
    expect(jsonField(body, ['__proto__'])).toBe(5);
    expect(jsonField({}, ['constructor'])).toBeUndefined();
    expect(jsonField({}, ['__proto__'])).toBeUndefined();
    expect(jsonField({ a: {} }, ['a', 'toString'])).toBeUndefined();
    expect(jsonField(JSON.parse('{"constructor": 8}'), ['constructor'])).toBe(8);
  });
});

describe('goDuration (x-ratelimit-reset-* as OpenAI writes it)', () => {
  it.each([
    [0, '0s'],
    [1, '1ms'],
    [250, '250ms'],
    [1000, '1s'],
    [6750, '6.75s'],
    [17_005, '17.005s'],
    [60_000, '1m0s'],
    [360_000, '6m0s'],
    [61_500, '1m1.5s'],
    [3_600_000, '1h0m0s'],
    [3_723_500, '1h2m3.5s'],
    [-5, '0s'],
    [0.2, '1ms'],
  ])('%d ms is %s', (ms, text) => {
    expect(goDuration(ms)).toBe(text);
  });

  it('reads back exactly with the client parser', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 * 3_600_000 }), (ms) => {
        expect(parseDurationMs(goDuration(ms))).toBe(ms);
      }),
    );
  });
});

/**
 * `limitedInit`: a call's own options typed to fit an SDK's `fetchOptions` (checked here against
 * the real `openai` package's types: this file does not compile otherwise), checked and frozen.
 * Through the OpenAI SDK over loopback: test/client/integration/openai-sdk.int.test.ts.
 */
import OpenAI from 'openai';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  InvalidOptionError,
  type LimitedInit,
  type LimitedRequestInit,
  limitedInit,
} from '../../src/index.js';

describe('limitedInit: types', () => {
  it("fits the OpenAI SDK's fetchOptions, per client and per request, with no cast", () => {
    const init = limitedInit({ cost: { requests: 1, tokens: 1200 }, partition: 'gpt-4o' });
    const openai = new OpenAI({ apiKey: 'sk-test', fetchOptions: init });
    // Per request: a function of the SDK's types, not called.
    const create = () =>
      openai.chat.completions.create(
        { model: 'gpt-4o', messages: [] },
        { fetchOptions: limitedInit({ cost: 5, retry: false }) },
      );
    expectTypeOf(create).returns.toBeObject();
    // What needed `as any` before: a plain object with `cost` is refused by the SDK's type.
    // @ts-expect-error 'cost' does not exist in type 'MergedRequestInit'
    const _plain = new OpenAI({ apiKey: 'sk-test', fetchOptions: { cost: 5 } });
    void _plain;
  });

  it('is a RequestInit, and a LimitedRequestInit, spread or not', () => {
    const init = limitedInit({ cost: 2, timeoutMs: 5_000 });
    expectTypeOf(init).toExtend<RequestInit>();
    expectTypeOf(init).toExtend<LimitedRequestInit>();
    expectTypeOf({ method: 'POST', body: '{}', ...init }).toExtend<LimitedRequestInit>();
    // The fields an SDK sets itself are not among its fields.
    expectTypeOf<LimitedInit>().not.toHaveProperty('body');
  });
});

describe('limitedInit: values', () => {
  it('returns a new frozen object of the options given, nothing else', () => {
    const options = { cost: { requests: 1, tokens: 50 }, partition: 'p', timeoutMs: undefined };
    const init = limitedInit(options);
    expect(init).toEqual({ cost: { requests: 1, tokens: 50 }, partition: 'p' });
    expect(Object.keys(init)).toEqual(['cost', 'partition']);
    expect(init).not.toBe(options);
    expect(Object.isFrozen(init)).toBe(true);
  });

  it('reads each option once, getters included', () => {
    let reads = 0;
    const init = limitedInit({
      get cost() {
        reads++;
        return reads === 1 ? 3 : -5;
      },
    });
    expect(init.cost).toBe(3);
    expect(init.cost).toBe(3);
    expect(reads).toBe(1);
  });

  it.each([
    [
      'a negative cost',
      { cost: -1 },
      'invalid option limitedInit.cost: must be a number from 0 to 1000000000, got -1',
    ],
    [
      'a negative amount of tokens',
      { cost: { tokens: -1 } },
      'invalid option limitedInit.cost: must be { requests, tokens, ... }: at most 16 units, requests from 0 to 1000000000, any other from 0 to 1000000000, got an object',
    ],
    [
      '1.5 retries',
      { retry: { retries: 1.5 } },
      'invalid option limitedInit.retry.retries: must be an integer',
    ],
    [
      'a long partition',
      { partition: 'x'.repeat(257) },
      'invalid option limitedInit.partition: must be a string',
    ],
    [
      'a timeout of 0',
      { timeoutMs: 0 },
      'invalid option limitedInit.timeoutMs: must be a number of milliseconds',
    ],
    [
      'a key with CR LF',
      { idempotencyKey: 'a\r\nb' },
      'invalid option limitedInit.idempotencyKey: must be a header',
    ],
    [
      'a misspelt option',
      { costs: 1 },
      'invalid option limitedInit.costs: is not a known option (check its spelling)',
    ],
    [
      'createBody (an SDK makes the body)',
      { createBody: () => 'x' },
      'invalid option limitedInit.createBody: is not a known option (check its spelling)',
    ],
    [
      'a __proto__ key',
      JSON.parse('{"__proto__": {"polluted": true}}'),
      'invalid option limitedInit.__proto__: is not a known option (check its spelling)',
    ],
    [
      'null',
      null,
      "invalid option limitedInit: must be an object of a call's own options, got null",
    ],
    [
      'an array',
      [1],
      "invalid option limitedInit: must be an object of a call's own options, got an array",
    ],
  ])('refuses %s, naming the option', (_label, options, message) => {
    expect(() => limitedInit(options as never)).toThrow(InvalidOptionError);
    expect(() => limitedInit(options as never)).toThrow(message);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { chargeFor, toCost } from '../../../src/client/call/cost.js';
import { findPolicy } from '../../../src/client/rules/quota.js';
import { Host, open } from './harness.js';

/** OpenAI's fields: `requests` and `tokens` left of their limits, resets in 1 s and 6 s. */
const openai = (requests: number, tokens: number, limits = { requests: 60, tokens: 1000 }) => ({
  'x-ratelimit-limit-requests': String(limits.requests),
  'x-ratelimit-remaining-requests': String(requests),
  'x-ratelimit-reset-requests': '1s',
  'x-ratelimit-limit-tokens': String(limits.tokens),
  'x-ratelimit-remaining-tokens': String(tokens),
  'x-ratelimit-reset-tokens': '6s',
});

const tokens = (n: number) => toCost({ requests: 1, tokens: n });
const left = (h: Host, policy: string) => findPolicy(h.state.quota, policy)?.remaining;

describe('chargeFor', () => {
  it('charges a policy its name, else requests (or no stated unit) the requests, else its unit', () => {
    const cost = toCost({ requests: 2, tokens: 300, 'output-tokens': 50 });
    expect(chargeFor(cost, 'requests')).toBe(2);
    expect(chargeFor(cost, undefined)).toBe(2);
    expect(chargeFor(cost, 'concurrent-requests')).toBe(2);
    expect(chargeFor(cost, 'tokens', 'tokens')).toBe(300);
    expect(chargeFor(cost, 'tokens', 'input-tokens')).toBe(300);
    // The policy's own name wins over its unit.
    expect(chargeFor(cost, 'tokens', 'output-tokens')).toBe(50);
    expect(chargeFor(cost, 'bytes', 'upload')).toBeUndefined();
    expect(chargeFor(toCost(3), 'tokens', 'tokens')).toBeUndefined();
    // A policy of no stated unit, named by the call.
    expect(chargeFor(toCost({ tpm: 70 }), undefined, 'tpm')).toBe(70);
  });

  it('a number is requests, and a vector without requests costs one request', () => {
    expect(toCost(3)).toEqual({ requests: 3 });
    expect(toCost({ tokens: 10 })).toEqual({ requests: 1, units: [['tokens', 10]] });
  });
});

describe('costs per unit', () => {
  it('charges each policy the cost of its unit: requests to requests, tokens to tokens', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, openai(59, 1000), 0);
    h.send(0, tokens(300));
    h.send(0, tokens(300));
    expect(left(h, 'requests')).toBe(57);
    expect(left(h, 'tokens')).toBe(400);
    h.send(0, tokens(300));
    // 100 tokens left: a call of 300 waits for the tokens' reset, not the requests'.
    expect(h.check(tokens(300), 0)).toMatchObject({
      ok: false,
      reason: 'learned-limit',
      policy: 'tokens',
      waitMs: 6000,
    });
    // One that fits still goes.
    expect(h.check(tokens(100), 0).ok).toBe(true);
  });

  it('a call that does not say its tokens spends none, and waits only while the tokens are spent', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, openai(59, 10), 0);
    for (let i = 0; i < 20; i++) h.send(0);
    expect(left(h, 'tokens')).toBe(10);
    expect(left(h, 'requests')).toBe(39);
    h.answer(h.send(0), 200, openai(30, 0), 1);
    expect(h.check(1, 1)).toMatchObject({ ok: false, policy: 'tokens' });
  });

  it("replaces the estimate with the server's count, less what is still in flight", () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, openai(59, 1000), 0);
    const a = h.send(0, tokens(300));
    h.send(0, tokens(300));
    expect(left(h, 'tokens')).toBe(400);
    // The first call used 450 tokens, not 300: the server says 550 left, the second's 300 are
    // still out.
    h.answer(a, 200, openai(58, 550), 1);
    expect(left(h, 'tokens')).toBe(250);
    expect(h.state.flights?.other).toEqual([['tokens', 300]]);
  });

  it('refuses at once a call costing more than a whole limit, naming the policy', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, openai(59, 1000), 0);
    expect(h.check(tokens(1001), 0)).toEqual({
      ok: false,
      waitMs: undefined,
      reason: 'cost-too-high',
      policy: 'tokens',
    });
    expect(h.check(tokens(1000), 0).ok).toBe(true);
  });

  it('takes the unit from the IETF qu parameter', () => {
    const h = new Host(open);
    const fields = (r: number) => ({
      'ratelimit-policy': '"tpm";q=1000;w=60;qu="tokens", "rpm";q=10;w=60',
      ratelimit: `"tpm";r=${r};t=60, "rpm";r=9;t=60`,
    });
    h.answer(h.send(0), 200, fields(1000), 0);
    h.send(0, tokens(700));
    expect(left(h, 'tpm')).toBe(300);
    expect(left(h, 'rpm')).toBe(8);
  });

  it('charges a policy whose headers do not say its unit by its name, when the call names it', () => {
    const h = new Host(open);
    h.answer(
      h.send(0),
      200,
      {
        'ratelimit-policy': '"tpm";q=1000;w=60, "rpm";q=10;w=60',
        ratelimit: '"tpm";r=1000;t=60, "rpm";r=9;t=60',
      },
      0,
    );
    h.send(0, toCost({ requests: 1, tpm: 700 }));
    expect(left(h, 'tpm')).toBe(300);
    expect(left(h, 'rpm')).toBe(8);
    // Not named: a policy of no stated unit counts requests.
    h.send(0, tokens(100));
    expect(left(h, 'tpm')).toBe(299);
    expect(h.check(toCost({ tpm: 1001 }), 0)).toMatchObject({
      reason: 'cost-too-high',
      policy: 'tpm',
    });
  });

  it("charges a policy by its name first: Anthropic's output tokens apart from input tokens", () => {
    const h = new Host(open);
    h.answer(
      h.send(0),
      200,
      {
        'anthropic-ratelimit-input-tokens-limit': '1000',
        'anthropic-ratelimit-input-tokens-remaining': '1000',
        'anthropic-ratelimit-input-tokens-reset': '2030-01-01T00:00:00Z',
        'anthropic-ratelimit-output-tokens-limit': '200',
        'anthropic-ratelimit-output-tokens-remaining': '200',
        'anthropic-ratelimit-output-tokens-reset': '2030-01-01T00:00:00Z',
      },
      0,
    );
    h.send(0, toCost({ tokens: 400, 'output-tokens': 150 }));
    expect(left(h, 'input-tokens')).toBe(600);
    expect(left(h, 'output-tokens')).toBe(50);
  });

  it('counts other units in flight, and takes them back when a request is lost', () => {
    const h = new Host(open);
    h.send(0, tokens(300), 1000);
    h.send(0, tokens(200), 1000);
    expect(h.state.flights?.other).toEqual([['tokens', 500]]);
    h.prune(1000);
    expect(h.inFlight).toEqual({ units: 0, requests: 0 });
    expect(h.state.flights?.other).toBeUndefined();
  });

  it('replays a ticket with units deterministically: the same state as where it was issued', () => {
    const h = new Host(open);
    h.answer(h.send(0), 200, openai(59, 1000), 0);
    const copy = new Host(open);
    copy.state = structuredClone(h.state);
    const ticket = copy.send(0, tokens(300));
    h.replay(ticket, 0);
    expect(h.state.quota).toEqual(copy.state.quota);
    expect(h.state.flights).toEqual(copy.state.flights);
    expect(left(h, 'tokens')).toBe(700);
    h.answer(ticket, 200, openai(58, 700), 1);
    expect(h.inFlight).toEqual({ units: 0, requests: 0 });
    expect(h.state.flights?.other).toBeUndefined();
    expect(left(h, 'tokens')).toBe(700);
  });
});

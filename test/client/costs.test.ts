/**
 * Costs per unit through the whole client: a call that names its tokens is charged to the
 * server's token policy and its requests to the request policy; one that costs more than a whole
 * limit is refused at once, unsent, with a typed error naming the policy.
 */
import { describe, expect, it } from 'vitest';
import { CostTooHighError, isCostTooHighError, wrapFetch } from '../../src/index.js';
import { FakeClock } from './helpers.js';

const URL_ = 'https://llm.example.com/v1/chat';

/** A fetch answering 200 with OpenAI's fields: 60 requests and 1000 tokens, `tokens` left. */
function openaiFetch(tokensLeft: () => number) {
  const sent: string[] = [];
  const fn = (async (input: RequestInfo | URL) => {
    sent.push(String(input));
    return new Response('{}', {
      headers: {
        'x-ratelimit-limit-requests': '60',
        'x-ratelimit-remaining-requests': String(60 - sent.length),
        'x-ratelimit-reset-requests': '1s',
        'x-ratelimit-limit-tokens': '1000',
        'x-ratelimit-remaining-tokens': String(tokensLeft()),
        'x-ratelimit-reset-tokens': '6s',
      },
    });
  }) as typeof fetch;
  return { fn, sent };
}

describe('costs per unit', () => {
  it('refuses a call estimated above a whole limit at once, naming the policy, nothing sent', async () => {
    const { fn, sent } = openaiFetch(() => 1000);
    const fetch = wrapFetch(fn, { clock: new FakeClock() });
    await fetch(URL_, { cost: { tokens: 10 } });
    const error = await fetch(URL_, { cost: { requests: 1, tokens: 1001 } }).catch((e) => e);
    expect(error).toBeInstanceOf(CostTooHighError);
    expect(isCostTooHighError(error)).toBe(true);
    expect(error.code).toBe('ERR_COST_TOO_HIGH');
    expect(error.policy).toBe('tokens');
    expect(error.message).toBe(
      `GET ${URL_}: costs more than the whole limit of policy "tokens": it could never be sent`,
    );
    expect(sent).toHaveLength(1);
    // A number is requests only: the token policy does not hold it.
    expect((await fetch(URL_, { cost: 1 })).status).toBe(200);
    await fetch.close();
  });

  it('a cost function may return a cost per unit, from the request', async () => {
    const { fn, sent } = openaiFetch(() => 1000);
    const costs: unknown[] = [];
    const fetch = wrapFetch(fn, {
      clock: new FakeClock(),
      cost: ({ url }) => {
        const tokens = Number(new URL(url).searchParams.get('tokens') ?? 0);
        costs.push(tokens);
        return { requests: 1, tokens };
      },
    });
    await fetch(`${URL_}?tokens=5`);
    await expect(fetch(`${URL_}?tokens=5000`)).rejects.toThrow(CostTooHighError);
    expect(costs).toEqual([5, 5000]);
    expect(sent).toHaveLength(1);
    await fetch.close();
  });

  it('shows the tokens policy in stats, spent by what is in flight', async () => {
    let left = 1000;
    const { fn } = openaiFetch(() => left);
    const fetch = wrapFetch(fn, { clock: new FakeClock() });
    left = 700;
    await fetch(URL_, { cost: { tokens: 300 } });
    const host = fetch.stats().hosts['https://llm.example.com'];
    const tokens = host?.policies?.find((p) => p.name === 'tokens');
    expect(tokens).toMatchObject({ limit: 1000, remaining: 700 });
    await fetch.close();
  });
});

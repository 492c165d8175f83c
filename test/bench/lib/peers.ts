/**
 * The HTTP clients users would pick instead of limited-client, each set up with its own retry
 * turned on, as its documentation suggests. Every contender performs one logical GET and resolves
 * to the final status (0 when it gave up without a response); attempts are counted on the server.
 *
 * All are given the same retry allowance ({@link RETRIES}) so that none wins by giving up early.
 */
import got from 'got';
import ky, { HTTPError } from 'ky';
import pRetry, { AbortError } from 'p-retry';
import { Agent, RetryAgent, fetch as undiciFetch } from 'undici';

/** Retries each peer may make per logical request. */
export const RETRIES = 10;

export interface Contender {
  readonly name: string;
  /** One logical GET of `url`; resolves to the final status, 0 when no response came back. */
  get(url: string): Promise<number>;
  close?(): Promise<void>;
}

async function drain(response: Response): Promise<number> {
  await response.arrayBuffer();
  return response.status;
}

/** fetch, no retry at all: the baseline for overhead. */
export const plainFetch: Contender = {
  name: 'fetch (no retry)',
  get: async (url) => drain(await fetch(url)),
};

/**
 * The loop people write first: on a 429 or a 5xx, wait a fixed 100 ms and try again, up to
 * RETRIES times, ignoring Retry-After.
 */
export const naiveRetry: Contender = {
  name: 'fetch + naive retry',
  async get(url) {
    let status = 0;
    for (let attempt = 0; attempt <= RETRIES; attempt++) {
      try {
        status = await drain(await fetch(url));
      } catch {
        status = 0;
      }
      if (status !== 429 && status < 500 && status !== 0) return status;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return status;
  },
};

/** p-retry over fetch with its defaults (exponential from 1 s, factor 2), Retry-After ignored. */
export const pRetryLoop: Contender = {
  name: 'p-retry + fetch',
  async get(url) {
    let status = 0;
    try {
      await pRetry(
        async () => {
          const response = await fetch(url);
          status = await drain(response);
          if (status === 429 || status >= 500) throw new Error(`status ${status}`);
          if (status >= 400) throw new AbortError(`status ${status}`);
        },
        { retries: RETRIES },
      );
    } catch {
      // The final status is already recorded.
    }
    return status;
  },
};

/** ky with retry (it honours Retry-After on 413, 429 and 503). */
export const kyRetry: Contender = {
  name: 'ky',
  async get(url) {
    try {
      const response = await ky.get(url, { retry: { limit: RETRIES }, timeout: false });
      return drain(response);
    } catch (error) {
      if (error instanceof HTTPError) return drain(error.response);
      return 0;
    }
  },
};

/** got with retry (it honours Retry-After on 413, 429 and 503). */
export const gotRetry: Contender = {
  name: 'got',
  async get(url) {
    try {
      const response = await got(url, { retry: { limit: RETRIES }, throwHttpErrors: false });
      return response.statusCode;
    } catch {
      return 0;
    }
  },
};

/** undici's RetryAgent (it honours Retry-After). */
export function undiciRetryAgent(): Contender {
  const agent = new Agent({ connections: 64 });
  const dispatcher = new RetryAgent(agent, {
    maxRetries: RETRIES,
    statusCodes: [429, 500, 502, 503, 504],
    retryAfter: true,
  });
  return {
    name: 'undici RetryAgent',
    async get(url) {
      try {
        return drain((await undiciFetch(url, { dispatcher })) as unknown as Response);
      } catch (error) {
        const cause = (error as { cause?: { statusCode?: number } }).cause;
        return cause?.statusCode ?? 0;
      }
    },
    close: () => agent.close(),
  };
}

/**
 * The HTTP clients users would pick instead of limited-client, each set up with its own retry
 * turned on, as its documentation suggests. Every contender performs one logical GET (or POST)
 * and resolves to the final status (0 when it gave up without a response); attempts are counted
 * on the server.
 *
 * All are given the same retry allowance ({@link RETRIES}) so that none wins by giving up early.
 * POSTs are retried too, as a user who knows the endpoint tolerates it would set up (ky, got and
 * undici leave POST out of their default retry methods; LimitedClient retries a POST after an
 * answer that proves it unprocessed, as the 429s and 403s with Retry-After of these benches do, or
 * to a host that honours its Idempotency-Key).
 */
import got from 'got';
import ky, { HTTPError } from 'ky';
import pRetry, { AbortError } from 'p-retry';
import { Agent, RetryAgent, fetch as undiciFetch, request as undiciRequest } from 'undici';
import { LimitedClient, type LimitedClientOptions } from '../../../src/index.js';

/** Retries each peer may make per logical request. */
export const RETRIES = 10;

export interface Contender {
  readonly name: string;
  /** One logical GET of `url`; resolves to the final status, 0 when no response came back. */
  get(url: string): Promise<number>;
  /** One logical POST of `body` (JSON) to `url`, retried like a GET; same resolution. */
  post(url: string, body: string): Promise<number>;
  close?(): Promise<void>;
}

/** A {@link Contender} that also says why calls failed without a status. */
export interface LimitedContender extends Contender {
  /**
   * Calls that ended without a status, by reason: a typed error's `code` (`ERR_CIRCUIT_OPEN`...),
   * another error's name, or `unreadable body` for a response whose body could not be read.
   */
  readonly problems: Map<string, number>;
  close(): Promise<void>;
}

/**
 * LimitedClient as a contender: one client per contender instance, defaults unless told (and this
 * copy of the package unless given another's class). A call
 * that rejects, or resolves to a response whose body cannot be read, counts as status 0 and is
 * recorded in `problems`.
 */
export function limitedClientContender(
  name = 'LimitedClient',
  options: LimitedClientOptions = {},
  /** Another copy's class (bench.ts `--before`), for a before/after in the same run. */
  Client: typeof LimitedClient = LimitedClient,
): LimitedContender {
  const client = new Client('http://127.0.0.1', options);
  const problems = new Map<string, number>();
  const note = (problem: string) => problems.set(problem, (problems.get(problem) ?? 0) + 1);
  async function call(url: string, init?: RequestInit): Promise<number> {
    let response: Response;
    try {
      response = await client.request(url, init);
    } catch (error) {
      // Refused to send (circuit open, budget spent) or a network error.
      note((error as { code?: string }).code ?? (error as Error).name ?? String(error));
      return 0;
    }
    try {
      await response.arrayBuffer();
    } catch {
      note('unreadable body');
      return 0;
    }
    return response.status;
  }
  return {
    name,
    problems,
    get: (url) => call(url),
    post: (url, body) =>
      call(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } }),
    close: () => client.close(),
  };
}

async function drain(response: Response): Promise<number> {
  await response.arrayBuffer();
  return response.status;
}

/** fetch, no retry at all: the baseline for overhead. */
export const plainFetch: Contender = {
  name: 'fetch (no retry)',
  get: async (url) => drain(await fetch(url)),
  post: async (url, body) => drain(await fetch(url, postInit(body))),
};

function postInit(body: string): RequestInit {
  return { method: 'POST', body, headers: { 'content-type': 'application/json' } };
}

/**
 * The loop people write first: on a 429 or a 5xx, wait a fixed 100 ms and try again, up to
 * RETRIES times, ignoring Retry-After.
 */
export const naiveRetry: Contender = {
  name: 'fetch + naive retry',
  get: (url) => naiveLoop(url),
  post: (url, body) => naiveLoop(url, postInit(body)),
};

async function naiveLoop(url: string, init?: RequestInit): Promise<number> {
  let status = 0;
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    try {
      status = await drain(await fetch(url, init));
    } catch {
      status = 0;
    }
    if (status !== 429 && status < 500 && status !== 0) return status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return status;
}

/** p-retry over fetch with its defaults (exponential from 1 s, factor 2), Retry-After ignored. */
export const pRetryLoop: Contender = {
  name: 'p-retry + fetch',
  get: (url) => pRetryFetch(url),
  post: (url, body) => pRetryFetch(url, postInit(body)),
};

async function pRetryFetch(url: string, init?: RequestInit): Promise<number> {
  let status = 0;
  try {
    await pRetry(
      async () => {
        const response = await fetch(url, init);
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
}

/** ky with retry (it honours Retry-After on 413, 429 and 503). */
export const kyRetry: Contender = {
  name: 'ky',
  get: (url) => kyCall(url, 'get'),
  post: (url, body) => kyCall(url, 'post', body),
};

async function kyCall(url: string, method: 'get' | 'post', body?: string): Promise<number> {
  try {
    const response = await ky(url, {
      method,
      body,
      headers: body === undefined ? undefined : { 'content-type': 'application/json' },
      retry: { limit: RETRIES, methods: ['get', 'post'] },
      timeout: false,
    });
    return drain(response);
  } catch (error) {
    if (error instanceof HTTPError) return drain(error.response);
    return 0;
  }
}

/** got with retry (it honours Retry-After on 413, 429 and 503). */
export const gotRetry: Contender = {
  name: 'got',
  get: (url) => gotCall(url, 'GET'),
  post: (url, body) => gotCall(url, 'POST', body),
};

async function gotCall(url: string, method: 'GET' | 'POST', body?: string): Promise<number> {
  try {
    const response = await got(url, {
      method,
      body,
      headers: body === undefined ? undefined : { 'content-type': 'application/json' },
      retry: { limit: RETRIES, methods: ['GET', 'POST'] },
      throwHttpErrors: false,
    });
    return response.statusCode;
  } catch {
    return 0;
  }
}

/**
 * undici's RetryAgent (it honours Retry-After). GETs go through undici's fetch; POSTs through
 * `undici.request` with a string body, because through fetch the body becomes a stream that the
 * retry cannot send again (the retried POST fails with RequestContentLengthMismatchError).
 */
export function undiciRetryAgent(): Contender {
  const agent = new Agent({ connections: 64 });
  const dispatcher = new RetryAgent(agent, {
    maxRetries: RETRIES,
    statusCodes: [429, 500, 502, 503, 504],
    methods: ['GET', 'POST'],
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
    async post(url, body) {
      try {
        const response = await undiciRequest(url, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json' },
          dispatcher,
        });
        await response.body.arrayBuffer();
        return response.statusCode;
      } catch (error) {
        return (error as { statusCode?: number }).statusCode ?? 0;
      }
    },
    close: () => agent.close(),
  };
}

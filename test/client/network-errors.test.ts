import { describe, expect, it } from 'vitest';
import {
  isConnectionRefused,
  isTransientNetworkError,
} from '../../src/client/call/network-errors.js';
import { networkError } from './helpers.js';

describe('isTransientNetworkError', () => {
  it('is true for resets, refusals, hang-ups, timeouts and EAI_AGAIN', () => {
    for (const code of [
      'ECONNRESET',
      'ECONNREFUSED',
      'UND_ERR_SOCKET',
      'ETIMEDOUT',
      'EAI_AGAIN',
      'EPIPE',
    ]) {
      expect(isTransientNetworkError(networkError(code))).toBe(true);
    }
  });

  it('is false for permanent failures', () => {
    for (const code of [
      'ENOTFOUND',
      'CERT_HAS_EXPIRED',
      'ERR_TLS_CERT_ALTNAME_INVALID',
      'UND_ERR_INVALID_ARG',
    ]) {
      expect(isTransientNetworkError(networkError(code))).toBe(false);
    }
  });

  it('reads browser messages when there is no code', () => {
    expect(isTransientNetworkError(new TypeError('Failed to fetch'))).toBe(true);
    expect(isTransientNetworkError(new TypeError('Load failed'))).toBe(true);
    expect(
      isTransientNetworkError(new TypeError('NetworkError when attempting to fetch resource.')),
    ).toBe(true);
  });

  // As seen in test/runtimes: Deno 2.9 and workerd on a reset and a refused connection.
  it("reads Deno's causes without a code, by their message", () => {
    const deno = (message: string) => new TypeError('fetch failed', { cause: new Error(message) });
    expect(isTransientNetworkError(deno('Connection reset by peer (os error 104)'))).toBe(true);
    expect(
      isTransientNetworkError(
        deno(
          'error sending request for url (http://127.0.0.1:1/x): client error (Connect): tcp connect error: Connection refused (os error 111)',
        ),
      ),
    ).toBe(true);
    expect(isTransientNetworkError(deno('connection closed before message completed'))).toBe(true);
    // A DNS name that does not exist, and the caller's own stream failing: not transient.
    expect(
      isTransientNetworkError(
        deno('dns error: failed to lookup address information: Name or service not known'),
      ),
    ).toBe(false);
    expect(isTransientNetworkError(deno('the upload stream broke'))).toBe(false);
    // Only under a fetch TypeError.
    expect(
      isTransientNetworkError(new Error('x', { cause: new Error('Connection reset by peer') })),
    ).toBe(false);
  });

  it("reads workerd's plain Error('Network connection lost.')", () => {
    expect(isTransientNetworkError(new Error('Network connection lost.'))).toBe(true);
    expect(isTransientNetworkError(new Error('Network connection lost, maybe'))).toBe(false);
  });

  it('is false for programming errors, aborts and non-errors', () => {
    expect(isTransientNetworkError(new TypeError('RequestInit: duplex option is required'))).toBe(
      false,
    );
    expect(isTransientNetworkError(new DOMException('aborted', 'AbortError'))).toBe(false);
    expect(isTransientNetworkError(new Error('fetch failed'))).toBe(false);
    expect(isTransientNetworkError('ECONNRESET')).toBe(false);
    expect(isTransientNetworkError(null)).toBe(false);
  });

  it('reads nested causes and happy-eyeballs aggregates', () => {
    const inner = Object.assign(new Error('connect'), { code: 'ECONNREFUSED' });
    const aggregate = Object.assign(new AggregateError([inner]), {});
    expect(isTransientNetworkError(new TypeError('fetch failed', { cause: aggregate }))).toBe(true);
  });
});

describe('isConnectionRefused (nothing reached a server)', () => {
  it('is true for ECONNREFUSED, nested or in an aggregate where every address refused', () => {
    expect(isConnectionRefused(networkError('ECONNREFUSED'))).toBe(true);
    const refused = () => Object.assign(new Error('connect'), { code: 'ECONNREFUSED' });
    const all = new AggregateError([refused(), refused()]);
    expect(isConnectionRefused(new TypeError('fetch failed', { cause: all }))).toBe(true);
  });

  it('is false where the request may have reached a server, or nobody says', () => {
    for (const code of ['ECONNRESET', 'UND_ERR_SOCKET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']) {
      expect(isConnectionRefused(networkError(code))).toBe(false);
    }
    const reset = Object.assign(new Error('read'), { code: 'ECONNRESET' });
    const refused = Object.assign(new Error('connect'), { code: 'ECONNREFUSED' });
    const mixed = new AggregateError([refused, reset]);
    expect(isConnectionRefused(new TypeError('fetch failed', { cause: mixed }))).toBe(false);
    // Browsers say nothing about which failure it was.
    expect(isConnectionRefused(new TypeError('Failed to fetch'))).toBe(false);
    expect(isConnectionRefused(new Error('Network connection lost.'))).toBe(false);
    expect(isConnectionRefused(undefined)).toBe(false);
  });

  it("reads Deno's cause by its message, under a fetch TypeError only", () => {
    const deno = (message: string) => new TypeError('fetch failed', { cause: new Error(message) });
    expect(isConnectionRefused(deno('tcp connect error: Connection refused (os error 111)'))).toBe(
      true,
    );
    expect(isConnectionRefused(deno('Connection reset by peer (os error 104)'))).toBe(false);
    expect(isConnectionRefused(new Error('x', { cause: new Error('Connection refused') }))).toBe(
      false,
    );
  });

  it('over real sockets: a port nobody listens on refuses', async () => {
    const error = await fetch(`http://127.0.0.1:${await closedPort()}/`).catch((e: unknown) => e);
    expect(isConnectionRefused(error)).toBe(true);
  });
});

/** A loopback port that was free a moment ago: nothing listens there. */
async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 1));
    });
  });
}

import { describe, expect, it } from 'vitest';
import { isTransientNetworkError } from '../../src/client/network-errors.js';
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

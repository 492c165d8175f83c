import { describe, expect, it } from 'vitest';
import { HostMatcher, hostPatternProblem } from '../../src/client/host/host-match.js';

describe('host patterns', () => {
  it('accepts hosts, host:port, IPv6 literals and *.domain', () => {
    for (const p of [
      'api.example.com',
      '127.0.0.1:8080',
      'localhost',
      '[::1]:3000',
      '*.example.com',
    ]) {
      expect(hostPatternProblem(p)).toBeUndefined();
    }
  });
  it('rejects other shapes', () => {
    for (const p of [
      'https://api.example.com',
      'api.*.com',
      '*',
      '*.',
      'a b',
      'api.example.com/x',
    ]) {
      expect(hostPatternProblem(p)).toBeDefined();
    }
  });

  it('matches least specific first: wildcards by length, then the host, then host:port', () => {
    const m = new HostMatcher({
      '*.com': 'com',
      '*.example.com': 'example',
      'api.example.com': 'exact',
      'api.example.com:8443': 'port',
      '*.b.example.com': 'b',
    });
    expect(m.match('api.example.com', 'api.example.com:8443')).toEqual([
      'com',
      'example',
      'exact',
      'port',
    ]);
    expect(m.match('x.b.example.com', 'x.b.example.com')).toEqual(['com', 'example', 'b']);
    expect(m.match('example.com', 'example.com')).toEqual(['com']);
    expect(m.match('API.Example.COM', 'API.Example.COM')).toEqual(['com', 'example', 'exact']);
    expect(m.match('other.org', 'other.org')).toEqual([]);
  });
});

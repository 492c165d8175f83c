/**
 * Rate-limit keys: who shares a budget. Built from values the server trusts: the socket's peer,
 * a header the route names, and `X-Forwarded-For` only when configured.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { KeyConfig, KeyPart } from './config.js';
import { jsonField } from './costs.js';
import { LIMIT_DEFAULTS } from './defaults.js';
import { header } from './exchange.js';

/**
 * The client's IP address. `trustProxy`: `false` takes the socket's peer; `true` the first address
 * of `X-Forwarded-For`; a number `n` the address `n` hops before the peer (the peer being the
 * nearest of `n` trusted proxies). IPv4-mapped IPv6 addresses are written as IPv4.
 */
export function clientIp(req: IncomingMessage, trustProxy: boolean | number): string {
  const peer = normalizeIp(req.socket.remoteAddress ?? 'unknown');
  if (trustProxy === false || trustProxy === 0) return peer;
  const listed = (header(req, 'x-forwarded-for') ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  const chain = [...listed, peer];
  const hops = trustProxy === true ? chain.length - 1 : trustProxy;
  return normalizeIp(chain[Math.max(0, chain.length - 1 - hops)] as string);
}

function normalizeIp(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

function parts(key: KeyConfig | undefined): KeyPart[] {
  if (key === undefined) return [LIMIT_DEFAULTS.key];
  return Array.isArray(key) ? key : [key];
}

/** Header values longer than this (in characters) are hashed, so that a key's size stays bounded. */
export const LONGEST_KEY_VALUE = 128;

/**
 * `value` as part of a key: itself up to {@link LONGEST_KEY_VALUE} characters, else
 * `sha256:<43 characters>`, so that what a client sends cannot make a key (and what it keys) big.
 */
export function boundedValue(value: string): string {
  if (value.length <= LONGEST_KEY_VALUE) return value;
  return `sha256:${createHash('sha256').update(value).digest('base64url')}`;
}

/** A header's value as part of a key; `name` in lower case. */
function headerValue(req: IncomingMessage, name: string): string {
  return boundedValue(header(req, name) ?? '');
}

/**
 * What a key may read of a request besides its header fields: the route's path parameters (a
 * null-prototype object) and its JSON body, parsed at most once, only when a key asks (the body
 * the server read anyway, at most 1 MiB; `costs.ts` `NO_JSON` when it is not JSON).
 */
export interface KeyContext {
  params: Readonly<Record<string, string>>;
  json(): unknown;
}

/** A request's key under one limit, from the request, its client IP, its parameters and body. */
export type KeyFunction = (req: IncomingMessage, ip: string, context?: KeyContext) => string;

/** A JSON value as part of a key: a string or a finite number, bounded; anything else is empty. */
function jsonValue(value: unknown): string {
  if (typeof value === 'string') return boundedValue(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return '';
}

/**
 * Compiles a key configuration into the function that keys requests: `ip:203.0.113.7`, `global`,
 * `x-api-key:abc`, `param channel:42`, `json model:gpt-4o`, or the parts of a composite joined
 * with `|` (a space never appears in a header name, so a header part cannot pass for another
 * part). Requests without a keyed header, parameter or field share the key with an empty value.
 */
export function compileKey(key: KeyConfig | undefined): KeyFunction {
  const compiled = parts(key).map((part): KeyFunction => {
    if (part === 'ip') return (_req, ip) => `ip:${ip}`;
    if (part === 'global') return () => 'global';
    if ('param' in part) {
      const name = part.param;
      return (_req, _ip, context) => `param ${name}:${boundedValue(context?.params[name] ?? '')}`;
    }
    if ('json' in part) {
      const path = part.json.split('.');
      const label = `json ${part.json}:`;
      return (_req, _ip, context) =>
        label + (context === undefined ? '' : jsonValue(jsonField(context.json(), path)));
    }
    const name = part.header.toLowerCase();
    return (req) => `${name}:${headerValue(req, name)}`;
  });
  if (compiled.length === 1) return compiled[0] as KeyFunction;
  return (req, ip, context) => compiled.map((keyOf) => keyOf(req, ip, context)).join('|');
}

/** A request's key under a limit configured with `key` (see {@link compileKey}). */
export function requestKey(
  key: KeyConfig | undefined,
  req: IncomingMessage,
  ip: string,
  context?: KeyContext,
): string {
  return compileKey(key)(req, ip, context);
}

/**
 * What a key is made of, without any request's values, for error bodies: `ip`, `global`,
 * `header:x-api-key`, `ip+header:x-api-key`, `param:channel`, `json:model`.
 */
export function keyScope(key: KeyConfig | undefined): string {
  return parts(key)
    .map((part) => {
      if (typeof part === 'string') return part;
      if ('param' in part) return `param:${part.param}`;
      if ('json' in part) return `json:${part.json}`;
      return `header:${part.header.toLowerCase()}`;
    })
    .join('+');
}

/**
 * Whether a key reads a path parameter or the JSON body (`{ param }`, `{ json }`): a route whose
 * keys do not is spared building what they would read.
 */
export function readsRequest(key: KeyConfig | undefined): boolean {
  return parts(key).some((part) => typeof part === 'object' && !('header' in part));
}

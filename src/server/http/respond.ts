/**
 * The route handler's answer: its configured response, or an echo of the request.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { CompiledRoute } from './compile.js';
import type { StoredResponse } from './idempotency.js';

/** What the handler knows of the request. */
export interface HandlerInput {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Buffer;
  req: IncomingMessage;
  execution: number;
}

/** The route's answer: its configured body, or an echo of the request. */
export function respond(route: CompiledRoute, input: HandlerInput): StoredResponse {
  const { response } = route;
  const payload =
    response.body !== undefined
      ? response.body
      : {
          ok: true,
          route: route.label,
          method: input.method,
          path: input.path,
          params: input.params,
          query: Object.fromEntries(input.query),
          execution: input.execution,
          body: echo(input.req, input.body),
        };
  return {
    status: response.status ?? 200,
    headers: { 'Content-Type': 'application/json', ...response.headers },
    body: Buffer.from(JSON.stringify(payload)),
  };
}

function echo(req: IncomingMessage, body: Buffer): unknown {
  if (body.length === 0) return undefined;
  const text = body.toString('utf8');
  if (!/json/i.test(req.headers['content-type'] ?? '')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

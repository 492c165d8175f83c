/**
 * The route handler's answer: its configured response, or an echo of the request.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { CompiledRoute } from './compile.js';
import { type HeaderFields, header } from './exchange.js';

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

/** A response before it is sent: status, header fields (names and values in turn), body. */
export interface HandlerResponse {
  status: number;
  headers: HeaderFields;
  body: Buffer;
}

/** The route's answer: its configured body, or an echo of the request. */
export function respond(route: CompiledRoute, input: HandlerInput): HandlerResponse {
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
          query: queryObject(input.query),
          execution: input.execution,
          body: echo(input.req, input.body),
        };
  return {
    status: response.status ?? 200,
    headers: route.responseHeaders,
    body: Buffer.from(JSON.stringify(payload)),
  };
}

/** The query as a null-prototype object (a repeated name keeps its last value). */
function queryObject(query: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [name, value] of query) out[name] = value;
  return out;
}

function echo(req: IncomingMessage, body: Buffer): unknown {
  if (body.length === 0) return undefined;
  const text = body.toString('utf8');
  if (!/json/i.test(header(req, 'content-type') ?? '')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

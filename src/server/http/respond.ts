/**
 * The route handler's answer: its configured response, or an echo of the request.
 *
 * @module
 */
import type { CompiledRoute } from './compile.js';
import type { HeaderFields } from './exchange.js';

/**
 * What the handler knows of the request. A response is a function of these alone (and of the
 * route): that is what lets a replay rebuild it instead of storing it.
 */
export interface HandlerInput {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Buffer;
  /** Whether the request said its body is JSON (its `Content-Type` mentions `json`). */
  json: boolean;
  /** The number of this side effect on the route, from 1. */
  execution: number;
}

/**
 * What a replay needs besides the replayed request: the side effect's number, and how its body was
 * read. A replay carries the same method, target and body as the original (the idempotency
 * fingerprint proves it), so these few numbers rebuild the original response byte for byte.
 */
export interface ResponseRecipe {
  execution: number;
  json: boolean;
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
          body: echo(input.body, input.json),
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

function echo(body: Buffer, json: boolean): unknown {
  if (body.length === 0) return undefined;
  const text = body.toString('utf8');
  if (!json) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * The route handler's answer: its configured response, or an echo of the request.
 *
 * @module
 */
import type { CompiledRoute } from './compile.js';
import { ROUTE_DEFAULTS } from './defaults.js';
import type { HeaderFields } from './exchange.js';

/**
 * What the handler knows of the request. A response is a function of these alone (and of the
 * route and the side effect's number): that is what lets a replay rebuild it instead of storing it.
 */
export interface HandlerInput {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Buffer;
}

/**
 * What a replay needs besides the replayed request: the side effect's number, and whether its body
 * was read as JSON. A replay carries the same method, target and body as the original (the
 * idempotency fingerprint proves it), so these rebuild the original response byte for byte.
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

/**
 * The route's answer: its configured body (serialised once, at start-up), or an echo of the
 * request with the number of the side effect (`execution`, from 1) and its body, parsed when
 * `json`.
 */
export function respond(
  route: CompiledRoute,
  input: HandlerInput,
  execution: number,
  json: boolean,
): HandlerResponse {
  const { response } = route;
  const status = response.status ?? ROUTE_DEFAULTS.response.status;
  if (route.responseBody !== undefined) {
    return { status, headers: route.responseHeaders, body: route.responseBody };
  }
  const payload = {
    ok: true,
    route: route.label,
    method: input.method,
    path: input.path,
    params: input.params,
    query: queryObject(input.query),
    execution,
    body: echo(input.body, json),
  };
  return { status, headers: route.responseHeaders, body: Buffer.from(serialise(payload, input)) };
}

/**
 * The echo as JSON. A body nested deeper than `JSON.stringify` can recurse (a 1 MiB body of `[`
 * parses, but a million levels overflow the stack) is echoed as its text instead: the same for a
 * replay, which carries the same body.
 */
function serialise(payload: { body: unknown }, input: HandlerInput): string {
  try {
    return JSON.stringify(payload);
  } catch {
    return JSON.stringify({ ...payload, body: input.body.toString('utf8') });
  }
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

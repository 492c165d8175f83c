/**
 * The budget an LLM request names in its body. OpenAI and Anthropic limit each model apart, and
 * the model is only in the JSON request body (`{"model": "gpt-4o", ...}`): no answer names it. On
 * a host that speaks one of their dialects ({@link speaksModelDialect}), or one of
 * {@link KNOWN_MODEL_ORIGINS} from its first call, a call whose body is JSON text with a top-level
 * string `model` runs in the scope `model:<name>`; any other call (no body, a stream, a `Request`
 * given whole, no `model`) runs with the host's own rules. See `docs/how-it-works.md` ("Many
 * budgets per host").
 *
 * @module
 */
import type { RateLimitInfo } from '../../headers/types.js';
import { type CostVector, MAX_COST } from '../call/cost.js';
import type { PreparedRequest } from '../call/request.js';
import { RequestView } from '../call/request-view.js';
import { usable } from './answer-scope.js';

/**
 * Origins whose calls are read for a model from their first call: the providers' own APIs, whose
 * dialect is certain. Any other host is read once an answer showed the dialect.
 */
export const KNOWN_MODEL_ORIGINS: ReadonlySet<string> = new Set([
  'https://api.openai.com',
  'https://api.anthropic.com',
]);

/** Whether an answer's fields are OpenAI's or Anthropic's: limits kept per model. */
export function speaksModelDialect(info: RateLimitInfo): boolean {
  return info.source === 'openai' || info.source === 'anthropic';
}

/**
 * The tokens a model call is charged when it names no cost (`docs/how-it-works.md`, "Token
 * budgets"): its prompt as the body's length / 4 characters a token, its answer as its
 * `max_tokens` (`max_completion_tokens`), which OpenAI counts as spent when sent and Anthropic
 * limits apart. Each amount at most `MAX_COST`.
 */
function estimateOf(body: Record<string, unknown>, length: number): CostVector {
  const max = body.max_tokens ?? body.max_completion_tokens;
  const output = typeof max === 'number' && max > 0 ? Math.min(Math.floor(max), MAX_COST) : 0;
  const input = Math.ceil(length / 4);
  return { tokens: input + output, 'input-tokens': input, 'output-tokens': output };
}

/**
 * The scope the call's body names (`model:gpt-4o`), or `undefined`. The body is read as the `cost`
 * and `partition` functions see it (text in memory, at most 1 MiB: `request-view.ts`), parsed at
 * most once per call (kept on `req`, and shared with the `cost` function's view when it has one).
 * A model name must be a usable scope name: 1 to 128 characters, no control character.
 */
export function modelScopeOf(req: PreparedRequest): string | undefined {
  let model = req.model;
  if (model === undefined) {
    model = null;
    const view = req.view ?? new RequestView(req.url, undefined, req.init, undefined);
    const text = view.body;
    // Most bodies without the field are not parsed at all.
    if (text?.includes('"model"') === true) {
      const json = view.json();
      const value =
        typeof json === 'object' && json !== null && !Array.isArray(json)
          ? (json as { model?: unknown }).model
          : undefined;
      if (usable(value)) {
        model = `model:${value}`;
        req.estimate = estimateOf(json as Record<string, unknown>, text.length);
      }
    }
    req.model = model;
  }
  return model ?? undefined;
}

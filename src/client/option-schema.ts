/**
 * The zod schema of the client's options, and `parseOptions`, which checks them at construction.
 * Each check carries the allowed range as its message; `parseOptions` adds the option's path and the
 * value that was given, so a mistake reads `invalid option retry.retries: must be an integer from 0
 * to 100 (got 1.5)`. Unknown keys are refused: a typo must not pass silently.
 *
 * @module
 */
import { z } from 'zod';
import type { Clock } from '../clock.js';
import { InvalidOptionError } from '../errors.js';
import { HostMatcher, hostPatternProblem } from './host-match.js';
import type { LimitedClientOptions, PolicyOptions } from './options.js';
import type { StateStore } from './store.js';

const DAY_MS = 86_400_000;
const num = (min: number, max: number, exclusiveMin = false) => {
  const d = `a number ${exclusiveMin ? 'above' : 'from'} ${min} ${exclusiveMin ? 'and up to' : 'to'} ${max}`;
  const base = z.number({ error: d }).max(max, { error: d });
  return exclusiveMin ? base.gt(min, { error: d }) : base.min(min, { error: d });
};
const int = (min: number, max: number) => {
  const d = `an integer from ${min} to ${max}`;
  return z.number({ error: d }).int({ error: d }).min(min, { error: d }).max(max, { error: d });
};
const intOrInfinity = (min: number) => {
  const d = `an integer from ${min} up, or Infinity`;
  return z.union(
    [
      z.number({ error: d }).int({ error: d }).min(min, { error: d }),
      z.literal(Number.POSITIVE_INFINITY, { error: d }),
    ],
    { error: d },
  );
};
const msOrInfinity = () => {
  const d = 'a number of milliseconds above 0, or Infinity';
  return z.union(
    [z.number({ error: d }).gt(0, { error: d }), z.literal(Number.POSITIVE_INFINITY, { error: d })],
    { error: d },
  );
};
const fn = (d: string) =>
  z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function', { error: d });
const off = z.literal(false, { error: 'false or an object' });
/** `false` (the policy is off) or the policy's options. */
const offOr = <T extends z.ZodType>(schema: T) =>
  z.union([off, schema], { error: 'false or an object' }).optional();

const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const policySchema = z
  .object({
    rate: num(0, 1e9, true).optional(),
    burst: num(1, 1e9).optional(),
    concurrency: intOrInfinity(1).optional(),
    maxQueue: intOrInfinity(0).optional(),
    queueTimeoutMs: msOrInfinity().optional(),
    maxRetryAfterMs: num(0, 366 * DAY_MS).optional(),
    learnLimits: z.boolean({ error: 'true or false' }).optional(),
    coldStart: z
      .union([z.boolean(), z.object({ initialWindow: int(1, 1000).optional() }).strict()], {
        error: 'a boolean or { initialWindow }',
      })
      .optional(),
    waitJitter: z
      .object({ ratio: num(0, 1).optional(), maxMs: num(0, 3_600_000).optional() })
      .strict()
      .optional(),
    timeoutMs: msOrInfinity().optional(),
    attemptTimeoutMs: msOrInfinity().optional(),
    retry: offOr(
      z
        .object({
          retries: int(0, 100).optional(),
          baseDelayMs: num(0, DAY_MS).optional(),
          maxDelayMs: num(0, DAY_MS).optional(),
          shouldRetry: fn('a function (context) => boolean').optional(),
        })
        .strict(),
    ),
    retryBudget: offOr(
      z
        .object({
          ratio: num(0, 10).optional(),
          minPerSecond: num(0, 1e6).optional(),
          windowMs: num(10, DAY_MS).optional(),
        })
        .strict(),
    ),
    circuitBreaker: offOr(
      z
        .object({
          failureRatio: num(0, 1, true).optional(),
          minRequests: int(1, 1e9).optional(),
          windowMs: num(10, DAY_MS).optional(),
          consecutiveFailures: int(1, 1e9).optional(),
          coolDownMs: num(0, DAY_MS).optional(),
          maxCoolDownMs: num(0, DAY_MS).optional(),
          halfOpenProbes: int(1, 1000).optional(),
        })
        .strict(),
    ),
    idempotency: offOr(
      z
        .object({
          header: z
            .string({ error: 'a header name' })
            .regex(METHOD, { error: 'a header name' })
            .optional(),
          methods: z
            .array(z.string().regex(METHOD, { error: 'an HTTP method' }), {
              error: 'an array of HTTP methods',
            })
            .optional(),
        })
        .strict(),
    ),
    cost: z
      .union([num(0, 1e9), fn('a function (request) => number')], {
        error: 'a number from 0 to 1000000000, or a function',
      })
      .optional(),
  })
  .strict();

const optionsSchema = policySchema
  .extend({
    hosts: z.record(z.string(), policySchema, { error: 'an object of host patterns' }).optional(),
    headers: z
      .custom<HeadersInit>((v) => typeof v === 'object' && v !== null, {
        error: 'a Headers, an object or an array of pairs',
      })
      .superRefine((value, ctx) => {
        // What fetch would refuse on every call (a CR or LF in a value, a bad name) fails here.
        try {
          new Headers(value);
        } catch (error) {
          // The runtime's message quotes the value: keep a CR or LF in it visible, on one line.
          const reason = (error instanceof Error ? error.message : String(error))
            .replaceAll('\r', '\\r')
            .replaceAll('\n', '\\n');
          ctx.addIssue({ code: 'custom', message: `valid header fields (${reason})` });
        }
      })
      .optional(),
    fetch: fn('a fetch function').optional(),
    partition: fn('a function (request) => string | undefined').optional(),
    store: z
      .custom<StateStore>(
        (v) =>
          typeof v === 'object' &&
          v !== null &&
          typeof (v as StateStore).update === 'function' &&
          typeof (v as StateStore).delete === 'function',
        { error: 'a StateStore (update, delete)' },
      )
      .optional(),
    clock: z
      .custom<Clock>(
        (v) =>
          typeof v === 'object' &&
          v !== null &&
          ['now', 'sleep', 'random'].every(
            (k) => typeof (v as Record<string, unknown>)[k] === 'function',
          ),
        { error: 'a Clock (now, sleep, random)' },
      )
      .optional(),
    maxHosts: int(1, 1e7).optional(),
    hostIdleMs: num(1, 366 * DAY_MS).optional(),
  })
  .strict();

/**
 * For a union that failed, the issue of the branch that got furthest into the value (`retry:
 * { retries: -1 }` fails in the object branch at `retries`, not at `retry`), with its full path.
 */
function deepest(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union') return issue;
  let best: z.core.$ZodIssue | undefined;
  for (const branch of issue.errors) {
    for (const sub of branch) {
      const candidate = deepest(sub);
      if (candidate.path.length > (best?.path.length ?? 0)) best = candidate;
    }
  }
  return best ? { ...best, path: [...issue.path, ...best.path] } : issue;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key))
      out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out || 'options';
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function show(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (value === undefined) return 'undefined';
  try {
    const text = JSON.stringify(value);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  } catch {
    return String(value);
  }
}

/**
 * Validates user options. Throws {@link InvalidOptionError} naming the option, the value given and
 * what is allowed: `invalid option hosts["api.example.com"].rate: must be a number above 0 and up
 * to 1000000000 (got -1)`.
 */
export function parseOptions(options: unknown): LimitedClientOptions {
  const result = optionsSchema.safeParse(options ?? {});
  if (!result.success) {
    const issue = deepest(result.error.issues[0] as z.core.$ZodIssue);
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => formatPath([...issue.path, k]));
      throw new InvalidOptionError(keys.join(', '), 'unknown option (check the spelling)');
    }
    const name = formatPath(issue.path);
    throw new InvalidOptionError(
      name,
      `must be ${issue.message} (got ${show(valueAt(options, issue.path))})`,
    );
  }
  const parsed = options as LimitedClientOptions | undefined;
  for (const pattern of Object.keys(parsed?.hosts ?? {})) {
    const problem = hostPatternProblem(pattern);
    if (problem) throw new InvalidOptionError(`hosts[${JSON.stringify(pattern)}]`, problem);
  }
  checkBurst(parsed ?? {}, 'options');
  for (const [pattern, host] of Object.entries(parsed?.hosts ?? {})) {
    checkBurst({ ...parsed, ...host }, `hosts[${JSON.stringify(pattern)}]`);
  }
  checkBurstHasRate(parsed ?? {});
  return parsed ?? {};
}

/**
 * `burst` sizes the bucket of `rate`: without a rate it would be ignored, so it is refused. The
 * global `burst` is fine when a rate is set globally or in any host entry; a host entry's `burst`
 * when a rate reaches some host it applies to: from a less specific entry that applies too, or
 * from a more specific one it applies under (`*.example.com: { burst }` with
 * `api.example.com: { rate }`).
 */
function checkBurstHasRate(options: LimitedClientOptions): void {
  const entries = Object.entries(options.hosts ?? {});
  const problem = 'has no effect without rate (units per second): set rate as well';
  if (
    options.burst !== undefined &&
    options.rate === undefined &&
    !entries.some(([, host]) => host.rate !== undefined)
  ) {
    throw new InvalidOptionError('burst', `${problem} (got ${options.burst})`);
  }
  if (options.rate !== undefined) return;
  const matcher = new HostMatcher(options.hosts ?? {});
  // The entries that apply to every host an entry covers (itself included). A wildcard stands for
  // itself: its suffixes are the wildcards above it, and no exact entry is named `*.…`.
  const layersOf = new Map(
    entries.map(([pattern, host]) => {
      const key = pattern.toLowerCase();
      const hostname = key.startsWith('*.') ? key : key.replace(/:\d+$/, '');
      return [host, matcher.match(hostname, key)] as const;
    }),
  );
  for (const [pattern, host] of entries) {
    if (host.burst === undefined || host.rate !== undefined) continue;
    const ratedAbove = layersOf.get(host)?.some((layer) => layer.rate !== undefined);
    const ratedBelow = entries.some(
      ([, other]) => other.rate !== undefined && layersOf.get(other)?.includes(host),
    );
    if (!ratedAbove && !ratedBelow) {
      throw new InvalidOptionError(
        `hosts[${JSON.stringify(pattern)}].burst`,
        `${problem} (got ${host.burst})`,
      );
    }
  }
}

function checkBurst(options: PolicyOptions, where: string): void {
  if (typeof options.cost === 'number' && options.rate !== undefined) {
    const burst = options.burst ?? Math.max(1, Math.ceil(options.rate));
    if (options.cost > burst) {
      throw new InvalidOptionError(
        `${where}.cost`,
        `must not exceed burst ${burst} (got ${options.cost}): such a request could never be sent`,
      );
    }
  }
}

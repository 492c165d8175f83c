/**
 * Generated hostile answers for the client's property test: a status, header lines of every family
 * the parser reads (with hostile names, numbers, dates and JSON-ish junk, fields repeated), fresh
 * policy names minted when the answer is served, a body, and now and then a dropped connection or
 * an answer later than the attempt's timeout. Answers are plain data, so fast-check can shrink
 * them; {@link renderAnswer} turns one into what `scriptedServer` sends.
 */
import fc from 'fast-check';
import { PROTOTYPE_NAMES, type Scripted } from './helpers.js';

/** A header line as the server writes it. `%F` anywhere in it becomes a fresh name when served. */
export type Line = [name: string, value: string];

/** Fresh IETF policies added to an answer, each named anew when it is served. */
export interface FreshPolicies {
  count: number;
  q: string;
  w: string;
  r: string;
  t: string;
}

/** One generated answer. */
export interface Answer {
  /** `drop`: the socket is destroyed unanswered; `late`: answered after `lateMs`. */
  mode: 'answer' | 'drop' | 'late';
  status: number;
  lines: Line[];
  fresh?: FreshPolicies;
  body: string;
}

/** Marks a place in a line where {@link renderAnswer} writes a fresh name. */
export const FRESH = '%F';

/** How late a `late` answer comes, in milliseconds (above the property's attempt timeout). */
export const LATE_MS = 150;

// Node refuses header values with CR, LF or NUL (and below space, but for tab), and above 0xFF.
const VALUE_CHARS = [
  '\t',
  ...Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)),
  '\x80',
  '\xe9',
  '\xff',
];
const TOKEN_CHARS = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
  ...`!#$%&'*+-.^_\`|~`,
];

/** Any header value Node lets a server send. */
const junk = fc.string({ unit: fc.constantFrom(...VALUE_CHARS), maxLength: 40 });
/** A header-name token. */
const token = fc.string({ unit: fc.constantFrom(...TOKEN_CHARS), minLength: 1, maxLength: 12 });

/** A name a server might choose: one of `Object.prototype`'s, a token, or a fresh one. */
const name = fc.oneof(
  { arbitrary: fc.constantFrom(...PROTOTYPE_NAMES), weight: 3 },
  { arbitrary: token, weight: 2 },
  { arbitrary: fc.constant(FRESH), weight: 2 },
);

/** JSON-ish junk, the kind a confused proxy or a hostile server writes into a header. */
const jsonish = fc.oneof(
  fc.constantFrom(
    '{"__proto__":{"remaining":5,"limit":1}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '[1,2,3]',
    'null',
    'true',
    '{"limit":10,"remaining":-1}',
    '"__proto__";r=5;t=30',
    '__proto__=1',
    '{}',
  ),
  fc.json({ maxDepth: 2 }).map((s) => s.replace(/[^\t\x20-\x7e]/g, '')),
);

/** Numbers as text: mostly plausible counts, then every kind of hostile one. */
export const numberText = fc.oneof(
  { arbitrary: fc.nat({ max: 100 }).map(String), weight: 8 },
  { arbitrary: fc.integer().map(String), weight: 2 },
  { arbitrary: fc.double().map(String), weight: 1 },
  { arbitrary: fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String), weight: 1 },
  {
    arbitrary: fc.constantFrom(
      'NaN',
      'Infinity',
      '-Infinity',
      '1e300',
      '1e999',
      '-1',
      '-0',
      '0x10',
      '1_000',
      '9'.repeat(400),
      '1e3',
      '2.5',
      '597.0',
      '',
      ' 7 ',
    ),
    weight: 2,
  },
);

/** Dates as text: near now, far away, impossible, or junk dressed as a date. */
const dateText = fc
  .oneof(
    fc.integer({ min: -3_600_000, max: 3_600_000 }).map((ms) => new Date(Date.now() + ms)),
    fc.date({ noInvalidDate: true }),
  )
  .chain((d) =>
    fc.constantFrom(d.toUTCString(), d.toISOString(), String(Math.floor(d.getTime() / 1000))),
  );
const hostileDate = fc.oneof(
  dateText,
  fc.constantFrom(
    'Thu, 01 Jan 1970 00:00:00 GMT',
    'Fri, 31 Dec 9999 23:59:59 GMT',
    'Sat, 01 Jan 0000 00:00:00 GMT',
    'Mon, 32 Foo 2020 99:99:99 GMT',
    'Wed, 21 Oct 2015 07:28:00 GMT; junk',
    'Sunday, 06-Nov-94 08:49:37 GMT',
    'Sun Nov  6 08:49:37 1994',
    '+275760-09-13T00:00:00.000Z',
    '2026-02-30T25:61:61Z',
  ),
);

/** `Retry-After` in every form. */
const retryAfter = fc.oneof(
  numberText,
  hostileDate,
  junk,
  fc.constantFrom('1e300', '0', '0.5', '-5', '120', '3600', '86400000', '1s', 'Infinity'),
);

/** A duration as OpenAI writes one (`6m0s`), or not. */
const duration = fc.oneof(
  fc
    .tuple(fc.nat(99), fc.nat(59), fc.nat(999))
    .map(([m, s, ms]) => `${m}m${s}s`.replace(/^0m/, '') + (ms > 900 ? `${ms}ms` : '')),
  fc.nat(5000).map((ms) => `${ms}ms`),
  fc.constantFrom('1h2m3.5s', '1e300s', '-1s', 's', '1x', '6m0s', '0s'),
  numberText,
);

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });

/** Header lines from optional fields, each maybe repeated with another value. */
function fields(spec: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<Line[]> {
  const entries = Object.entries(spec).map(([field, arb]) =>
    fc
      .tuple(maybe(arb), maybe(arb))
      .map(([a, b]): Line[] => [
        ...(a === undefined ? [] : [[field, a] as Line]),
        ...(a !== undefined && b !== undefined ? [[field, b] as Line] : []),
      ]),
  );
  return fc.tuple(...entries).map((parts) => parts.flat());
}

/** A structured-field string holding a name (quotes and backslashes dropped). */
const sfString = (n: string) => `"${n.replace(/["\\]/g, '')}"`;

const ietfItem = fc.record({
  name,
  bare: fc.boolean(),
  q: numberText,
  w: numberText,
  qu: maybe(fc.constantFrom('"requests"', '"concurrent-requests"', '"content-bytes"', 'x', '1')),
  r: numberText,
  t: numberText,
});

/** IETF `RateLimit-Policy` and `RateLimit`, one or both, with junk among the items. */
const ietf = fc
  .tuple(fc.array(ietfItem, { maxLength: 6 }), fc.array(jsonish, { maxLength: 2 }), fc.nat(3))
  .map(([items, junkItems, which]): Line[] => {
    const label = (i: (typeof items)[number]) => (i.bare ? i.name : sfString(i.name));
    const policy = items.map(
      (i) => `${label(i)};q=${i.q};w=${i.w}${i.qu === undefined ? '' : `;qu=${i.qu}`}`,
    );
    const left = items.map((i) => `${label(i)};r=${i.r};t=${i.t}`);
    const lines: Line[] = [];
    if (which !== 1) lines.push(['RateLimit-Policy', [...policy, ...junkItems].join(', ')]);
    if (which !== 2) lines.push(['RateLimit', left.join(', ')]);
    for (const j of junkItems.slice(1)) lines.push(['RateLimit', j]);
    return lines;
  });

const draft7 = fields({
  RateLimit: fc
    .tuple(numberText, numberText, numberText)
    .map(([l, r, t]) => `limit=${l}, remaining=${r}, reset=${t}`),
  'RateLimit-Policy': fc.tuple(numberText, numberText).map(([q, w]) => `${q};w=${w}`),
});

const draft6 = fields({
  'RateLimit-Limit': numberText,
  'RateLimit-Remaining': numberText,
  'RateLimit-Reset': fc.oneof(numberText, hostileDate),
  'RateLimit-Policy': fc.tuple(numberText, numberText).map(([q, w]) => `${q};w=${w}`),
});

const xRateLimit = fields({
  'X-RateLimit-Limit': numberText,
  'X-RateLimit-Remaining': numberText,
  'X-RateLimit-Reset': fc.oneof(numberText, hostileDate, duration),
  'X-RateLimit-Used': numberText,
});

const xRateLimitHyphenated = fields({
  'x-rate-limit-limit': numberText,
  'x-rate-limit-remaining': numberText,
  'x-rate-limit-reset': fc.oneof(numberText, hostileDate),
  'X-Rate-Limit': numberText,
});

/** GitHub: X-RateLimit-* told apart by `x-ratelimit-resource`, a name the server chooses. */
const github = fc
  .tuple(xRateLimit, name)
  .map(([lines, resource]): Line[] => [...lines, ['x-ratelimit-resource', resource]]);

/** Discord: a bucket name the server chooses, resets as fractions of seconds. */
const discord = fields({
  'x-ratelimit-bucket': name,
  'x-ratelimit-limit': numberText,
  'x-ratelimit-remaining': numberText,
  'x-ratelimit-reset': fc.oneof(numberText, fc.double({ min: 0, max: 2e10 }).map(String)),
  'x-ratelimit-reset-after': fc.oneof(numberText, fc.double({ min: -10, max: 1e6 }).map(String)),
  'x-ratelimit-scope': fc.constantFrom('user', 'global', 'shared', '__proto__'),
  'x-ratelimit-global': fc.constantFrom('true', 'false', 'TRUE', '1'),
});

/** OpenAI and its copies: one policy per suffix of the field name; suffixes the server chooses. */
const openai = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom('requests', 'tokens', 'input-tokens'), name),
      numberText,
      numberText,
      duration,
    ),
    { maxLength: 4 },
  )
  .map((dims) =>
    dims.flatMap(([suffix, limit, remaining, reset]): Line[] => [
      [`x-ratelimit-limit-${suffix}`, limit],
      [`x-ratelimit-remaining-${suffix}`, remaining],
      [`x-ratelimit-reset-${suffix}`, reset],
    ]),
  );

/** Anthropic: one policy per dimension in the field name, resets as RFC 3339. */
const anthropic = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom('requests', 'tokens', 'output-tokens'), name),
      numberText,
      numberText,
      hostileDate,
    ),
    { maxLength: 4 },
  )
  .map((dims) =>
    dims.flatMap(([dim, limit, remaining, reset]): Line[] => [
      [`anthropic-ratelimit-${dim}-limit`, limit],
      [`anthropic-ratelimit-${dim}-remaining`, remaining],
      [`anthropic-ratelimit-${dim}-reset`, reset],
    ]),
  );

const shopify = fields({
  'X-Shopify-Shop-Api-Call-Limit': fc.oneof(
    fc.tuple(numberText, numberText).map(([a, b]) => `${a}/${b}`),
    junk,
  ),
});

/** Salesforce: members named by the server, `used/limit`. */
const salesforce = fc
  .array(
    fc
      .tuple(fc.oneof(name, fc.constantFrom('api-usage', 'api-bursts')), numberText, numberText)
      .map(([n, used, limit]) => `${n}=${used}/${limit}(appName=x)`),
    { maxLength: 20 },
  )
  .map((members): Line[] => [['Sforce-Limit-Info', members.join('; ')]]);

const hubspot = fields({
  'X-HubSpot-RateLimit-Daily': numberText,
  'X-HubSpot-RateLimit-Daily-Remaining': numberText,
  'X-HubSpot-RateLimit-Interval-Milliseconds': numberText,
  'X-HubSpot-RateLimit-Max': numberText,
  'X-HubSpot-RateLimit-Remaining': numberText,
  'X-HubSpot-RateLimit-Secondly': numberText,
  'X-HubSpot-RateLimit-Secondly-Remaining': numberText,
});

/** Azure Resource Manager: one policy per field name, and the server names the fields. */
const azure = fc
  .array(fc.tuple(name, numberText), { maxLength: 6 })
  .map((pairs) =>
    pairs.map(([n, v]): Line => [`x-ms-ratelimit-remaining-${n.replace(/[^!-~]/g, '')}`, v]),
  );

const retryHints = fields({
  'Retry-After': retryAfter,
  'retry-after-ms': numberText,
  'x-ms-retry-after-ms': numberText,
});

const date = fields({ Date: hostileDate });

/** Lines of no family, with hostile names. */
const strayLines = fc.array(
  fc.tuple(fc.oneof(fc.constantFrom(...PROTOTYPE_NAMES), token), fc.oneof(junk, jsonish)),
  { maxLength: 4 },
);

/** Every family the parser reads; an answer mixes a few of them. */
const families = [
  ietf,
  draft7,
  draft6,
  xRateLimit,
  xRateLimitHyphenated,
  github,
  discord,
  openai,
  anthropic,
  shopify,
  salesforce,
  hubspot,
  azure,
  retryHints,
  date,
  strayLines,
];

const headerLines = fc
  .array(fc.oneof(...families), { minLength: 1, maxLength: 3 })
  .map((groups) => groups.flat().slice(0, 40));

const status = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      200,
      201,
      204,
      301,
      302,
      304,
      307,
      400,
      401,
      403,
      404,
      409,
      418,
      429,
      500,
      502,
      503,
      504,
    ),
    weight: 6,
  },
  { arbitrary: fc.constantFrom(200, 429, 403, 503), weight: 3 },
  { arbitrary: fc.integer({ min: 200, max: 599 }), weight: 1 },
);

const fresh = fc.record({
  count: fc.integer({ min: 1, max: 150 }),
  q: numberText,
  w: numberText,
  r: numberText,
  t: numberText,
});

const body = fc.oneof(
  { arbitrary: fc.constant(''), weight: 3 },
  { arbitrary: junk, weight: 2 },
  { arbitrary: jsonish, weight: 1 },
  { arbitrary: fc.nat(100_000).map((n) => 'x'.repeat(n)), weight: 1 },
);

/** One generated answer; see {@link Answer}. */
export const answer: fc.Arbitrary<Answer> = fc.record(
  {
    mode: fc.oneof(
      { arbitrary: fc.constant('answer' as const), weight: 40 },
      { arbitrary: fc.constant('drop' as const), weight: 2 },
      { arbitrary: fc.constant('late' as const), weight: 1 },
    ),
    status,
    lines: headerLines,
    fresh: maybe(fresh),
    body,
  },
  { requiredKeys: ['mode', 'status', 'lines', 'body'] },
);

/**
 * The scripted answer for `a`: fresh names minted from `serial` (a counter shared by every answer,
 * so no name is ever seen twice), a relative `Location` on redirects.
 */
export function renderAnswer(a: Answer, serial: { next: number }): Scripted {
  const freshName = () => `f${serial.next++}`;
  const headers: [string, string][] = a.lines.map(([n, v]) => [
    n.replaceAll(FRESH, freshName),
    v.replaceAll(FRESH, freshName),
  ]);
  if (a.fresh) {
    const { count, q, w, r, t } = a.fresh;
    const names = Array.from({ length: count }, freshName);
    headers.push(['RateLimit-Policy', names.map((n) => `"${n}";q=${q};w=${w}`).join(', ')]);
    headers.push(['RateLimit', names.map((n) => `"${n}";r=${r};t=${t}`).join(', ')]);
  }
  if (a.status >= 300 && a.status < 400) headers.push(['Location', '/redirected']);
  return { status: a.status, headers, body: a.body };
}

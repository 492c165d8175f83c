/**
 * The one scenario every runtime runs against the mock server (see `server.ts` for its routes),
 * with the built core (`dist/index.js`) unchanged. Plain JavaScript on purpose: Node, Deno, Bun,
 * workerd and a browser page load this very file, with no build step of its own.
 *
 * `watchNodeGlobals()` must run before the core is imported: it replaces the globals only Node has
 * (`process`, `Buffer`...) with getters that record who reads them, so that the result tells
 * whether the core touched one (the ones a runtime lacks stay `undefined`, as before).
 *
 * `runScenario(core, { baseUrl, deadUrl, watch })` resolves to a JSON-able result: what the client
 * learned from the headers (`paced`), how it honoured a hold (`hold`), how it retried a POST with
 * its idempotency key after an attempt timeout (`idempotent`) and after a connection reset
 * (`reset`), whether it retried a refused connection (`refused`, on `deadUrl` where nothing
 * listens), and which Node-only globals were present, absent and touched.
 */

/** Globals of Node that a runtime-agnostic core must not need. */
export const NODE_GLOBALS = [
  'process',
  'Buffer',
  'global',
  'require',
  'module',
  'setImmediate',
  'clearImmediate',
  '__filename',
  '__dirname',
];

/** Marks of the core's own files (and its dependencies') in a stack trace. */
const CORE_MARKS = ['/dist/', '/node_modules/structured-headers/', 'limited-client-core.js'];

/**
 * The one read of a Node global the core makes on purpose: `process`, by the function that looks
 * for `process.getBuiltinModule('node:diagnostics_channel')` (src/client/host/diag-channels.ts), once
 * per load of the core. Counted apart (`probes`), and only when it is that function's own frame.
 */
const DIAGNOSTICS_PROBE = { name: 'process', frame: 'findDiagnosticsChannel' };

/** Whether a touch is the core's {@link DIAGNOSTICS_PROBE}. */
function isDiagnosticsProbe(touch) {
  return (
    touch.name === DIAGNOSTICS_PROBE.name &&
    readerFrame(touch.stack).includes(DIAGNOSTICS_PROBE.frame)
  );
}

/** Installs the recording getters; returns what `runScenario` reports from. */
export function watchNodeGlobals() {
  const watch = { present: [], absent: [], unwatchable: [], touches: [] };
  for (const name of NODE_GLOBALS) {
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, name);
    const present = descriptor !== undefined || name in globalThis;
    (present ? watch.present : watch.absent).push(name);
    let value = present ? globalThis[name] : undefined;
    try {
      Object.defineProperty(globalThis, name, {
        configurable: true,
        enumerable: false,
        get() {
          watch.touches.push({ name, stack: String(new Error('touch').stack) });
          return value;
        },
        set(next) {
          value = next;
        },
      });
    } catch {
      watch.unwatchable.push(name);
    }
  }
  // The watch must see a read: this one is ours, not the core's, and is counted apart.
  void globalThis.Buffer;
  watch.selfProbe = watch.touches.some((t) => t.name === 'Buffer');
  watch.touches.length = 0;
  return watch;
}

/**
 * The frame that read a watched global: the one after the getter's (in V8's `at f (url)` and in
 * JavaScriptCore's `f@url` formats alike). A read by the runtime's own code (Node's fetch reads
 * `Buffer`) is the runtime's business; a read by the core's files is what the check is about.
 */
function readerFrame(stack) {
  const frames = stack
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('Error'));
  const getter = frames.findIndex((frame) => frame.includes('scenario.js'));
  return getter < 0 ? '' : (frames[getter + 1] ?? '');
}

function collect(client, names) {
  const events = [];
  for (const name of names) {
    client.on(name, (e) => {
      events.push({
        event: name,
        status: e.status,
        reason: e.reason,
        delaySource: e.delaySource,
        delayMs: e.delayMs,
        retryAfterMs: e.retryAfterMs,
        policy: e.policy,
        error: e.error === undefined ? undefined : String(e.error?.name ?? e.error),
      });
    });
  }
  return events;
}

function hostOf(client, baseUrl) {
  return client.stats().hosts[new URL(baseUrl).origin];
}

/**
 * Ten GETs at once on `/paced` (a token bucket of 3, refilled at 5 per second, declared in the
 * IETF fields): a client that reads the headers learns the policy and paces them, 0 x 429.
 */
async function paced(core, baseUrl) {
  const client = new core.LimitedClient(baseUrl);
  const events = collect(client, ['rate-limited', 'held']);
  const responses = await Promise.all(Array.from({ length: 10 }, () => client.get('/paced')));
  const statuses = responses.map((r) => r.status);
  await Promise.all(responses.map((r) => r.arrayBuffer()));
  const host = hostOf(client, baseUrl);
  const exposed = responses.map((r) => r.headers.get('ratelimit-policy')).find((v) => v) ?? null;
  await client.close();
  return {
    statuses,
    mode: host.mode,
    policies: host.policies.map((p) => ({ name: p.name, limit: p.limit })),
    rateLimited: host.rateLimited,
    heldReasons: [...new Set(events.filter((e) => e.event === 'held').map((e) => e.reason))],
    ratelimitPolicyHeader: exposed,
  };
}

/**
 * Two GETs at once on `/hold` (a token bucket of 1, refilled at 0.25 per second, no rate-limit
 * fields): the second gets 429 with `Retry-After: 4` and must wait that long before its retry,
 * which the server admits only if it came late enough.
 */
async function hold(core, baseUrl) {
  const client = new core.LimitedClient(baseUrl, { retry: { retries: 4 } });
  const events = collect(client, ['rate-limited', 'retry', 'give-up']);
  const responses = await Promise.all([client.get('/hold'), client.get('/hold')]);
  await Promise.all(responses.map((r) => r.arrayBuffer()));
  const host = hostOf(client, baseUrl);
  await client.close();
  return {
    statuses: responses.map((r) => r.status),
    rateLimited: host.rateLimited,
    retries: host.retries,
    events,
    retryAfterHeader: responses.map((r) => r.headers.get('retry-after')),
  };
}

/**
 * One POST on `/pay`, whose handler works 1200 ms, sent with a 400 ms attempt timeout to a host
 * declared to honour keys (a write to any other host is not sent again after a timeout): the first
 * attempt times out while the server goes on; the retries carry the same `Idempotency-Key`, so the
 * server answers 409 while the first is running, then replays its response. One side effect.
 */
async function idempotent(core, baseUrl) {
  const client = new core.LimitedClient(baseUrl, {
    retry: { retries: 30, baseDelayMs: 100, maxDelayMs: 300 },
    retryBudget: { ratio: 1, minPerSecond: 20 },
    idempotency: { honoured: true },
  });
  const events = collect(client, ['retry', 'give-up']);
  const response = await client.post('/pay', { amount: 42 }, { attemptTimeoutMs: 400 });
  const body = await response.json();
  await client.close();
  return {
    status: response.status,
    execution: body.execution ?? null,
    replayedHeader: response.headers.get('idempotent-replayed'),
    retries: events.filter((e) => e.event === 'retry').length,
    retryCauses: [
      ...new Set(events.filter((e) => e.event === 'retry').map((e) => e.status ?? e.error)),
    ],
  };
}

/**
 * One POST on `/charge`, to a host declared to honour keys, whose connection is reset once after
 * the side effect ran: the client sees the runtime's own network error (each says it differently),
 * retries with the same `Idempotency-Key`, and the server replays the stored answer. One side
 * effect.
 */
async function reset(core, baseUrl) {
  const client = new core.LimitedClient(baseUrl, { idempotency: { honoured: true } });
  const events = collect(client, ['retry', 'give-up']);
  try {
    const response = await client.post('/charge', { amount: 7 });
    const body = await response.json();
    return {
      status: response.status,
      execution: body.execution ?? null,
      retries: events.filter((e) => e.event === 'retry').map((e) => e.error ?? e.status),
    };
  } catch (error) {
    return {
      status: null,
      error: `${error?.name}: ${error?.message} (cause: ${error?.cause?.message ?? 'none'})`,
      retries: events.filter((e) => e.event === 'retry').map((e) => e.error ?? e.status),
    };
  } finally {
    await client.close();
  }
}

/**
 * One GET to `deadUrl`, where nothing listens: the runtime's "connection refused" must read as a
 * transient network failure, so the client retries it (twice, quickly) before it rejects.
 */
async function refused(core, deadUrl) {
  const client = new core.LimitedClient(deadUrl, {
    retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 20 },
  });
  const events = collect(client, ['retry']);
  try {
    const response = await client.get('/nobody');
    return { status: response.status, retries: events.length };
  } catch (error) {
    return { error: String(error?.name), retries: events.length };
  } finally {
    await client.close();
  }
}

/** Runs the parts in turn, then reports the globals. */
export async function runScenario(core, { baseUrl, deadUrl, watch }) {
  const result = {
    exports: ['LimitedClient', 'wrapFetch', 'parseRateLimitHeaders'].filter(
      (name) => typeof core[name] === 'function',
    ),
    paced: await paced(core, baseUrl),
    hold: await hold(core, baseUrl),
    idempotent: await idempotent(core, baseUrl),
    reset: await reset(core, baseUrl),
    refused: await refused(core, deadUrl),
  };
  const touchedByCore = watch.touches.filter((t) => {
    const reader = readerFrame(t.stack);
    return CORE_MARKS.some((m) => reader.includes(m)) && !isDiagnosticsProbe(t);
  });
  result.globals = {
    present: watch.present,
    absent: watch.absent,
    unwatchable: watch.unwatchable,
    selfProbe: watch.selfProbe,
    touchedByCore: touchedByCore.map((t) => ({ name: t.name, stack: t.stack.slice(0, 600) })),
    probes: watch.touches.filter(isDiagnosticsProbe).length,
    readers: [...new Set(watch.touches.map((t) => `${t.name} <- ${readerFrame(t.stack)}`))].slice(
      0,
      20,
    ),
    touchedElsewhere: [...new Set(watch.touches.map((t) => t.name))],
  };
  return result;
}

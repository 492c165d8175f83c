/**
 * The mock server's metrics: who is limited and why, how long deciding takes, how its stores fare,
 * what Retry-After it sends, which keys are nearly spent, and the heaviest keys (space-saving
 * sketches). Recorded by one call per decision (`decided`) from the request path; read as
 * Prometheus text (`render`). Every map is bounded: routes and policies by the configuration, keys
 * by {@link MAX_NEAR_KEYS} and the sketches' capacity. See docs/observability.md.
 *
 * @module
 */
import type { Admission } from '../http/admission.js';
import { mostRestrictive } from '../http/rate-limit-headers.js';
import { Histogram } from './histogram.js';
import { type Family, type Labels, renderPrometheus } from './prometheus.js';
import { SpaceSaving } from './space-saving.js';
import { histogramViews, type MetricsView } from './view.js';

/** Where the mock server answers its metrics (before any route), with `metrics: true`. */
export const METRICS_PATH = '/__metrics';
/** Longest key written as a label value; a longer one is cut (the count stays the key's own). */
export const MAX_KEY_LABEL_CHARS = 256;
/** Keys tracked as nearly spent at once, over every route and policy; past it, new ones are not. */
export const MAX_NEAR_KEYS = 10_000;
/** Keys each heavy-hitters sketch keeps. Its error bound is N / capacity (N: the weight offered). */
export const SKETCH_CAPACITY = 1000;
/** Keys each sketch exposes, heaviest first. */
export const TOP_KEYS = 10;
/** A key is nearly spent when it has less than this share of its limit left. */
export const NEAR_EXHAUSTION_SHARE = 0.1;

/** Decision latency buckets, seconds (10 µs to 1 s). */
const DECISION_BUCKETS = [
  0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1,
];
/** Retry-After buckets, seconds. */
const RETRY_AFTER_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600];

/** What a decision concerned: the route's label and its limits' names, in order. */
export interface DecidedRoute {
  label: string;
  limits: readonly { name: string }[];
  /** The route's `Retry-After` format: `'none'` sends none. */
  retryAfter: string;
}

class Counter {
  readonly #series = new Map<string, { labels: Labels; value: number }>();
  /** The series as objects (label names are this module's own, never data). */
  rows(): Record<string, string | number>[] {
    return this.series().map(({ labels, value }) => ({ ...Object.fromEntries(labels), value }));
  }
  add(labels: Labels, value = 1): void {
    const id = labels.map(([, v]) => v).join('\u0000');
    const entry = this.#series.get(id);
    if (entry) entry.value += value;
    else this.#series.set(id, { labels, value });
  }
  series() {
    return [...this.#series.values()];
  }
}

/** See the module comment. */
export class ServerMetrics {
  readonly #requests = new Counter();
  readonly #rejections = new Counter();
  readonly #storeErrors = new Counter();
  readonly #failOpen = new Counter();
  readonly #failClosed = new Counter();
  readonly #decision = new Map<string, Histogram>();
  readonly #retryAfter = new Map<string, Histogram>();
  /** Per route and policy, the keys nearly spent and when each refills (epoch ms). */
  readonly #near = new Map<string, { labels: Labels; keys: Map<string, number> }>();
  #nearCount = 0;
  readonly byRequests = new SpaceSaving<string>(SKETCH_CAPACITY);
  readonly byCost = new SpaceSaving<string>(SKETCH_CAPACITY);

  /**
   * One decision: `keys[i]` and `costs[i]` of limit `i`, the request's `client` key (as in
   * `stats()`), the admission, how long it took (ms, store included), and the time (epoch ms).
   */
  decided(
    route: DecidedRoute,
    keys: readonly string[],
    costs: readonly number[],
    client: string,
    admission: Admission,
    elapsedMs: number,
    now: number,
  ): void {
    const r: [string, string] = ['route', route.label];
    histogramOf(this.#decision, route.label, DECISION_BUCKETS).record(elapsedMs / 1000);
    for (const failure of admission.failures) {
      const policy = route.limits[failure.limit]?.name ?? '';
      this.#storeErrors.add([r, ['policy', policy], ['operation', failure.operation]]);
    }
    if (admission.failedClosed) {
      this.#failClosed.add([r]);
      this.#requests.add([r, ['decision', 'failed_closed']]);
      const policy = route.limits[admission.failures[0]?.limit ?? 0]?.name ?? '';
      this.#rejections.add([r, ['policy', policy], ['reason', 'store_unavailable']]);
      return;
    }
    if (admission.failures.some((f) => f.operation === 'take')) this.#failOpen.add([r]);
    const cost = costs.reduce((sum, c) => Math.max(sum, c), 0);
    this.byRequests.offer(client, 1);
    this.byCost.offer(client, cost);
    for (const [i, report] of admission.reports.entries()) {
      if (report.limit > 0 && report.remaining < report.limit * NEAR_EXHAUSTION_SHARE) {
        this.#nearlySpent(route.label, report.name, keys[i] ?? '', now + report.resetMs);
      }
    }
    if (admission.allowed) {
      this.#requests.add([r, ['decision', 'allowed']]);
      return;
    }
    this.#requests.add([r, ['decision', 'rejected']]);
    const top = mostRestrictive(admission.reports, true);
    this.#rejections.add([r, ['policy', top.name], ['reason', 'limit']]);
    if (route.retryAfter !== 'none') {
      histogramOf(this.#retryAfter, route.label, RETRY_AFTER_BUCKETS).record(
        Math.ceil(top.retryAfterMs / 1000),
      );
    }
  }

  #nearlySpent(route: string, policy: string, key: string, until: number): void {
    const id = `${route}\u0000${policy}`;
    let entry = this.#near.get(id);
    if (!entry) {
      entry = {
        labels: [
          ['route', route],
          ['policy', policy],
        ],
        keys: new Map(),
      };
      this.#near.set(id, entry);
    }
    if (!entry.keys.has(key)) {
      if (this.#nearCount >= MAX_NEAR_KEYS) return;
      this.#nearCount++;
    }
    entry.keys.set(key, until);
  }

  /** Forgets the keys nearly spent whose limit refilled by `now` (epoch ms). */
  #ageNear(now: number): void {
    for (const entry of this.#near.values()) {
      for (const [key, until] of entry.keys) {
        if (until <= now) {
          entry.keys.delete(key);
          this.#nearCount--;
        }
      }
    }
  }

  /** The metrics as plain data at `now` (epoch ms): what the dashboard shows. */
  view(now: number): MetricsView {
    this.#ageNear(now);
    const hits = (sketch: SpaceSaving<string>) =>
      sketch.top(TOP_KEYS).map(({ key, count, error }) => ({
        key: key.slice(0, MAX_KEY_LABEL_CHARS),
        count,
        error,
      }));
    return {
      requests: this.#requests.rows(),
      rejections: this.#rejections.rows(),
      storeErrors: this.#storeErrors.rows(),
      failOpen: this.#failOpen.rows(),
      failClosed: this.#failClosed.rows(),
      decision: histogramViews(this.#decision),
      retryAfter: histogramViews(this.#retryAfter),
      nearlySpent: [...this.#near.values()].map(({ labels, keys }) => ({
        route: labels[0]?.[1] ?? '',
        policy: labels[1]?.[1] ?? '',
        keys: keys.size,
      })),
      topKeys: {
        requests: hits(this.byRequests),
        cost: hits(this.byCost),
        errorBound: {
          requests: this.byRequests.total / this.byRequests.capacity,
          cost: this.byCost.total / this.byCost.capacity,
        },
      },
    };
  }

  /** Every metric as Prometheus text; `now` (epoch ms) ages out keys no longer nearly spent. */
  render(now: number): string {
    this.#ageNear(now);
    const families: Family[] = [
      counter(
        'limited_client_server_requests_total',
        'Requests decided, by route and decision',
        this.#requests,
      ),
      counter(
        'limited_client_server_rejections_total',
        'Requests refused, by route, the policy that tripped and why',
        this.#rejections,
      ),
      histogram(
        'limited_client_server_decision_duration_seconds',
        'Time the limits took to decide a request, store round trips included',
        this.#decision,
      ),
      counter(
        'limited_client_server_store_errors_total',
        'Store calls that failed, by route, policy and operation',
        this.#storeErrors,
      ),
      counter(
        'limited_client_server_store_fail_open_total',
        'Requests decided on a local copy because the store failed (fail open)',
        this.#failOpen,
      ),
      counter(
        'limited_client_server_store_fail_closed_total',
        'Requests refused with 503 because the store failed (fail closed)',
        this.#failClosed,
      ),
      histogram(
        'limited_client_server_retry_after_seconds',
        'Retry-After sent with 429s, in whole seconds as sent',
        this.#retryAfter,
      ),
      {
        name: 'limited_client_server_keys_near_exhaustion',
        help: `Keys with less than ${NEAR_EXHAUSTION_SHARE * 100} % of a limit left, until it refills`,
        type: 'gauge',
        series: [...this.#near.values()].map((entry) => ({
          labels: entry.labels,
          value: entry.keys.size,
        })),
      },
      top(
        'limited_client_server_top_key_requests',
        'Requests of the heaviest keys (space-saving estimate)',
        this.byRequests,
      ),
      top(
        'limited_client_server_top_key_cost',
        'Weighted cost of the heaviest keys (space-saving estimate)',
        this.byCost,
      ),
      {
        name: 'limited_client_server_top_key_error_bound',
        help: 'The most a top-key estimate may exceed the truth: N / capacity of its sketch',
        type: 'gauge',
        series: [
          {
            labels: [['sketch', 'requests']],
            value: this.byRequests.total / this.byRequests.capacity,
          },
          { labels: [['sketch', 'cost']], value: this.byCost.total / this.byCost.capacity },
        ],
      },
    ];
    return renderPrometheus(families);
  }
}

function histogramOf(
  map: Map<string, Histogram>,
  route: string,
  bounds: readonly number[],
): Histogram {
  let h = map.get(route);
  if (!h) {
    h = new Histogram(bounds);
    map.set(route, h);
  }
  return h;
}

function counter(name: string, help: string, c: Counter): Family {
  return { name, help, type: 'counter', series: c.series() };
}

function histogram(name: string, help: string, map: Map<string, Histogram>): Family {
  const series: Family['series'] = [];
  for (const [route, h] of map) {
    const cumulative = h.cumulative();
    h.bounds.forEach((bound, i) => {
      series.push({
        labels: [
          ['route', route],
          ['le', String(bound)],
        ],
        value: cumulative[i] as number,
        suffix: '_bucket',
      });
    });
    series.push({
      labels: [
        ['route', route],
        ['le', '+Inf'],
      ],
      value: h.count,
      suffix: '_bucket',
    });
    series.push({ labels: [['route', route]], value: h.sum, suffix: '_sum' });
    series.push({ labels: [['route', route]], value: h.count, suffix: '_count' });
  }
  return { name, help, type: 'histogram', series };
}

function top(name: string, help: string, sketch: SpaceSaving<string>): Family {
  return {
    name,
    help,
    type: 'gauge',
    series: sketch.top(TOP_KEYS).map((hit) => ({
      labels: [['key', hit.key.slice(0, MAX_KEY_LABEL_CHARS)]],
      value: hit.count,
    })),
  };
}

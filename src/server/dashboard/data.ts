/**
 * The dashboard's JSON (`GET /__dashboard/data`): the server's `stats()`, its metrics as plain
 * data and the chart's timeline, in arrays (a route or a key is never an object key here, so a
 * page reads it without a prototype in the way). Everything in it is bounded by the configuration
 * (routes, limits) or by the metrics' own bounds (10 top keys of at most 256 characters).
 *
 * @module
 */
import type { CompiledRoute } from '../http/compile.js';
import type { HeldStats, MockServerStats } from '../http/stats.js';
import type { HistogramView, MetricsView } from '../metrics/view.js';
import type { TimelineView } from './timeline.js';

/** One limit of a route, with what the metrics say of it now. */
export interface LimitView {
  /** The policy's name, as in the headers. */
  name: string;
  /** What it allows, in words (`3 per 1 s, fixed-window`). */
  description: string;
  /** What it counts: `requests`, `tokens`..., `concurrent-requests`. */
  unit: string;
  /** Requests it refused (it was the one that tripped). */
  rejected: number;
  /** Keys with less than 10 % of it left, until it refills for them. */
  nearlySpent: number;
}

/** One route: its `stats()` counters (without its keys) and its limits. */
export interface RouteView {
  route: string;
  admitted: number;
  rejected: number;
  unavailable: number;
  serverErrors: number;
  resets: number;
  degraded: number;
  failedClosed: number;
  storeErrors: number;
  limits: LimitView[];
}

/** The whole of the dashboard's JSON. */
export interface DashboardData {
  /** The server's time of this snapshot, epoch ms. */
  now: number;
  /** Over all routes, as `stats()` gives them. */
  totals: { admitted: number; rejected: number; degraded: number; failedClosed: number };
  routes: RouteView[];
  timeline: TimelineView;
  /** `Retry-After` sent with 429s, per route, whole seconds. */
  retryAfter: HistogramView[];
  /** Time the limits took to decide, per route, seconds. */
  decision: HistogramView[];
  topKeys: MetricsView['topKeys'];
  /** The store's health: failed calls by route, policy and operation; fail-open and -closed. */
  store: Pick<MetricsView, 'storeErrors' | 'failOpen' | 'failClosed'>;
  /** What clients make the server hold now. */
  held: HeldStats;
}

/** Sums the `value` of the rows whose labels match `where`. */
function sum(rows: MetricsView['rejections'], where: Record<string, string>): number {
  let total = 0;
  for (const row of rows) {
    if (Object.entries(where).every(([name, value]) => row[name] === value)) {
      total += Number(row.value) || 0;
    }
  }
  return total;
}

/** Builds the dashboard's JSON from the server's parts at `now` (epoch ms). */
export function dashboardData(
  routes: readonly CompiledRoute[],
  stats: MockServerStats,
  metrics: MetricsView,
  timeline: TimelineView,
  now: number,
): DashboardData {
  const near = new Map(metrics.nearlySpent.map((n) => [`${n.route}\n${n.policy}`, n.keys]));
  return {
    now,
    totals: {
      admitted: stats.admitted,
      rejected: stats.rejected,
      degraded: stats.degraded,
      failedClosed: stats.failedClosed,
    },
    routes: routes.map(({ label, limits }) => {
      const r = stats.routes[label];
      return {
        route: label,
        admitted: r?.admitted ?? 0,
        rejected: r?.rejected ?? 0,
        unavailable: r?.unavailable ?? 0,
        serverErrors: r?.serverErrors ?? 0,
        resets: r?.resets ?? 0,
        degraded: r?.degraded ?? 0,
        failedClosed: r?.failedClosed ?? 0,
        storeErrors: r?.storeErrors ?? 0,
        limits: limits.map((limit) => ({
          name: limit.name,
          description: limit.description,
          unit: limit.unit,
          rejected: sum(metrics.rejections, { route: label, policy: limit.name, reason: 'limit' }),
          nearlySpent: near.get(`${label}\n${limit.name}`) ?? 0,
        })),
      };
    }),
    timeline,
    retryAfter: metrics.retryAfter,
    decision: metrics.decision,
    topKeys: metrics.topKeys,
    store: {
      storeErrors: metrics.storeErrors,
      failOpen: metrics.failOpen,
      failClosed: metrics.failClosed,
    },
    held: stats.held,
  };
}

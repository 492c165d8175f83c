/**
 * The mock server's live dashboard (`dashboard: true`, `--dashboard`): `GET /__dashboard` answers
 * the page, `GET /__dashboard/data` its JSON, before any route and counted in none. The chart's
 * timeline is sampled at the end of each second on the server's clock while the server runs, and
 * at each read of the JSON. See docs/mock-server.md, "The dashboard".
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../shared/clock.js';
import type { CompiledRoute } from '../http/compile.js';
import { httpDate } from '../http/exchange.js';
import type { MockServerStats, StatsRecorder } from '../http/stats.js';
import type { ServerMetrics } from '../metrics/server-metrics.js';
import { type DashboardData, dashboardData } from './data.js';
import { DASHBOARD_CSP, DASHBOARD_DATA_PATH, DASHBOARD_HTML } from './page.js';
import { DASHBOARD_BUCKET_MS, Timeline } from './timeline.js';

/** Where the mock server answers its dashboard page, with `dashboard: true`. */
export const DASHBOARD_PATH = '/__dashboard';
export { DASHBOARD_DATA_PATH };

/** What the dashboard reads of the server. */
export interface DashboardSource {
  routes: readonly CompiledRoute[];
  /** The route counters, sampled every second. */
  recorder: StatsRecorder;
  /** `stats()`. */
  stats(): MockServerStats;
  metrics: ServerMetrics;
  clock: Clock;
  /** Aborted when the server closes: the sampling stops. */
  closing: AbortSignal;
}

/** See the module comment. */
export class Dashboard {
  readonly #source: DashboardSource;
  readonly #timeline = new Timeline();

  constructor(source: DashboardSource) {
    this.#source = source;
    this.#sample();
    void this.#run();
  }

  /** The JSON the page polls, sampled now. */
  data(): DashboardData {
    const { routes, metrics, clock } = this.#source;
    this.#sample();
    const now = clock.now();
    return dashboardData(
      routes,
      this.#source.stats(),
      metrics.view(now),
      this.#timeline.view(),
      now,
    );
  }

  /** Answers `req` when it asks for the page or its data; returns whether it did. */
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'GET') return false;
    const date = httpDate(this.#source.clock);
    if (req.url === DASHBOARD_PATH) {
      res.writeHead(200, [
        'Content-Type',
        'text/html; charset=utf-8',
        'Content-Security-Policy',
        DASHBOARD_CSP,
        'X-Content-Type-Options',
        'nosniff',
        'Cache-Control',
        'no-store',
        'Date',
        date,
      ]);
      res.end(DASHBOARD_HTML);
      return true;
    }
    if (req.url === DASHBOARD_DATA_PATH) {
      res.writeHead(200, [
        'Content-Type',
        'application/json',
        'X-Content-Type-Options',
        'nosniff',
        'Cache-Control',
        'no-store',
        'Date',
        date,
      ]);
      res.end(JSON.stringify(this.data()));
      return true;
    }
    return false;
  }

  /** Samples the route counters into the bucket of `at` (epoch ms; default now). */
  #sample(at = this.#source.clock.now()): void {
    this.#timeline.sample(this.#source.recorder.routeTotals(), at);
  }

  /**
   * Samples at the end of each bucket until the server closes (its signal ends the sleep), into
   * that bucket: what came during a second is drawn in that second, even when the timer is late.
   */
  async #run(): Promise<void> {
    const { clock, closing } = this.#source;
    while (!closing.aborted) {
      const end = (Math.floor(clock.now() / DASHBOARD_BUCKET_MS) + 1) * DASHBOARD_BUCKET_MS;
      try {
        await clock.sleep(end - clock.now(), closing);
      } catch {
        return;
      }
      this.#sample(end - 1);
    }
  }
}

/**
 * The mock server's metrics as plain data, for the dashboard's JSON (`/__dashboard/data`): what
 * `ServerMetrics.view` returns. The Prometheus text (`render`) is the other way to read them.
 *
 * @module
 */
import type { Histogram } from './histogram.js';

/** A histogram as the dashboard reads it: per bucket (upper bounds, then the rest), sum, count. */
export interface HistogramView {
  route: string;
  bounds: readonly number[];
  /** Values per bucket, not cumulative; the last entry is above every bound. */
  counts: number[];
  sum: number;
  count: number;
}

/** The metrics as plain data, for the dashboard (`/__dashboard/data`); see `ServerMetrics.view`. */
export interface MetricsView {
  /** Each counter's series: its labels by name, and its value. */
  requests: Record<string, string | number>[];
  rejections: Record<string, string | number>[];
  storeErrors: Record<string, string | number>[];
  failOpen: Record<string, string | number>[];
  failClosed: Record<string, string | number>[];
  /** Decision latency per route, seconds. */
  decision: HistogramView[];
  /** `Retry-After` sent with 429s per route, whole seconds. */
  retryAfter: HistogramView[];
  /** Keys nearly spent now, per route and policy. */
  nearlySpent: { route: string; policy: string; keys: number }[];
  /** The heaviest keys (`TOP_KEYS` each, keys cut at `MAX_KEY_LABEL_CHARS`). */
  topKeys: {
    requests: { key: string; count: number; error: number }[];
    cost: { key: string; count: number; error: number }[];
    /** N / capacity of each sketch: the most an estimate exceeds the truth. */
    errorBound: { requests: number; cost: number };
  };
}

/** Each route's histogram as a {@link HistogramView}. */
export function histogramViews(map: Map<string, Histogram>): HistogramView[] {
  return [...map].map(([route, h]) => ({
    route,
    bounds: h.bounds,
    counts: [...h.counts],
    sum: h.sum,
    count: h.count,
  }));
}

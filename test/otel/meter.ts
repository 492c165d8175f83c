/**
 * A real OpenTelemetry SDK for the tests: a `MeterProvider` whose reader exports into the SDK's
 * `InMemoryMetricExporter` when asked (`collect()`), and lookups of one data point by metric name
 * and attributes.
 */
import type { Attributes } from '@opentelemetry/api';
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';

export interface TestMeter {
  provider: MeterProvider;
  /** Exports now and returns every metric of the last export, by name. */
  collect(): Promise<Map<string, MetricData>>;
  close(): Promise<void>;
}

export function testMeter(): TestMeter {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Exports only when forced: the interval is longer than any test.
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  return {
    provider,
    async collect() {
      exporter.reset();
      await reader.forceFlush();
      const byName = new Map<string, MetricData>();
      for (const resource of exporter.getMetrics()) {
        for (const scope of resource.scopeMetrics) {
          for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
        }
      }
      return byName;
    },
    close: () => provider.shutdown(),
  };
}

/** The points of `name` whose attributes include every one of `attributes`. */
export function pointsOf(
  metrics: Map<string, MetricData>,
  name: string,
  attributes: Attributes = {},
): DataPoint<unknown>[] {
  const metric = metrics.get(name);
  if (!metric) return [];
  return (metric.dataPoints as DataPoint<unknown>[]).filter((p) =>
    Object.entries(attributes).every(([k, v]) => p.attributes[k] === v),
  );
}

/** The sum of the values of the matching points of a counter or gauge (0 when none). */
export function sumOf(metrics: Map<string, MetricData>, name: string, attributes: Attributes = {}) {
  return pointsOf(metrics, name, attributes).reduce((s, p) => s + (p.value as number), 0);
}

/** The matching histogram points merged: their count, sum and max. */
export function histogramOf(
  metrics: Map<string, MetricData>,
  name: string,
  attributes: Attributes = {},
) {
  let count = 0;
  let sum = 0;
  let max = Number.NEGATIVE_INFINITY;
  for (const p of pointsOf(metrics, name, attributes)) {
    const h = p.value as Histogram;
    count += h.count;
    sum += h.sum ?? 0;
    max = Math.max(max, h.max ?? Number.NEGATIVE_INFINITY);
  }
  return { count, sum, max };
}

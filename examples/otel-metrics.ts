/**
 * OpenTelemetry metrics on both sides. The client is instrumented with `instrument()` onto the
 * application's MeterProvider (here the SDK with an in-memory exporter; in production, an OTLP or
 * Prometheus exporter); the mock server keeps its own metrics (`metrics: true`) and serves them as
 * Prometheus text at `/__metrics`. 12 calls at a server that allows 5 per second and says so: the
 * metrics show the waits, not 429s.
 *
 *   npx tsx examples/otel-metrics.ts
 */

import {
  AggregationTemporality,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { LimitedClient } from 'limited-client';
import { instrument } from 'limited-client/otel';
import { createMockServer } from 'limited-client/server';

const server = await createMockServer({
  metrics: true,
  routes: [
    {
      path: '/v1/things/:id',
      limits: [{ algorithm: 'fixed-window', limit: 5, windowMs: 1000, name: 'per-second' }],
    },
  ],
});

const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
const meterProvider = new MeterProvider({ readers: [reader] });

const client = new LimitedClient(server.url);
const metrics = instrument(client, { meterProvider });

await Promise.all(
  Array.from({ length: 12 }, async (_, i) => (await client.get(`/v1/things/${i}`)).arrayBuffer()),
);

await reader.forceFlush();
console.log('client metrics (OpenTelemetry):');
for (const metric of exporter.getMetrics()[0]?.scopeMetrics[0]?.metrics ?? []) {
  for (const point of metric.dataPoints) {
    const value = point.value as number | Histogram;
    const shown =
      typeof value === 'number'
        ? value.toFixed(2).replace(/\.00$/, '')
        : `count ${value.count}, sum ${value.sum?.toFixed(3)} s`;
    const attributes = Object.entries(point.attributes)
      .filter(([name]) => name !== 'server.address' && name !== 'server.port')
      .map(([name, v]) => `${name}=${v}`)
      .join(' ');
    console.log(`  ${metric.descriptor.name} {${attributes}} ${shown}`);
  }
}

const text = await (await fetch(`${server.url}/__metrics`)).text();
console.log('\nmock server metrics (Prometheus text, the counters):');
for (const line of text.split('\n')) {
  if (line.startsWith('limited_client_server_requests_total')) console.log(`  ${line}`);
}

metrics.stop();
await client.close();
await meterProvider.shutdown();
await server.close();

/**
 * limited-client/otel: the client's metrics through OpenTelemetry's API. `@opentelemetry/api` is
 * an optional peer dependency of this entry only: the core never imports it, and a client nobody
 * instruments pays nothing. The application brings the SDK (`@opentelemetry/sdk-metrics`) and its
 * exporter; see docs/observability.md for every metric, unit and attribute.
 *
 * @module
 */
export {
  type Instrumentation,
  type InstrumentOptions,
  type InstrumentTarget,
  instrument,
  METER_NAME,
} from './client-metrics.js';
export { instrumentStore } from './store-metrics.js';

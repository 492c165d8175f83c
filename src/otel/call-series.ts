/**
 * The series of the per-call metrics (calls, attempts, their durations, waits): one frozen
 * attribute object per (origin, method, outcome) and per (origin, method, wait reason), found
 * through nested Maps keyed by the event's own strings and numbers. No key string is built per
 * event: a string made per event is hashed again on every lookup, the cost this replaced
 * (docs/benchmarks-overhead.md, "Metrics on and off"). Calls and attempts are counted on the
 * outcome itself and read when the reader collects.
 *
 * @module
 */
import type { Attributes } from '@opentelemetry/api';
import { errorTypeOf, methodOf, type OriginAttributes } from './attributes.js';

/** Most attribute sets the per-call metrics keep; past it, new ones share one overflow set. */
export const MAX_SERIES = 2000;

/** The overflow set, as the OpenTelemetry SDK names its own. */
const OVERFLOW: Attributes = Object.freeze({ 'otel.metric.overflow': true });

/** A call outcome's series: its attributes, and the calls and attempts ended under it. */
export interface Outcome {
  readonly attributes: Attributes;
  /** Calls ended with this outcome (cumulative). */
  calls: number;
  /** Attempts answered with this outcome (cumulative). */
  attempts: number;
}

/** One origin and method: its base attributes, its outcomes and its waits. */
interface MethodSeries {
  readonly base: Attributes;
  readonly byStatus: Map<number, Outcome>;
  readonly byError: Map<string, Outcome>;
  readonly byReason: Map<string, Attributes>;
}

/** See the module comment. At most {@link MAX_SERIES} attribute sets, bases included. */
export class CallSeries {
  readonly #origins: OriginAttributes;
  readonly #byOrigin = new Map<string, Map<string, MethodSeries>>();
  readonly #outcomes: Outcome[] = [];
  readonly #overflow: Outcome = { attributes: OVERFLOW, calls: 0, attempts: 0 };
  #sets = 0;
  // The last (origin, method) looked up: a client's calls mostly go to one host with one method.
  #lastOrigin: string | undefined;
  #lastMethod: string | undefined;
  #last: MethodSeries | undefined;

  constructor(origins: OriginAttributes) {
    this.#origins = origins;
  }

  /** Whether one more attribute set fits under the bound (and counts it if so). */
  #fits(): boolean {
    if (this.#sets >= MAX_SERIES) return false;
    this.#sets++;
    return true;
  }

  #series(origin: string, method: string): MethodSeries | undefined {
    if (origin === this.#lastOrigin && method === this.#lastMethod) return this.#last;
    let methods = this.#byOrigin.get(origin);
    let series = methods?.get(method);
    if (series === undefined) {
      if (!this.#fits()) return undefined;
      series = {
        base: Object.freeze({
          ...this.#origins.of(origin),
          'http.request.method': methodOf(method),
        }),
        byStatus: new Map(),
        byError: new Map(),
        byReason: new Map(),
      };
      if (methods === undefined) {
        methods = new Map();
        this.#byOrigin.set(origin, methods);
      }
      methods.set(method, series);
    }
    this.#lastOrigin = origin;
    this.#lastMethod = method;
    this.#last = series;
    return series;
  }

  /** `server.*` and `http.request.method` of a call (the overflow set past the bound). */
  base(origin: string, method: string): Attributes {
    return this.#series(origin, method)?.base ?? OVERFLOW;
  }

  /** The outcome of a call or attempt: its response's status, or else its error's type. */
  outcome(origin: string, method: string, status: number | undefined, error: unknown): Outcome {
    const series = this.#series(origin, method);
    if (series === undefined) return this.#overflow;
    if (status !== undefined) {
      return (
        series.byStatus.get(status) ??
        this.#add(series.byStatus, status, {
          ...series.base,
          'limited_client.outcome': 'response',
          'http.response.status_code': status,
        })
      );
    }
    const type = errorTypeOf(error);
    return (
      series.byError.get(type) ??
      this.#add(series.byError, type, {
        ...series.base,
        'limited_client.outcome': 'error',
        'error.type': type,
      })
    );
  }

  #add<K>(into: Map<K, Outcome>, key: K, attributes: Attributes): Outcome {
    if (!this.#fits()) return this.#overflow;
    const outcome: Outcome = { attributes: Object.freeze(attributes), calls: 0, attempts: 0 };
    into.set(key, outcome);
    this.#outcomes.push(outcome);
    return outcome;
  }

  /** The attributes of a wait by `reason` (a reason name chosen by the client's code). */
  wait(origin: string, method: string, reason: string): Attributes {
    const series = this.#series(origin, method);
    if (series === undefined) return OVERFLOW;
    let attributes = series.byReason.get(reason);
    if (attributes === undefined) {
      if (!this.#fits()) return OVERFLOW;
      attributes = Object.freeze({ ...series.base, 'limited_client.wait.reason': reason });
      series.byReason.set(reason, attributes);
    }
    return attributes;
  }

  /** Every outcome with a count, the overflow one included (for the observable counters). */
  *outcomes(): IterableIterator<Outcome> {
    yield* this.#outcomes;
    if (this.#overflow.calls > 0 || this.#overflow.attempts > 0) yield this.#overflow;
  }
}

/**
 * What one host's pipeline tells the world: its counters (for `stats()`) and its events, to the
 * client's listeners and, in Node, to `diagnostics_channel` (`diag-channels.ts`). Each method
 * counts, then emits only when someone listens or subscribes, so a quiet client builds no payload.
 *
 * @module
 */

import type { RateLimitInfo } from '../../headers/types.js';
import type { Clock } from '../../shared/clock.js';
import type { RequestContext } from '../../shared/errors.js';
import type { Emitter } from '../../shared/events.js';
import type { CircuitState } from '../rules/breaker.js';
import type { WaitReason } from '../rules/contract.js';
import type { ClientEvents, EventBase, GiveUpReason, StoreOperation } from '../types.js';
import { type EventOutlet, eventOutlet } from './diag-channels.js';
import { type Counters, newCounters } from './stats.js';

/** The events that concern one request, and what each carries besides the request's fields. */
type RequestEvents = Exclude<keyof ClientEvents, 'circuit-state'>;
type Extra<K extends RequestEvents> = Omit<ClientEvents[K], keyof EventBase>;

/** See the module comment. */
export class HostReport {
  readonly counters: Counters = newCounters();

  /** The client's emitter, and in Node the diagnostics channels (see `diag-channels.ts`). */
  readonly #events: EventOutlet;
  /** The last wait of each call in line, for its `sent` event; kept only while someone listens. */
  readonly #waits = new WeakMap<RequestContext, WaitReason | 'queue'>();
  /** When each call's round began, then its attempt went (epoch ms); only while someone listens. */
  readonly #times = new WeakMap<RequestContext, number>();
  constructor(
    events: Emitter<ClientEvents>,
    readonly origin: string,
    readonly partition: string | undefined,
  ) {
    this.#events = eventOutlet(events);
  }

  /** Emits `name` for the request of `ctx` with `extra`, when someone listens. */
  #emit<K extends RequestEvents>(name: K, ctx: RequestContext, extra: () => Extra<K>) {
    if (!this.#events.has(name)) return;
    const base: EventBase = {
      origin: this.origin,
      method: ctx.method ?? 'GET',
      url: ctx.url ?? '',
    };
    if (this.partition !== undefined) base.partition = this.partition;
    this.#events.emit(name, { ...base, ...extra() } as ClientEvents[K], ctx);
  }

  queued(ctx: RequestContext, queueLength: number): void {
    this.counters.queued++;
    if (this.#events.has('sent') && !this.#waits.has(ctx)) this.#waits.set(ctx, 'queue');
    this.#emit('queued', ctx, () => ({ queueLength }));
  }

  held(ctx: RequestContext, reason: WaitReason, waitMs: number | undefined, policy?: string) {
    this.counters.held++;
    if (this.#events.has('sent')) this.#waits.set(ctx, reason);
    this.#emit('held', ctx, () => ({ reason, waitMs, policy }));
  }

  /** Whether anyone listens to `name`: the caller reads the clock only then. */
  listens(name: keyof ClientEvents): boolean {
    return this.#events.has(name);
  }

  /** A round of the call begins at `now` (epoch ms): the start of its `sent` event's wait. */
  round(ctx: RequestContext, now: number): void {
    if (this.#events.has('sent') || this.#events.has('answered')) this.#times.set(ctx, now);
  }

  /** An attempt goes out (see the `sent` event); `clock` is read only when someone listens. */
  sent(ctx: RequestContext, attempt: number, clock: Clock): void {
    const waitReason = this.#waits.get(ctx);
    if (waitReason !== undefined) this.#waits.delete(ctx);
    if (!this.#events.has('sent') && !this.#events.has('answered')) return;
    const at = clock.now();
    const waitedMs = at - (this.#times.get(ctx) ?? at);
    this.#times.set(ctx, at);
    if (!this.#events.has('sent')) return;
    // One literal per event, not #emit's spread: these three are emitted on every call when
    // listened to, and a spread shared by every event's shape is slow (test/bench/otel-overhead.ts).
    const event: ClientEvents['sent'] = {
      origin: this.origin,
      method: ctx.method ?? 'GET',
      url: ctx.url ?? '',
      attempt,
      waitedMs,
      waitReason,
    };
    if (this.partition !== undefined) event.partition = this.partition;
    this.#events.emit('sent', event, ctx);
  }

  /** An attempt was answered at `at` (epoch ms; see the `answered` event). */
  answered(
    ctx: RequestContext,
    attempt: number,
    response: Response | undefined,
    error: unknown,
    at: number,
  ): void {
    if (!this.#events.has('answered')) return;
    const durationMs = at - (this.#times.get(ctx) ?? at);
    const event: ClientEvents['answered'] = {
      origin: this.origin,
      method: ctx.method ?? 'GET',
      url: ctx.url ?? '',
      attempt,
      status: response?.status,
      durationMs,
    };
    if (response === undefined) event.error = error;
    if (this.partition !== undefined) event.partition = this.partition;
    this.#events.emit('answered', event, ctx);
  }

  /** Reports `done` when `result` settles (see the event); returns `result`. */
  done(
    ctx: RequestContext,
    result: Promise<Response>,
    start: number,
    now: () => number,
  ): Promise<Response> {
    const emit = (status: number | undefined, error: unknown, failed: boolean) => {
      if (!this.#events.has('done')) return;
      const event: ClientEvents['done'] = {
        origin: this.origin,
        method: ctx.method ?? 'GET',
        url: ctx.url ?? '',
        status,
        durationMs: now() - start,
      };
      if (failed) event.error = error;
      if (this.partition !== undefined) event.partition = this.partition;
      this.#events.emit('done', event, ctx);
    };
    result.then(
      (response) => emit(response.status, undefined, false),
      (error: unknown) => emit(undefined, error, true),
    );
    return result;
  }

  /** A response came; a pushback among them is counted and reported as `rate-limited`. */
  response(
    ctx: RequestContext,
    status: number,
    info: RateLimitInfo | undefined,
    pushback: boolean,
  ) {
    this.counters.responses++;
    if (!pushback) return;
    this.counters.rateLimited++;
    this.#emit('rate-limited', ctx, () => ({
      status,
      retryAfterMs: info?.retryAfterMs,
      policy: info?.remaining === 0 ? info.policy : undefined,
    }));
  }

  retry(ctx: RequestContext, event: () => Extra<'retry'>): void {
    this.counters.retries++;
    this.#emit('retry', ctx, event);
  }

  budgetExhausted(ctx: RequestContext, attempt: number): void {
    this.counters.budgetExhausted++;
    this.#emit('budget-exhausted', ctx, () => ({ attempt }));
  }

  circuitOpen(ctx: RequestContext, retryAt: number): void {
    this.counters.circuitOpen++;
    this.#emit('circuit-open', ctx, () => ({ retryAt }));
  }

  circuitState(from: CircuitState, to: CircuitState): void {
    if (!this.#events.has('circuit-state')) return;
    const { origin, partition } = this;
    this.#events.emit(
      'circuit-state',
      partition === undefined ? { origin, from, to } : { origin, partition, from, to },
    );
  }

  /** A store failure the call survived. */
  storeError(ctx: RequestContext, operation: StoreOperation, error: unknown): void {
    this.counters.storeErrors++;
    this.#emit('store-error', ctx, () => ({ operation, error }));
  }

  giveUp(
    ctx: RequestContext,
    reason: GiveUpReason,
    attempts: number,
    last: { response?: Response; error?: unknown },
  ): void {
    this.counters.gaveUp++;
    this.#emit('give-up', ctx, () => ({
      reason,
      attempts,
      status: last.response?.status,
      error: last.error,
    }));
  }
}

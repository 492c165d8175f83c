/**
 * What one host's pipeline tells the world: its counters (for `stats()`) and its events. Each
 * method counts, then emits only when someone listens, so a quiet client builds no payload.
 *
 * @module
 */
import type { RequestContext } from '../errors.js';
import type { RateLimitInfo } from '../headers/types.js';
import type { Emitter } from './events.js';
import type { CircuitState } from './rules/breaker.js';
import type { WaitReason } from './rules/contract.js';
import { type Counters, newCounters } from './stats.js';
import type { ClientEvents, EventBase, GiveUpReason, StoreOperation } from './types.js';

/** See the module comment. */
export class HostReport {
  readonly counters: Counters = newCounters();

  constructor(
    private readonly events: Emitter<ClientEvents>,
    readonly origin: string,
    readonly partition: string | undefined,
  ) {}

  /** The fields every event of a request carries. */
  base(ctx: RequestContext): EventBase {
    const base: EventBase = {
      origin: this.origin,
      method: ctx.method ?? 'GET',
      url: ctx.url ?? '',
    };
    if (this.partition !== undefined) base.partition = this.partition;
    return base;
  }

  queued(ctx: RequestContext, queueLength: number): void {
    this.counters.queued++;
    if (this.events.has('queued')) this.events.emit('queued', { ...this.base(ctx), queueLength });
  }

  held(ctx: RequestContext, reason: WaitReason, waitMs: number | undefined, policy?: string) {
    this.counters.held++;
    if (this.events.has('held')) {
      this.events.emit('held', { ...this.base(ctx), reason, waitMs, policy });
    }
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
    if (this.events.has('rate-limited')) {
      this.events.emit('rate-limited', {
        ...this.base(ctx),
        status,
        retryAfterMs: info?.retryAfterMs,
        policy: info?.remaining === 0 ? info.policy : undefined,
      });
    }
  }

  retry(event: Omit<ClientEvents['retry'], keyof EventBase>, ctx: RequestContext): void {
    this.counters.retries++;
    if (this.events.has('retry')) this.events.emit('retry', { ...this.base(ctx), ...event });
  }

  budgetExhausted(ctx: RequestContext, attempt: number): void {
    this.counters.budgetExhausted++;
    if (this.events.has('budget-exhausted')) {
      this.events.emit('budget-exhausted', { ...this.base(ctx), attempt });
    }
  }

  circuitOpen(ctx: RequestContext, retryAt: number): void {
    this.counters.circuitOpen++;
    if (this.events.has('circuit-open')) {
      this.events.emit('circuit-open', { ...this.base(ctx), retryAt });
    }
  }

  circuitState(from: CircuitState, to: CircuitState): void {
    if (!this.events.has('circuit-state')) return;
    const { origin, partition } = this;
    this.events.emit(
      'circuit-state',
      partition === undefined ? { origin, from, to } : { origin, partition, from, to },
    );
  }

  /** A store failure the call survived. */
  storeError(ctx: RequestContext, operation: StoreOperation, error: unknown): void {
    this.counters.storeErrors++;
    if (this.events.has('store-error')) {
      this.events.emit('store-error', { ...this.base(ctx), operation, error });
    }
  }

  giveUp(
    ctx: RequestContext,
    reason: GiveUpReason,
    attempts: number,
    last: { response?: Response; error?: unknown },
  ): void {
    this.counters.gaveUp++;
    if (this.events.has('give-up')) {
      this.events.emit('give-up', {
        ...this.base(ctx),
        reason,
        attempts,
        status: last.response?.status,
        error: last.error,
      });
    }
  }
}

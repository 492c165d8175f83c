/**
 * The concurrency cap of one host, shared by the lines of its scopes (`admission.ts`,
 * `pipeline.ts`): attempts in flight and requests waiting over all of them, and which lines to
 * wake when a slot frees.
 *
 * @module
 */

/** A line of the host's queue, as the slots see it. */
export interface SlotLine {
  /** Re-examines the line (a slot came back). */
  kick(): void;
}

/**
 * The concurrency cap of a host, shared by its lines (one per scope: `pipeline.ts`): attempts in
 * flight over all of them, and the lines to wake when a slot frees.
 */
export class Slots {
  /** Attempts admitted and not yet ended, over every line of the host. */
  inFlight = 0;
  /** Requests waiting, over every line of the host (bounded by `maxQueue`). */
  queued = 0;
  readonly #lines = new Set<SlotLine>();
  /** @param cap attempts in flight at once, at most. */
  constructor(readonly cap: number) {}

  /** A line that takes its slots here. */
  join(line: SlotLine): void {
    this.#lines.add(line);
  }

  /** A line closed or dropped. */
  leave(line: SlotLine): void {
    this.#lines.delete(line);
  }

  /** A slot came back: every line that waits may move (the first to ask takes it). */
  release(from: SlotLine): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    from.kick();
    if (this.#lines.size > 1) for (const line of this.#lines) if (line !== from) line.kick();
  }
}

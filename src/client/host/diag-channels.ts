/**
 * The client's events on Node's `diagnostics_channel`, so that an APM tool can follow calls
 * without an option: one channel per event, named in undici's style (`undici:request:create`),
 * e.g. `limited-client:call:queued` (the table: docs/observability.md, "diagnostics_channel").
 *
 * The core stays runtime-neutral: the module comes from `process.getBuiltinModule` (Node 20.16+,
 * 22.3+, and the runtimes that copy it); where that is absent nothing is published and the host's
 * report talks to its emitter alone. The channels are made once, on the first host, and a message
 * is built only when its channel has a subscriber, so an unwatched client pays one getter per
 * check. A message is a copy of the event (a subscriber cannot change what listeners get) plus
 * `call`: an opaque frozen object, the same for every message of one call, for a `WeakMap`.
 * Nothing else: no header, no key, no body.
 *
 * @module
 */
import type { Emitter } from '../../shared/events.js';
import type { ClientEvents } from '../types.js';

/** The channel name of each client event; `circuit-state` is the host's, the others a call's. */
export const CHANNEL_NAMES = {
  queued: 'limited-client:call:queued',
  held: 'limited-client:call:held',
  sent: 'limited-client:call:sent',
  answered: 'limited-client:call:answered',
  'rate-limited': 'limited-client:call:rateLimited',
  retry: 'limited-client:call:retry',
  'budget-exhausted': 'limited-client:call:budgetExhausted',
  'circuit-open': 'limited-client:call:circuitOpen',
  'store-error': 'limited-client:call:storeError',
  'give-up': 'limited-client:call:giveUp',
  done: 'limited-client:call:done',
  'circuit-state': 'limited-client:host:circuitState',
} as const satisfies { readonly [K in keyof ClientEvents]: string };

/** What the report needs of its outlet: the emitter's `has` and `emit`, with the call's identity. */
export interface EventOutlet {
  /** Whether a listener or a subscriber wants `name`: check it before building a payload. */
  has(name: keyof ClientEvents): boolean;
  /** Sends `event` to the listeners and subscribers of `name`; `call` identifies its call. */
  emit<K extends keyof ClientEvents>(name: K, event: ClientEvents[K], call?: object): void;
}

/** The part of a `diagnostics_channel` Channel used here. */
interface Channel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
}
type Channels = { readonly [K in keyof ClientEvents]: Channel };

/** `undefined`: not looked up yet; `null`: this runtime has no `diagnostics_channel`. */
let channels: Channels | null | undefined;

/**
 * The channels, made once; `null` where the runtime has none (or refuses to give it). The core's
 * one read of a Node global (`process`), which test/runtimes/scenario.js allows by this name.
 */
function findDiagnosticsChannel(): Channels | null {
  try {
    const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } })
      .process;
    const dc = proc?.getBuiltinModule?.('node:diagnostics_channel') as
      | { channel?: (name: string) => Channel }
      | undefined;
    if (typeof dc?.channel !== 'function') return null;
    // Null-prototype: keyed by the event names above only, but no inherited name can answer.
    const made = Object.create(null) as Record<string, Channel>;
    for (const [event, name] of Object.entries(CHANNEL_NAMES)) made[event] = dc.channel(name);
    return made as Channels;
  } catch {
    // A sandbox that forbids the module (a permission model, say): publish nothing.
    return null;
  }
}

/** The opaque identity of each call's messages, by its request context; lives as long as it. */
const identities = new WeakMap<object, object>();

function identityOf(call: object): object {
  let identity = identities.get(call);
  if (identity === undefined) {
    identity = Object.freeze(Object.create(null) as object);
    identities.set(call, identity);
  }
  return identity;
}

/** An emitter and the channels, as one outlet. */
class ChannelOutlet implements EventOutlet {
  readonly #events: Emitter<ClientEvents>;
  readonly #channels: Channels;

  constructor(events: Emitter<ClientEvents>, made: Channels) {
    this.#events = events;
    this.#channels = made;
  }

  has(name: keyof ClientEvents): boolean {
    return this.#events.has(name) || this.#channels[name].hasSubscribers;
  }

  emit<K extends keyof ClientEvents>(name: K, event: ClientEvents[K], call?: object): void {
    this.#events.emit(name, event);
    const channel = this.#channels[name];
    if (!channel.hasSubscribers) return;
    // `call` before the spread: after it, V8 took a slow path that cost 2.6 µs more per call
    // (test/bench/pipeline-micro.ts --subscribed). Node reports a subscriber's throw as an uncaught
    // exception on a later tick: not ours to catch.
    channel.publish(call === undefined ? { ...event } : { call: identityOf(call), ...event });
  }
}

/**
 * The outlet of a host's report: `events` alone where the runtime has no `diagnostics_channel`,
 * else `events` and the channels (looked up on the first call, then kept).
 */
export function eventOutlet(events: Emitter<ClientEvents>): EventOutlet {
  if (channels === undefined) channels = findDiagnosticsChannel();
  return channels === null ? events : new ChannelOutlet(events, channels);
}

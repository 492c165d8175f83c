/**
 * `instrument()` onto a meter that keeps nothing (the API's no-op one, which the global provider
 * hands out until an SDK is registered) must cost the client nothing: no listener, so the client
 * builds no payload, and no `stats()` read. Onto a real SDK's meter it listens.
 */
import { createNoopMeter } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import type { ClientEvents, ClientStats } from '../../src/client/types.js';
import { instrument } from '../../src/otel/index.js';
import { Emitter } from '../../src/shared/events.js';

/** A target that writes down every event `instrument()` listens to and every `stats()` read. */
function target() {
  const events = new Emitter<ClientEvents>();
  const listened: string[] = [];
  let statsReads = 0;
  return {
    listened,
    events,
    statsReads: () => statsReads,
    on<K extends keyof ClientEvents>(name: K, listener: (event: ClientEvents[K]) => void) {
      listened.push(name);
      return events.on(name, listener);
    },
    stats(): ClientStats {
      statsReads++;
      return { hosts: {}, totals: {} as ClientStats['totals'] };
    },
  };
}

describe('instrument() onto a meter that keeps nothing', () => {
  it('adds no listener with the global provider (no SDK registered)', () => {
    const t = target();
    const handle = instrument(t);
    expect(t.listened).toEqual([]);
    for (const name of ['sent', 'answered', 'done'] as const)
      expect(t.events.has(name)).toBe(false);
    handle.stop();
  });

  it('adds no listener with the API’s no-op meter given as `meter`', () => {
    const t = target();
    instrument(t, { meter: createNoopMeter() }).stop();
    expect(t.listened).toEqual([]);
  });

  it('listens to the per-call events onto a real SDK meter, and stop() removes them', async () => {
    const t = target();
    const provider = new MeterProvider();
    const handle = instrument(t, { meterProvider: provider });
    expect(t.listened).toEqual(expect.arrayContaining(['sent', 'answered', 'done']));
    expect(t.events.has('done')).toBe(true);
    handle.stop();
    expect(t.events.has('done')).toBe(false);
    await provider.shutdown();
  });
});

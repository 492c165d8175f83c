/**
 * The checks of `burst` that span options: a `burst` needs a `rate` that reaches the hosts it
 * applies to, and a request's cost in requests must fit in the bucket (it could never be sent).
 *
 * @module
 */
import { invalidOption } from '../../shared/option-checks.js';
import { HostMatcher } from '../host/host-match.js';
import type { HostOptions, LimitedClientOptions } from './types.js';

/**
 * `burst` sizes the bucket of `rate`: without a rate it would be ignored, so it is refused. The
 * global `burst` is fine when a rate is set globally or in any host entry; a host entry's `burst`
 * when a rate reaches some host it applies to: from a less specific entry that applies too, or
 * from a more specific one it applies under (`*.example.com: { burst }` with
 * `api.example.com: { rate }`).
 */
export function checkBurstHasRate(options: LimitedClientOptions): void {
  const entries = Object.entries(options.hosts ?? {});
  const problem = 'has no effect without rate (units per second): set rate as well';
  if (
    options.burst !== undefined &&
    options.rate === undefined &&
    !entries.some(([, host]) => host.rate !== undefined)
  ) {
    throw invalidOption('burst', problem, options.burst);
  }
  if (options.rate !== undefined) return;
  const matcher = new HostMatcher(options.hosts ?? {});
  // The entries that apply to every host an entry covers (itself included). A wildcard stands for
  // itself: its suffixes are the wildcards above it, and no exact entry is named `*.…`.
  const layersOf = new Map(
    entries.map(([pattern, host]) => {
      const key = pattern.toLowerCase();
      const hostname = key.startsWith('*.') ? key : key.replace(/:\d+$/, '');
      return [host, matcher.match(hostname, key)] as const;
    }),
  );
  for (const [pattern, host] of entries) {
    if (host.burst === undefined || host.rate !== undefined) continue;
    const ratedAbove = layersOf.get(host)?.some((layer) => layer.rate !== undefined);
    const ratedBelow = entries.some(
      ([, other]) => other.rate !== undefined && layersOf.get(other)?.includes(host),
    );
    if (!ratedAbove && !ratedBelow) {
      throw invalidOption(`hosts[${JSON.stringify(pattern)}].burst`, problem, host.burst);
    }
  }
}

export function checkBurst(options: HostOptions, where: string): void {
  const requests =
    typeof options.cost === 'number'
      ? options.cost
      : typeof options.cost === 'object'
        ? (options.cost.requests ?? 1)
        : undefined;
  if (requests !== undefined && options.rate !== undefined) {
    const burst = options.burst ?? Math.max(1, Math.ceil(options.rate));
    if (requests > burst) {
      throw invalidOption(
        `${where}.cost`,
        `must not exceed burst ${burst} in requests (a request costing more could never be sent)`,
        options.cost,
      );
    }
  }
}

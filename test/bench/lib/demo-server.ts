/**
 * The demo's mock server (`npm run demo`): one server for both contenders, each on a route of its
 * own with its own token bucket (`rate` requests/s holding `burst`, one key for everyone, declared
 * in the IETF RateLimit fields), and its dashboard on (issue 27, item 5): a newcomer who opens the
 * printed URL sees both routes side by side as they run, the client's admitted requests against
 * the naive loop's 429s. A route's limiter state is its own (namespaced by the route), so a
 * contender meets a full bucket as it did on a server of its own.
 *
 * Pure: the configuration and the paths, tested in demo.test.ts.
 */
import type { MockServerConfig } from '../../../src/server/index.js';

/** The path prefix of each contender's route; its calls go to `${prefix}/orders/${i}`. */
export const DEMO_PREFIXES = {
  client: '/limited-client',
  naive: '/naive-retry',
} as const;

/** Which contender a route is for. */
export type DemoContender = keyof typeof DEMO_PREFIXES;

/** The label of a contender's route in `stats().routes` and on the dashboard. */
export function demoRouteLabel(contender: DemoContender): string {
  return `GET ${DEMO_PREFIXES[contender]}/orders/:id`;
}

/** The server: per contender a route `GET <prefix>/orders/:id` limited to `rate`/s, burst `burst`. */
export function demoServerConfig(rate: number, burst: number): MockServerConfig {
  return {
    dashboard: true,
    routes: Object.values(DEMO_PREFIXES).map((prefix) => ({
      method: 'GET',
      path: `${prefix}/orders/:id`,
      headers: 'ietf' as const,
      limits: [
        {
          algorithm: 'token-bucket' as const,
          capacity: burst,
          refillPerSecond: rate,
          key: 'global' as const,
          name: 'orders',
        },
      ],
    })),
  };
}

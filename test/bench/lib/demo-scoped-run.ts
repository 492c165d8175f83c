/**
 * The demo's scoped run (`npm run demo -- --scopes github|ietf`): each contender against its own
 * mock server with two budgets (see demo-scopes.ts), every call of both routes fired at once;
 * prints, per contender and route, what succeeded, the refusals the server sent, the route's
 * elapsed time and its least time. Wall-clock figures, for reading side by side, never asserted.
 */
import { createMockServer } from '../../../src/server/index.js';
import {
  leastWindowedMs,
  SCOPES_WINDOW_MS,
  type ScopesDialect,
  scopedRoutes,
  scopedServerConfig,
} from './demo-scopes.js';
import { fixed, markdownTable } from './table.js';

/** A client under test: one logical GET resolving to its final status. */
export interface ScopedContender {
  send(path: string): Promise<number>;
  close?(): Promise<void>;
}

/** A contender's name and how to make it for an origin, with a fetch that records attempts. */
export interface ScopedEntry {
  name: string;
  create(origin: string, record: typeof fetch): ScopedContender;
}

/** Runs every entry in turn and prints the table. */
export async function runScopedDemo(
  dialect: ScopesDialect,
  n: number,
  rate: number,
  entries: readonly ScopedEntry[],
): Promise<void> {
  const routes = scopedRoutes(n, rate);
  console.log(
    `Server: one host, two budgets named in ${dialect === 'github' ? "GitHub's x-ratelimit-resource" : 'the IETF policy names and pk'}: ` +
      routes.map((r) => `${r.name} ${r.perWindow} per ${SCOPES_WINDOW_MS / 1000} s`).join(', '),
  );
  console.log(
    `Each contender fires ${routes.map((r) => `${r.calls} ${r.name}`).join(' and ')} at once.\n`,
  );
  const rows: (string | number)[][] = [];
  for (const entry of entries) {
    const server = await createMockServer(scopedServerConfig(dialect, routes));
    // Fire at a window's start, so that every run has the same least time (the windows are
    // aligned to the epoch; a run starting late in one would have a shorter one).
    await new Promise((r) => setTimeout(r, SCOPES_WINDOW_MS - (Date.now() % SCOPES_WINDOW_MS)));
    const started = performance.now();
    const startedAt = Date.now();
    const contender = entry.create(server.url, fetch);
    const perRoute = await Promise.all(
      routes.map(async (route) => {
        const statuses = await Promise.all(
          Array.from({ length: route.calls }, (_, i) =>
            contender.send(route.path(i)).catch(() => 0),
          ),
        );
        return { route, statuses, elapsedMs: performance.now() - started };
      }),
    );
    const stats = server.stats();
    await contender.close?.();
    await server.close();
    for (const { route, statuses, elapsedMs } of perRoute) {
      const ok = statuses.filter((s) => s >= 200 && s < 300).length;
      const label = route.name === 'orders' ? 'GET /orders/:id' : 'GET /search';
      const least = leastWindowedMs(ok, route.perWindow, SCOPES_WINDOW_MS, startedAt);
      rows.push([
        entry.name,
        route.name,
        route.calls,
        ok,
        stats.routes[label]?.rejected ?? 0,
        fixed(elapsedMs / 1000, 2),
        fixed(least / 1000, 2),
        least > 0 ? fixed(elapsedMs / least, 2) : '-',
      ]);
    }
  }
  console.log(
    markdownTable(
      [
        'client',
        'route',
        'calls',
        'succeeded',
        '429s',
        'elapsed (s)',
        'least (s)',
        'elapsed / least',
      ],
      rows,
    ),
  );
}

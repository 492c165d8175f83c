/**
 * Issue 27, done-when: "docs/observability.md lists every metric, channel and attribute". The
 * docs' tables against what the code registers:
 *
 * - the client's metrics: every instrument `instrument()` and `instrumentStore()` create on a real
 *   SDK meter (a proxy in front of it writes the names down);
 * - the mock server's metrics: every family of its Prometheus text (`# TYPE` lines);
 * - the channels: `CHANNEL_NAMES`, one per client event;
 * - the attributes: every dotted attribute name the otel entry's sources write (semantic
 *   conventions, `limited_client.*`, `otel.metric.overflow`), read from src/otel: the dotted
 *   string literals there besides the metric names (which are the first argument of a create
 *   call) are attribute keys.
 *
 * A name in the code and not in the docs fails, and so does one in the docs the code lost.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Meter } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { CHANNEL_NAMES } from '../../src/client/host/diag-channels.js';
import { LimitedClient, MemoryStateStore } from '../../src/index.js';
import { instrument, instrumentStore } from '../../src/otel/index.js';
import { createMockServer } from '../../src/server/index.js';

const ROOT = new URL('../../', import.meta.url);
const doc = readFileSync(new URL('docs/observability.md', ROOT), 'utf8');

/** The Markdown between the heading that starts with `heading` and the next of its level or above. */
function section(heading: string): string {
  const lines = doc.split('\n');
  const start = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '').startsWith(heading));
  if (start < 0) throw new Error(`no heading "${heading}" in docs/observability.md`);
  const level = (lines[start] as string).indexOf(' ');
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && l.indexOf(' ') <= level);
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/**
 * The backticked names in the first column of the section's table (the header row and the rule
 * skipped). A name written `.from` after `a.b.c` in one cell is `a.b.from`.
 */
function firstColumn(text: string): string[] {
  const names: string[] = [];
  const rows = text.split('\n').filter((l) => l.startsWith('|'));
  for (const row of rows.slice(2)) {
    const cell = row.split('|')[1] ?? '';
    let first: string | undefined;
    for (const [, name] of cell.matchAll(/`([^`]+)`/g)) {
      if (name === undefined) continue;
      if (name.startsWith('.') && first !== undefined) {
        names.push(first.slice(0, first.lastIndexOf('.')) + name);
      } else {
        first = name;
        names.push(name);
      }
    }
  }
  return names;
}

const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

describe('docs/observability.md against the code', () => {
  it('lists every client metric instrument() and instrumentStore() create, and no other', () => {
    const created: string[] = [];
    const real = new MeterProvider().getMeter('docs-names');
    // Writes down the name of every instrument made; the real meter makes it.
    const meter = new Proxy(real, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (String(property).startsWith('create')) created.push(args[0] as string);
          return value.apply(target, args);
        };
      },
    }) as Meter;
    const client = new LimitedClient('http://127.0.0.1:9');
    const handle = instrument(client, { meter });
    instrumentStore(new MemoryStateStore(), { meter });
    handle.stop();
    expect(created.length).toBeGreaterThan(10);
    expect(sorted(firstColumn(section('Metrics')))).toEqual(sorted(created));
  });

  it('lists every family of the mock server’s Prometheus text, and no other', async () => {
    const server = await createMockServer({
      metrics: true,
      routes: [{ path: '/x', limits: [{ algorithm: 'fixed-window', limit: 1, windowMs: 1000 }] }],
    });
    try {
      const text = server.metrics() ?? '';
      const families = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] as string);
      expect(families.length).toBeGreaterThan(5);
      expect(sorted(firstColumn(section('Mock server metrics')))).toEqual(sorted(families));
    } finally {
      await server.close();
    }
  });

  it('lists every diagnostics_channel channel, and no other', () => {
    expect(sorted(firstColumn(section('Client: `diagnostics_channel`')))).toEqual(
      sorted(Object.values(CHANNEL_NAMES)),
    );
  });

  it('lists every attribute the otel entry writes, and no other', () => {
    const dir = new URL('src/otel/', ROOT);
    const written = new Set<string>();
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      // Without the metric names (a create...() or seconds() call's first argument): one of
      // them, limited_client.circuit.state, is an attribute's name as well.
      const source = readFileSync(join(dir.pathname, file), 'utf8').replace(
        /(?:create\w+|seconds)\(\s*'[^']+'/g,
        '',
      );
      for (const [, name] of source.matchAll(/'([a-z_]+(?:\.[a-z_]+)+)'/g)) {
        if (name !== undefined) written.add(name);
      }
    }
    expect(written.size).toBeGreaterThan(10);
    expect(sorted(firstColumn(section('Attributes')))).toEqual(sorted(written));
  });
});

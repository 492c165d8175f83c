/**
 * Prometheus's text exposition format (version 0.0.4): `# HELP`, `# TYPE`, then one line per
 * series. Label values are escaped as the format says (backslash, double quote, line feed), so a
 * key from outside (a client's IP, a header's value) cannot break a line or forge a series.
 *
 * @module
 */

/** The content type of the format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Label names and values, in order. */
export type Labels = readonly (readonly [string, string])[];

/** One metric family: its name, help, type and series. */
export interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  series: { labels: Labels; value: number; suffix?: string }[];
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

/** The families as exposition text, ending with a line feed. */
export function renderPrometheus(families: readonly Family[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${family.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const s of family.series) {
      const labels =
        s.labels.length === 0
          ? ''
          : `{${s.labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
      lines.push(`${family.name}${s.suffix ?? ''}${labels} ${formatValue(s.value)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

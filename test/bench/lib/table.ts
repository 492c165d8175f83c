/** Renders rows as a GitHub-flavoured markdown table; numbers are printed as given. */
export function markdownTable(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [
    line(headers),
    `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`,
    ...cells.slice(1).map(line),
  ].join('\n');
}

/** `x` with `digits` decimals, or `-` when not a finite number. */
export function fixed(x: number | undefined, digits = 2): string {
  return x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits);
}

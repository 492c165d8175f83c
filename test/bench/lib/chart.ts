/**
 * A dependency-free SVG chart: for each contender, a panel of stacked bars (attempts per bin,
 * answered 2xx / 429 / other) with a dashed line at the server's sustained limit per bin; then one
 * panel of cumulative successes for every contender against the most the server can admit by each
 * moment (its burst plus its rate times the elapsed time).
 *
 * A bar panel's scale stops at five times the sustained limit per bin (at least twice it), so the
 * limit's line stands a fifth of the panel or more above the axis even beside a loop that sends
 * sixty times too much: taller bars are cut at the top and carry their count inside it. The last panel's
 * legend sits under its axis, where no line runs. Elements carry classes (`rate-line`, `axis-x`,
 * `legend`) for the tests.
 */
import type { Bin } from './timeline.js';

export interface ChartPanel {
  label: string;
  bins: Bin[];
}

export interface ChartOptions {
  title: string;
  /** Bin width in milliseconds. */
  binMs: number;
  /** The server's sustained rate, per second. */
  ratePerSecond: number;
  /** The server's burst: what it admits at once after an idle period. */
  burst: number;
  panels: ChartPanel[];
}

const COLORS = { ok: '#2e7d32', rejected: '#c62828', failed: '#9e9e9e', limit: '#1565c0' };
const LINE_COLORS = ['#2e7d32', '#c62828', '#6a1b9a', '#ef6c00', '#00838f', '#5d4037'];

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function renderChart({ title, binMs, ratePerSecond, burst, panels }: ChartOptions): string {
  const limitPerBin = (ratePerSecond * binMs) / 1000;
  const width = 900;
  const panelHeight = 220;
  const left = 50;
  const right = 20;
  const top = 50;
  const gap = 60;
  const binCount = Math.max(1, ...panels.map((p) => p.bins.length));
  const peak = Math.max(...panels.flatMap((p) => p.bins.map((b) => b.ok + b.rejected + b.failed)));
  const yMax = Math.min(Math.max(peak, 2 * limitPerBin), 5 * limitPerBin);
  const plotWidth = width - left - right;
  const barWidth = plotWidth / binCount;
  const legendHeight = 14 * panels.length + 24;
  const height = top + (panels.length + 1) * (panelHeight + gap) + legendHeight;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="24" font-size="16" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="${left}" y="42" fill="#555">attempts per ${binMs} ms: ` +
      `<tspan fill="${COLORS.ok}">■ 2xx</tspan> <tspan fill="${COLORS.rejected}">■ 429</tspan> ` +
      `<tspan fill="${COLORS.failed}">■ other</tspan> <tspan fill="${COLORS.limit}">- - server's sustained rate ` +
      `(${ratePerSecond}/s; bursts up to ${burst} allowed)</tspan></text>`,
  ];
  panels.forEach((panel, index) => {
    const y0 = top + index * (panelHeight + gap) + 20;
    const yOf = (v: number) => y0 + panelHeight - (v / yMax) * panelHeight;
    out.push(`<text x="${left}" y="${y0 - 6}" font-weight="bold">${escapeXml(panel.label)}</text>`);
    out.push(
      `<line class="axis-x" x1="${left}" y1="${y0 + panelHeight}" x2="${width - right}" y2="${y0 + panelHeight}" stroke="#333"/>`,
    );
    out.push(`<line x1="${left}" y1="${y0}" x2="${left}" y2="${y0 + panelHeight}" stroke="#333"/>`);
    for (const tick of [0, yMax / 2, yMax]) {
      const label = Number.isInteger(tick) ? String(tick) : tick.toFixed(1);
      out.push(`<text x="${left - 6}" y="${yOf(tick) + 4}" text-anchor="end">${label}</text>`);
    }
    panel.bins.forEach((bin, i) => {
      const x = left + i * barWidth;
      let base = 0;
      for (const kind of ['ok', 'rejected', 'failed'] as const) {
        // Cut at the top of the scale; the bar's count is written above it.
        const v = Math.min(bin[kind], Math.max(0, yMax - base));
        if (v <= 0) continue;
        out.push(
          `<rect x="${x.toFixed(1)}" y="${yOf(base + v).toFixed(1)}" width="${Math.max(1, barWidth - 1).toFixed(1)}" height="${((v / yMax) * panelHeight).toFixed(1)}" fill="${COLORS[kind]}"/>`,
        );
        base += v;
      }
      const total = bin.ok + bin.rejected + bin.failed;
      if (total > yMax) {
        // Inside the bar's top, in white: above it is the panel's title.
        out.push(
          `<text x="${(x + barWidth / 2).toFixed(1)}" y="${y0 + 10}" text-anchor="middle" font-size="9" fill="white">${total}</text>`,
        );
      }
    });
    const ly = yOf(limitPerBin).toFixed(1);
    out.push(
      `<line class="rate-line" x1="${left}" y1="${ly}" x2="${width - right}" y2="${ly}" stroke="${COLORS.limit}" stroke-dasharray="6 4" stroke-width="2"/>`,
    );
    const seconds = (binCount * binMs) / 1000;
    out.push(
      `<text x="${width - right}" y="${y0 + panelHeight + 16}" text-anchor="end">${seconds.toFixed(1)} s</text>`,
    );
    out.push(`<text x="${left}" y="${y0 + panelHeight + 16}">0 s</text>`);
  });
  // Cumulative successes against the server's envelope: burst + rate * t.
  const y0 = top + panels.length * (panelHeight + gap) + 20;
  const totalMs = binCount * binMs;
  const cumMax = Math.max(1, ...panels.map((p) => p.bins.reduce((n, b) => n + b.ok, 0)));
  const yTop = Math.max(cumMax, Math.min(burst + (ratePerSecond * totalMs) / 1000, cumMax * 1.2));
  const xOf = (ms: number) => left + (ms / totalMs) * plotWidth;
  const yOf = (v: number) => y0 + panelHeight - (Math.min(v, yTop) / yTop) * panelHeight;
  out.push(
    `<text x="${left}" y="${y0 - 6}" font-weight="bold">Successful requests so far, against the most the server admits</text>`,
  );
  out.push(
    `<line class="axis-x" x1="${left}" y1="${y0 + panelHeight}" x2="${width - right}" y2="${y0 + panelHeight}" stroke="#333"/>`,
  );
  out.push(`<line x1="${left}" y1="${y0}" x2="${left}" y2="${y0 + panelHeight}" stroke="#333"/>`);
  for (const tick of [0, Math.round(yTop / 2), Math.round(yTop)]) {
    out.push(`<text x="${left - 6}" y="${yOf(tick) + 4}" text-anchor="end">${tick}</text>`);
  }
  const envelopeEnd = Math.min(totalMs, ((yTop - burst) / ratePerSecond) * 1000);
  out.push(
    `<polyline fill="none" stroke="${COLORS.limit}" stroke-dasharray="6 4" stroke-width="2" points="${xOf(0)},${yOf(0)} ${xOf(0)},${yOf(burst)} ${xOf(Math.max(0, envelopeEnd))},${yOf(burst + (ratePerSecond * Math.max(0, envelopeEnd)) / 1000)}"/>`,
  );
  panels.forEach((panel, index) => {
    const color = LINE_COLORS[index % LINE_COLORS.length];
    let total = 0;
    const points = [`${xOf(0)},${yOf(0)}`];
    panel.bins.forEach((bin, i) => {
      total += bin.ok;
      points.push(`${xOf((i + 1) * binMs).toFixed(1)},${yOf(total).toFixed(1)}`);
    });
    out.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.join(' ')}"/>`,
    );
    // Under the axis and its time labels: the envelope and the lines run through the top right.
    out.push(
      `<text class="legend" x="${left}" y="${y0 + panelHeight + 34 + index * 14}" fill="${color}">— ${escapeXml(panel.label)}: ${total}</text>`,
    );
  });
  out.push(
    `<text x="${width - right}" y="${y0 + panelHeight + 16}" text-anchor="end">${(totalMs / 1000).toFixed(1)} s</text>`,
  );
  out.push('</svg>');
  return out.join('\n');
}

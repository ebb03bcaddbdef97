/**
 * A terminal line chart of one series of evenly spaced buckets. Unicode braille (2×4 dots per
 * character cell) by default; `ascii: true` draws `*` per cell for terminals without braille
 * glyphs. With more points than dot columns, each dot column shows the min..max of the points
 * it covers, so a one-bucket spike still shows. Null buckets leave gaps.
 */
import { formatCompact } from './number-format.js';

export interface ChartPoint {
  timestampMs: number;
  value: number | null;
}

export interface ChartOptions {
  /** Total width in terminal columns, labels included. */
  width: number;
  /** Total height in lines, axis and time labels included. */
  height: number;
  /** Bucket width; decides how x-axis times are printed. */
  spanMs: number;
  ascii?: boolean;
  /** Colour for the plotted line and for the axes. */
  paintLine?: (s: string) => string;
  paintAxis?: (s: string) => string;
}

/** Braille dot bits by [dx][dy], dy from the top of the cell. */
const DOT: readonly (readonly number[])[] = [
  [0x01, 0x02, 0x04, 0x40],
  [0x08, 0x10, 0x20, 0x80],
];

type Column = { lo: number; hi: number } | null;

/**
 * The value range each dot column shows: min/max of the points falling into it when
 * downsampling, linear interpolation between neighbours when there are fewer points than
 * columns, null for a gap.
 */
export function plotColumns(values: readonly (number | null)[], dotColumns: number): Column[] {
  const cols: Column[] = new Array<Column>(dotColumns).fill(null);
  const n = values.length;
  if (n === 0 || dotColumns <= 0) return cols;
  if (n > dotColumns) {
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v === null || v === undefined || !Number.isFinite(v)) continue;
      const x = Math.floor((i * dotColumns) / n);
      const c = cols[x];
      if (c) {
        if (v < c.lo) c.lo = v;
        if (v > c.hi) c.hi = v;
      } else cols[x] = { lo: v, hi: v };
    }
    return cols;
  }
  const xOf = (i: number): number => (n === 1 ? 0 : Math.round((i * (dotColumns - 1)) / (n - 1)));
  let prev: { x: number; v: number } | null = null;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v === null || v === undefined || !Number.isFinite(v)) {
      prev = null;
      continue;
    }
    const x = xOf(i);
    cols[x] = { lo: v, hi: v };
    if (prev) {
      for (let k = prev.x + 1; k < x; k++) {
        const iv = prev.v + ((v - prev.v) * (k - prev.x)) / (x - prev.x);
        cols[k] = { lo: iv, hi: iv };
      }
    }
    prev = { x, v };
  }
  return cols;
}

/** How x-axis times look for a given bucket width (always UTC). */
export function axisTime(ms: number, spanMs: number, rangeMs: number): string {
  const iso = new Date(ms).toISOString(); // 2026-11-21T04:10:00.000Z
  if (spanMs < 1000) return iso.slice(11, 23);
  if (spanMs < 60_000) return iso.slice(11, 19);
  if (rangeMs <= 86_400_000) return iso.slice(11, 16);
  return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
}

/** Renders the chart as lines of exactly `width` columns or fewer. */
export function renderChart(points: readonly ChartPoint[], opts: ChartOptions): string[] {
  const line = opts.paintLine ?? ((s: string) => s);
  const axis = opts.paintAxis ?? ((s: string) => s);
  const values = points.map((p) => p.value);
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v === null || !Number.isFinite(v)) continue;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (points.length === 0 || min === Infinity) return ['(no data in range: every bucket is empty)'];
  let lo = min;
  let hi = max;
  if (lo === hi) {
    const pad = lo === 0 ? 1 : Math.abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const rows = Math.max(3, opts.height - 3); // plot rows; then axis, time labels, legend
  const yDots = opts.ascii ? rows : rows * 4;
  // y labels: top, bottom and every few rows in between.
  const labelEvery = rows >= 12 ? 4 : rows >= 6 ? 2 : 1;
  const valueAtRow = (r: number): number => {
    if (r === 0) return hi;
    if (r === rows - 1) return lo;
    const centreDot = opts.ascii ? rows - 1 - r : yDots - 1 - (r * 4 + 1.5);
    return lo + (centreDot / (yDots - 1)) * (hi - lo);
  };
  const labels = new Map<number, string>();
  for (let r = 0; r < rows; r++) if (r % labelEvery === 0 || r === rows - 1) labels.set(r, formatCompact(valueAtRow(r)));
  // Drop a middle label that would come too close to the bottom one.
  if (labelEvery > 1 && (rows - 1) % labelEvery !== 0 && (rows - 1) % labelEvery < Math.ceil(labelEvery / 2)) {
    labels.delete(rows - 1 - ((rows - 1) % labelEvery));
  }
  const labelWidth = Math.max(...[...labels.values()].map((l) => l.length));
  const plotCols = Math.max(10, opts.width - labelWidth - 2);
  const dotCols = opts.ascii ? plotCols : plotCols * 2;
  const cols = plotColumns(values, dotCols);
  // Connect neighbouring columns so a steep change draws a line, not two dots.
  const yOf = (v: number): number => Math.round(((v - lo) / (hi - lo)) * (yDots - 1));
  const spans: Array<{ a: number; b: number } | null> = cols.map((c) => (c ? { a: yOf(c.lo), b: yOf(c.hi) } : null));
  for (let x = 1; x < spans.length; x++) {
    const p = spans[x - 1];
    const c = spans[x];
    if (!p || !c) continue;
    if (c.a > p.b + 1) c.a = Math.floor((c.a + p.b) / 2) + 1;
    if (c.b < p.a - 1) c.b = Math.ceil((c.b + p.a) / 2) - 1;
  }
  const cells: number[][] = Array.from({ length: rows }, () => new Array<number>(plotCols).fill(0));
  spans.forEach((s, x) => {
    if (!s) return;
    for (let y = s.a; y <= s.b; y++) {
      const fromTop = yDots - 1 - y;
      if (opts.ascii) cells[fromTop]![x] = 1;
      else cells[Math.floor(fromTop / 4)]![Math.floor(x / 2)]! |= DOT[x % 2]![fromTop % 4]!;
    }
  });
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    const label = labels.get(r);
    const glyphs = cells[r]!.map((bits) => (bits === 0 ? ' ' : opts.ascii ? '*' : String.fromCharCode(0x2800 + bits))).join('');
    const tick = opts.ascii ? (label ? '+' : '|') : label ? '┤' : '│';
    out.push(`${axis(`${(label ?? '').padStart(labelWidth)} ${tick}`)}${line(glyphs.replace(/\s+$/, ''))}`);
  }
  out.push(axis(`${' '.repeat(labelWidth)} ${opts.ascii ? '+' : '└'}${(opts.ascii ? '-' : '─').repeat(plotCols)}`));
  const indent = labelWidth + 2;
  out.push(axis(timeAxisLine(points, opts.spanMs, indent, plotCols)));
  out.push(axis(legendLine(points.length, dotCols, min, max, indent, opts)));
  return out;
}

/** Time labels under the axis: first at the left, last at the right, and a middle one when there is room. */
function timeAxisLine(points: readonly ChartPoint[], spanMs: number, indent: number, plotCols: number): string {
  const first = points[0]!.timestampMs;
  const last = points[points.length - 1]!.timestampMs;
  const range = last - first;
  const left = axisTime(first, spanMs, range);
  const right = axisTime(last, spanMs, range);
  let timeLine = ' '.repeat(indent) + left;
  const midText = axisTime(first + Math.round(range / 2 / spanMs) * spanMs, spanMs, range);
  const midAt = indent + Math.floor(plotCols / 2) - Math.floor(midText.length / 2);
  if (points.length > 2 && midAt > timeLine.length + 2 && midAt + midText.length + 2 < indent + plotCols - right.length) {
    timeLine += ' '.repeat(midAt - timeLine.length) + midText;
  }
  const rightAt = Math.max(timeLine.length + 1, indent + plotCols - right.length);
  if (points.length > 1) timeLine += ' '.repeat(rightAt - timeLine.length) + right;
  return timeLine;
}

/** The legend line, dropping trailing parts until it fits the width. */
function legendLine(buckets: number, dotCols: number, min: number, max: number, indent: number, opts: ChartOptions): string {
  const perColumn = buckets / dotCols;
  const parts = ['UTC', `${buckets} buckets`, `min ${formatCompact(min)}`, `max ${formatCompact(max)}`];
  if (perColumn > 1) parts.push(`${Math.ceil(perColumn)} per ${opts.ascii ? 'column' : 'dot column'} (min..max)`);
  let legend = ' '.repeat(indent) + parts.join(' · ');
  while (legend.length > opts.width && parts.length > 1) {
    parts.pop();
    legend = ' '.repeat(indent) + parts.join(' · ');
  }
  return legend;
}

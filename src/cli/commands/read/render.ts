/**
 * `tsnode read`'s output: the rows on stdout as a table, chart, one JSON document or CSV, and the
 * header line on stderr. Rollups print as the bucket grid (render/rollup.ts); text and histogram
 * rows as the node keeps them, one per stored value (the value wrapped to the terminal). Times are
 * epoch seconds beside ISO strings, as everywhere.
 */
import type { RollupColumns, RollupResult } from '../../../client/node-client.js';
import type { CliContext } from '../../context.js';
import {
  columnsCsv,
  columnsJson,
  ColumnsCsv,
  comparisonJson,
  gridCsv,
  gridCsvChunks,
  gridJson,
  gridOf,
  gridOfColumns,
  gridTable,
  nodeLabel,
  withRows,
  type BucketValue,
  type Comparison,
  type NodeSeries,
  type Paint,
} from '../../render/rollup.js';
import { isoTime } from '../../time.js';
import type { HistogramBins } from '../../../protocol/index.js';
import type { ReadPlan } from './plan.js';
import type { CellValue } from '../../render/table.js';

// What --compare reads with, for action.ts, which loads this module only once a read is on its way.
export { compareSeries } from '../../render/rollup.js';
export { errorJson } from '../../render/json-values.js';

/** One node's outcome in a `--compare` (the JSON document's `nodes`). */
export interface CompareNode {
  node: string;
  ok: boolean;
  error?: { code: string; message: string };
  rows?: number;
  limited?: boolean;
}

// Tables (cli-table3), colours (chalk) and charts load only for the outputs that draw them: a
// CSV or JSON read of a year of buckets never pays for them (bench/read.bench.mjs).
const tables = (): Promise<typeof import('../../render/table.js')> => import('../../render/table.js');
const colours = (): Promise<typeof import('../../render/painter.js')> => import('../../render/painter.js');

/** Bytes per write of a large output. */
const WRITE_BYTES = 1 << 20;

/** Writes to stdout, waiting for it to drain when it is full (a read can print 100,000 rows). */
export async function write(ctx: CliContext, text: string | Uint8Array): Promise<void> {
  if (ctx.stdout.write(text)) return;
  await new Promise<void>((resolve) => ctx.stdout.once('drain', () => resolve()));
}

/** A large output (a year of rows is megabytes) written a piece at a time. */
async function writeBytes(ctx: CliContext, bytes: Buffer): Promise<void> {
  for (let at = 0; at < bytes.length; at += WRITE_BYTES) await write(ctx, bytes.subarray(at, at + WRITE_BYTES));
}

/**
 * How one kind of stored-value rows (text, histogram) prints: JSON lines, CSV rows and table rows
 * from the same rows; `empty` is logged instead of an empty table.
 */
interface StoredRowsView {
  json: () => string[];
  csv: { headers: string[]; rows: () => CellValue[][] };
  table: { headers: string[]; rows: () => CellValue[][]; align?: Array<'right' | undefined> };
  empty: string;
}

async function renderStoredRows(view: StoredRowsView, count: number, output: ReadPlan['output'], ctx: CliContext, meta: Record<string, unknown>): Promise<void> {
  if (output === 'json') return write(ctx, withRows(meta, view.json()));
  if (output === 'csv') return write(ctx, (await tables()).renderCsv(view.csv.headers, view.csv.rows(), { terminal: Boolean(ctx.stdout.isTTY) }));
  if (count === 0) {
    ctx.log.info(view.empty);
    return;
  }
  const { renderTable, tableWidth } = await tables();
  return write(ctx, renderTable(view.table.headers, view.table.rows(), { colour: ctx.colour, width: tableWidth(ctx), ...(view.table.align ? { align: view.table.align } : {}) }));
}

/** Text change points: `[epoch milliseconds, value]`. */
export function renderTextRows(rows: ReadonlyArray<[number, string]>, plan: Pick<ReadPlan, 'output'>, ctx: CliContext, meta: Record<string, unknown>): Promise<void> {
  const view: StoredRowsView = {
    json: () => rows.map(([ms, value]) => JSON.stringify({ time: ms / 1000, time_iso: isoTime(ms), value })),
    csv: { headers: ['time', 'time_iso', 'value'], rows: () => rows.map(([ms, value]) => [ms / 1000, isoTime(ms), value]) },
    table: { headers: ['time', 'value'], rows: () => rows.map(([ms, value]) => [isoTime(ms), value]) },
    empty: 'no text values in range',
  };
  return renderStoredRows(view, rows.length, plan.output, ctx, meta);
}

/** A histogram's bins in value order (bin names are numbers: "0", "+23e-004"), each with its count. */
function sortedBins(bins: Readonly<HistogramBins>): Array<[string, number]> {
  return Object.entries(bins).sort(([a], [b]) => Number(a) - Number(b));
}

/**
 * One line per bin, so every bin and count reads on its own (a histogram without bins keeps its
 * row, with an empty bin and a count of 0, so the bucket is not lost).
 */
function binLines(rows: ReadonlyArray<[number, number, HistogramBins]>): Array<[number, number, string, number]> {
  const out: Array<[number, number, string, number]> = [];
  for (const [s, period, bins] of rows) {
    const sorted = sortedBins(bins);
    if (sorted.length === 0) out.push([s, period, '', 0]);
    for (const [bin, count] of sorted) out.push([s, period, bin, count]);
  }
  return out;
}

/** Histogram rows: `[epoch seconds, period, {bin: count}]`, printed bin by bin. */
export function renderHistogramRows(
  rows: ReadonlyArray<[number, number, HistogramBins]>,
  plan: Pick<ReadPlan, 'output'>,
  ctx: CliContext,
  meta: Record<string, unknown>,
): Promise<void> {
  const view: StoredRowsView = {
    json: () =>
      rows.map(([s, period, bins]) =>
        JSON.stringify({ time: s, time_iso: isoTime(s * 1000), period, count: Object.values(bins).reduce((a, b) => a + b, 0), bins: Object.fromEntries(sortedBins(bins)) }),
      ),
    csv: { headers: ['time', 'time_iso', 'period', 'bin', 'count'], rows: () => binLines(rows).map(([s, period, bin, count]) => [s, isoTime(s * 1000), period, bin, count]) },
    table: {
      headers: ['time', 'period', 'bin', 'count'],
      rows: () => binLines(rows).map(([s, period, bin, count]) => [isoTime(s * 1000), period, bin === '' ? '(no bins)' : bin, count]),
      align: [undefined, 'right', 'right', 'right'],
    },
    empty: 'no histograms in range',
  };
  return renderStoredRows(view, rows.length, plan.output, ctx, meta);
}

/**
 * The header as lines: one line for logs and pipes (easy to grep), wrapped at the ` · `
 * separators to the terminal width on a TTY so it does not break mid-word.
 */
export function headerLines(parts: readonly string[], width: number | undefined): string[] {
  if (!width) return [parts.join(' · ')];
  const lines: string[] = [];
  let line = '';
  parts.forEach((part, i) => {
    const next = line === '' ? part : `${line} · ${part}`;
    // Every line but the last ends in ` ·`: keep room for it.
    const room = i === parts.length - 1 ? width : width - 2;
    if (line !== '' && [...next].length > room) {
      lines.push(`${line} ·`);
      line = `  ${part}`;
    } else line = next;
  });
  if (line !== '') lines.push(line);
  return lines;
}

export function logHeader(ctx: CliContext, parts: string[]): number {
  const lines = headerLines(parts, ctx.stderr.isTTY ? (ctx.stderr.columns ?? 80) : undefined);
  for (const l of lines) ctx.log.info(l);
  return lines.length;
}

/** Colours for tables, or none at all (no per-cell calls when colour is off). */
async function paintFor(enabled: boolean): Promise<Paint | undefined> {
  if (!enabled) return undefined;
  const c = (await colours()).painter(enabled);
  return { dim: (s) => c.dim(s), bold: (s) => c.bold(s), highlight: (s) => c.yellow(c.bold(s)) };
}

async function tableOpts(ctx: CliContext): Promise<{ paint?: Paint; width: number | undefined }> {
  const paint = await paintFor(ctx.colour);
  return { ...(paint ? { paint } : {}), width: (await tables()).tableWidth(ctx) };
}

export function chartSize(ctx: CliContext, headerUsed: number): { width: number; height: number } {
  const tty = Boolean(ctx.stdout.isTTY);
  const cols = tty && ctx.stdout.columns ? ctx.stdout.columns : Number(ctx.env.COLUMNS) || 80;
  const rows = tty && ctx.stdout.rows ? ctx.stdout.rows : Number(ctx.env.LINES) || 24;
  // Leave room for the header lines on stderr and the shell prompt, so the chart fits one screen.
  // One column spare: a line that fills the last column makes some terminals wrap.
  return { width: Math.max(30, cols - 1), height: Math.max(8, Math.min(rows - headerUsed - 1, 40)) };
}

/** `-o csv` of a columns read, formatted as its rows arrive (readRollupColumns' onRows); renderColumns finishes it. */
export function csvAsRowsArrive(plan: ReadPlan, rows: number): ColumnsCsv {
  return new ColumnsCsv('value', plan.query.spanMs, rows);
}

/** `early`: the CSV formatted while the rows arrived (csvAsRowsArrive), to finish instead of starting over. */
export async function renderColumns(cols: RollupColumns, plan: ReadPlan, ctx: CliContext, meta: Record<string, unknown>, early?: ColumnsCsv): Promise<void> {
  const spanMs = plan.query.spanMs;
  switch (plan.output) {
    case 'csv':
      return writeBytes(ctx, early ? early.finish(cols) : columnsCsv(cols, 'value', spanMs));
    case 'json':
      return writeBytes(ctx, columnsJson(cols, spanMs, meta));
    default: {
      if (cols.timestampsMs.length === 0) {
        ctx.log.info('no buckets in range');
        return;
      }
      const grid = gridOfColumns(cols.timestampsMs, cols.values, plan.query.type);
      return write(ctx, `${gridTable(grid, spanMs, await tableOpts(ctx)).join('\n')}\n`);
    }
  }
}

export async function renderSingle(res: RollupResult<BucketValue>, plan: ReadPlan, ctx: CliContext, headerUsed: number, meta: Record<string, unknown>): Promise<void> {
  const spanMs = plan.query.spanMs;
  const all = plan.query.type === 'all';
  switch (plan.output) {
    case 'json':
      return write(ctx, gridJson(gridOf(res.points, all), spanMs, meta));
    case 'csv':
      for (const chunk of gridCsvChunks(gridOf(res.points, all), spanMs)) await write(ctx, chunk);
      return;
    case 'chart': {
      const { width, height } = chartSize(ctx, headerUsed);
      const [{ renderChart }, { painter }] = await Promise.all([import('../../render/chart.js'), colours()]);
      const c = painter(ctx.colour);
      const lines = renderChart(res.points as Array<{ timestampMs: number; value: number | null }>, {
        width,
        height,
        spanMs,
        ascii: ctx.env.TSNODE_CHART === 'ascii',
        paintLine: (s) => c.cyan(s),
        paintAxis: (s) => c.dim(s),
      });
      return write(ctx, `${lines.join('\n')}\n`);
    }
    case 'table': {
      if (res.points.length === 0) {
        ctx.log.info('no buckets in range');
        return;
      }
      const grid = gridOf(res.points, all, plan.query.type);
      return write(ctx, `${gridTable(grid, spanMs, await tableOpts(ctx)).join('\n')}\n`);
    }
  }
}

/** `--compare`: the nodes' series side by side, the buckets that differ marked. */
export async function printComparison(
  cmp: Comparison,
  series: readonly NodeSeries[],
  nodes: readonly CompareNode[],
  plan: ReadPlan,
  ctx: CliContext,
  meta: Record<string, unknown>,
): Promise<void> {
  const spanMs = plan.query.spanMs;
  switch (plan.output) {
    case 'json':
      await write(ctx, comparisonJson(cmp, series, spanMs, nodes, meta));
      return;
    case 'csv': {
      const grid = { ...cmp.grid, columns: cmp.grid.columns.map((c) => ({ ...c })) };
      await write(ctx, gridCsv(grid, spanMs, { header: 'differs', cells: cmp.differs.map((d) => (d ? 'true' : 'false')) }));
      return;
    }
    default: {
      const headers = cmp.sources.map((s) => (s.member ? `${nodeLabel(s.node)} ${s.member}` : nodeLabel(s.node)));
      if (cmp.grid.timestampsMs.length > 0) {
        await write(ctx, `${gridTable(cmp.grid, spanMs, { ...(await tableOpts(ctx)), headers, marks: cmp.differs }).join('\n')}\n`);
      }
    }
  }
}

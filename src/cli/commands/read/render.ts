/**
 * Printing a text or histogram read (`tsnode read --kind text|histogram`): the rows as the node
 * keeps them, one per stored value, as a table (fitted to the terminal, the value wrapped), one
 * JSON document or CSV. Times are epoch seconds beside ISO strings, as everywhere.
 */
import type { CliContext } from '../../context.js';
import { renderCsv, renderTable, tableWidth } from '../../render/table.js';
import { withRows } from '../../render/rollup.js';
import { isoTime } from '../../time.js';
import type { HistogramBins } from '../../../protocol/index.js';
import type { ReadPlan } from './plan.js';

/** Writes to stdout, waiting for it to drain when it is full (a read can print 100,000 rows). */
export async function write(ctx: CliContext, text: string): Promise<void> {
  if (ctx.stdout.write(text)) return;
  await new Promise<void>((resolve) => ctx.stdout.once('drain', () => resolve()));
}

/** Text change points: `[epoch milliseconds, value]`. */
export async function renderTextRows(rows: ReadonlyArray<[number, string]>, plan: Pick<ReadPlan, 'output'>, ctx: CliContext, meta: Record<string, unknown>): Promise<void> {
  switch (plan.output) {
    case 'json':
      return write(
        ctx,
        withRows(
          meta,
          rows.map(([ms, value]) => JSON.stringify({ time: ms / 1000, time_iso: isoTime(ms), value })),
        ),
      );
    case 'csv':
      return write(
        ctx,
        renderCsv(
          ['time', 'time_iso', 'value'],
          rows.map(([ms, value]) => [ms / 1000, isoTime(ms), value]),
          { terminal: Boolean(ctx.stdout.isTTY) },
        ),
      );
    default:
      if (rows.length === 0) {
        ctx.log.info('no text values in range');
        return;
      }
      return write(
        ctx,
        renderTable(
          ['time', 'value'],
          rows.map(([ms, value]) => [isoTime(ms), value]),
          { colour: ctx.colour, width: tableWidth(ctx) },
        ),
      );
  }
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
export async function renderHistogramRows(
  rows: ReadonlyArray<[number, number, HistogramBins]>,
  plan: Pick<ReadPlan, 'output'>,
  ctx: CliContext,
  meta: Record<string, unknown>,
): Promise<void> {
  switch (plan.output) {
    case 'json':
      return write(
        ctx,
        withRows(
          meta,
          rows.map(([s, period, bins]) =>
            JSON.stringify({ time: s, time_iso: isoTime(s * 1000), period, count: Object.values(bins).reduce((a, b) => a + b, 0), bins: Object.fromEntries(sortedBins(bins)) }),
          ),
        ),
      );
    case 'csv':
      return write(
        ctx,
        renderCsv(
          ['time', 'time_iso', 'period', 'bin', 'count'],
          binLines(rows).map(([s, period, bin, count]) => [s, isoTime(s * 1000), period, bin, count]),
          { terminal: Boolean(ctx.stdout.isTTY) },
        ),
      );
    default:
      if (rows.length === 0) {
        ctx.log.info('no histograms in range');
        return;
      }
      return write(
        ctx,
        renderTable(
          ['time', 'period', 'bin', 'count'],
          binLines(rows).map(([s, period, bin, count]) => [isoTime(s * 1000), period, bin === '' ? '(no bins)' : bin, count]),
          {
            colour: ctx.colour,
            width: tableWidth(ctx),
            align: [undefined, 'right', 'right', 'right'],
          },
        ),
      );
  }
}

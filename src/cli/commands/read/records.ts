/**
 * Printing a text or histogram read (`tsnode read --kind text|histogram`): the rows as the node
 * keeps them, one per stored value, as a table (fitted to the terminal, the value wrapped), one
 * JSON document or CSV. Times are epoch seconds beside ISO strings, as everywhere.
 */
import type { CliContext } from '../../context.js';
import { renderCsv, renderTable, tableWidth } from '../../render/table.js';
import { withRows } from '../../render/rollup.js';
import { isoTime } from '../../time.js';
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

/** Histogram rows: `[epoch seconds, period, base64 histogram]`. */
export async function renderHistogramRows(
  rows: ReadonlyArray<[number, number, string]>,
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
          rows.map(([s, period, histogram]) => JSON.stringify({ time: s, time_iso: isoTime(s * 1000), period, histogram })),
        ),
      );
    case 'csv':
      return write(
        ctx,
        renderCsv(
          ['time', 'time_iso', 'period', 'histogram'],
          rows.map(([s, period, histogram]) => [s, isoTime(s * 1000), period, histogram]),
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
          ['time', 'period', 'histogram'],
          rows.map(([s, period, histogram]) => [isoTime(s * 1000), period, histogram]),
          {
            colour: ctx.colour,
            width: tableWidth(ctx),
            align: [undefined, 'right'],
          },
        ),
      );
  }
}

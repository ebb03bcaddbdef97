/**
 * `tsnode history show <run>` for a delete run: its receipt (`delete.end`) as its nodes and, per
 * node, each metric's status before and after; a delete without an outcome as its lines.
 */
import type { CliContext } from '../../context.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import type { JournalEntry } from '../../journal.js';
import { printable } from '../../render/printable.js';
import { renderCsv, renderJson, renderTable, tableWidth, type CellValue } from '../../render/table.js';
import type { HistoryOptions } from './options.js';

interface ReceiptNode {
  node: string;
  state: string;
  reason: string;
  metrics?: Array<{ type?: string; uuid: string; metric_name: string; before: string; after: string }>;
}

/** Whether the journal lines are a delete run's (tsnode delete journals `delete.start` / `delete.end`). */
export const isDeleteRun = (lines: readonly JournalEntry[]): boolean => lines.some((e) => e.kind === 'delete.start' || e.kind === 'delete.end');

type MetricRow = NonNullable<ReceiptNode['metrics']>[number];

/** Each metric's row: from the `delete.receipt` lines, or (journals before them) from the end line's nodes. */
function receiptRows(lines: readonly JournalEntry[], nodes: readonly ReceiptNode[]): Array<[string, MetricRow]> {
  const chunks = lines.filter((e) => e.kind === 'delete.receipt' && Array.isArray(e.metrics));
  if (chunks.length) return chunks.flatMap((e) => (e.metrics as MetricRow[]).map((m): [string, MetricRow] => [String(e.node), m]));
  return nodes.flatMap((n) => (Array.isArray(n.metrics) ? n.metrics : []).map((m): [string, MetricRow] => [n.node, m]));
}

export function showDeleteRun(opts: HistoryOptions & { run: string }, lines: JournalEntry[], ctx: CliContext): ExitCode {
  if (opts.output === 'json') {
    ctx.stdout.write(renderJson({ run: opts.run, lines }));
    return EXIT.ok;
  }
  const receipt = lines.find((e) => e.kind === 'delete.end');
  if (!receipt) {
    // Not a delete, or a delete without an outcome recorded: its lines as they are.
    for (const e of lines) ctx.stdout.write(`${printable(JSON.stringify(e))}\n`);
    if (lines.some((e) => e.kind === 'delete.start')) {
      // Each confirmed round was journaled as it ended: what they name went, whatever stopped the run.
      const rounds = lines.filter((e) => e.kind === 'delete.round');
      const copies = rounds.reduce((n, e) => n + (Array.isArray(e.deleted) ? e.deleted.length : 0), 0);
      const nodes = new Set(rounds.map((e) => e.node)).size;
      const said = rounds.length ? `; its delete.round lines name ${copies} metric copies deleted on ${nodes} node(s)` : '';
      ctx.log.warn(`no outcome recorded: the delete was stopped before its receipt was written${said} (run its dry run again to see what is left)`);
    }
    return EXIT.ok;
  }
  const nodes = (Array.isArray(receipt.nodes) ? receipt.nodes : []) as ReceiptNode[];
  const rows: CellValue[][] = receiptRows(lines, nodes).map(([node, m]) => [node, m.metric_name, m.uuid, m.type ?? 'all', m.before, m.after]);
  const header = ['node', 'metric', 'uuid', 'type', 'before', 'after'];
  if (opts.output === 'csv') {
    ctx.stdout.write(renderCsv(header, rows, { terminal: Boolean(ctx.stdout.isTTY) }));
    return EXIT.ok;
  }
  ctx.stdout.write(
    `run ${opts.run} at ${String(receipt.at)} by ${String(receipt.by)}: delete ${printable(String(receipt.query))} (account ${String(receipt.account)}), exit ${String(receipt.exit)}\n`,
  );
  ctx.stdout.write(
    renderTable(
      ['node', 'state', 'reason'],
      nodes.map((n) => [n.node, n.state, n.reason]),
      { colour: ctx.colour, width: tableWidth(ctx) },
    ),
  );
  if (rows.length) ctx.stdout.write(renderTable(header, rows, { colour: ctx.colour, width: tableWidth(ctx) }));
  if (typeof receipt.catchUp === 'string') ctx.stdout.write(`catch-up: ${receipt.catchUp}\n`);
  return EXIT.ok;
}

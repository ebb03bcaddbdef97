import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { journalPath, readJournal, type JournalEntry } from '../../journal.js';
import { printable } from '../../render/printable.js';
import { renderCsv, renderJson, renderTable, tableWidth, type CellValue } from '../../render/table.js';
import { runJson } from './render.js';
import type { HistoryOptions } from './options.js';
import { assembleRuns, receiptSummary, type HistoryRun } from './runs.js';
import { isDeleteRun, showDeleteRun } from './show-delete.js';

export type HistoryShowOptions = HistoryOptions & { run: string };

const RECEIPT_HEADERS = ['node', 'type', 'span', 'shards_before', 'shards_after', 'shards_removed', 'oldest_before', 'oldest_after', 'free_mb_before', 'free_mb_after', 'problem'];

const cell = (v: unknown): CellValue => (typeof v === 'number' || typeof v === 'string' ? v : v === null || v === undefined ? '' : JSON.stringify(v));
const when = (v: unknown): string => (typeof v === 'number' ? new Date(v * 1000).toISOString().replace('.000Z', 'Z') : '-');

/** The receipt's rows, one per node, type and span, read defensively (a journal line is not trusted to have its documented shape). */
function receiptRows(run: HistoryRun, iso: boolean): CellValue[][] {
  const nodes = Array.isArray(run.receipt?.nodes) ? (run.receipt.nodes as Array<Record<string, unknown>>) : [];
  return nodes.flatMap((n) => {
    const spans = Array.isArray(n?.spans) ? (n.spans as Array<Record<string, unknown>>) : [];
    const node = cell(n?.node);
    if (spans.length === 0) return [[node, '', '', '', '', '', '', '', '', '', cell(n?.problem)]];
    return spans.map((s) => [
      node,
      cell(s.type),
      cell(s.span),
      cell(s.shards_before),
      cell(s.shards_after),
      cell(s.shards_removed),
      iso ? when(s.oldest_before) : cell(s.oldest_before),
      iso ? when(s.oldest_after) : cell(s.oldest_after),
      cell(s.free_mb_before),
      cell(s.free_mb_after),
      cell(s.problem ?? n.problem),
    ]);
  });
}

/**
 * `tsnode history show <run>`: one run as journaled, with its receipt (what its inventories show it
 * removed; for a delete, each metric's status before and after: show-delete.ts).
 */
export async function historyShowAction(opts: HistoryShowOptions, ctx: CliContext): Promise<ExitCode> {
  if (opts.since !== undefined || opts.node !== undefined) throw new UsageError('--since and --node filter the list of runs: history show shows one run', 'drop them');
  const path = journalPath({ flag: opts.journal, env: ctx.env, cwd: ctx.cwd });
  const entries: JournalEntry[] = [];
  try {
    for await (const line of readJournal(path)) if (!('error' in line)) entries.push(line.entry);
  } catch (err) {
    throw new UsageError(`cannot read the journal ${path}: ${(err as Error).message}`, 'pass another file with --journal');
  }
  const own = entries.filter((e) => e.run === opts.run);
  if (isDeleteRun(own)) return showDeleteRun(opts, own, ctx);
  const run = assembleRuns(entries).find((r) => r.run === opts.run);
  if (!run) throw new UsageError(`no run ${JSON.stringify(opts.run)} in the journal ${path}`, 'tsnode history lists the runs and their ids');
  if (opts.output === 'json') {
    ctx.stdout.write(renderJson({ journal: path, ...runJson(run) }));
    return EXIT.ok;
  }
  if (opts.output === 'csv') {
    ctx.stdout.write(renderCsv(RECEIPT_HEADERS, receiptRows(run, false), { terminal: Boolean(ctx.stdout.isTTY) }));
    return EXIT.ok;
  }
  const settle = typeof run.receipt?.settle_seconds === 'number' ? `, after settling ${run.receipt.settle_seconds}s` : '';
  ctx.stdout.write(`run ${printable(run.run)} (${run.kind}), started ${run.started ?? '?'}, finished ${run.finished ?? 'not recorded'}\n`);
  if (!run.receipt) {
    ctx.stdout.write('no receipt journaled: the run predates receipts, sent nothing, or tsnode stopped before its second look\n');
    return EXIT.ok;
  }
  ctx.stdout.write(`receipt${settle}: ${receiptSummary(run.receipt)} (the store frees space asynchronously)\n`);
  const headers = ['NODE', 'TYPE', 'SPAN', 'SHARDS BEFORE', 'AFTER', 'REMOVED', 'OLDEST BEFORE', 'OLDEST AFTER', 'FREE MB BEFORE', 'FREE MB AFTER', 'PROBLEM'];
  const rows = receiptRows(run, true).map((r) => r.map((c) => (typeof c === 'string' ? printable(c) : c)));
  ctx.stdout.write(renderTable(headers, rows, { colour: ctx.colour, width: tableWidth(ctx), align: [undefined, undefined, 'right', 'right', 'right', 'right'] }));
  return EXIT.ok;
}

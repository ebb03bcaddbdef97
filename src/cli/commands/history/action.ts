import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { journalPath, readJournal, type JournalEntry } from '../../journal.js';
import { parseNodeEntry } from '../../nodes.js';
import { renderCsv, renderJson } from '../../render/table.js';
import { parseTime } from '../../time.js';
import type { HistoryOptions } from './options.js';
import { CSV_HEADERS, csvRow, printRunsTable, runJson, safeKey } from './render.js';
import { assembleRuns, filterRuns } from './runs.js';

export type { HistoryOptions } from './options.js';

function skippedLines(skipped: ReadonlyMap<string, number[]>): string {
  const total = [...skipped.values()].reduce((a, l) => a + l.length, 0);
  const reasons = [...skipped].map(
    ([why, lines]) => `${lines.length} ${why} (line${lines.length > 1 ? 's' : ''} ${lines.slice(0, 3).join(', ')}${lines.length > 3 ? ', ...' : ''})`,
  );
  return `${total} line(s) of the journal could not be read and were skipped: ${reasons.join('; ')}`;
}

/** `tsnode history`: the journal's runs, filtered, with what is left to catch up. */
export async function historyAction(opts: HistoryOptions, ctx: CliContext): Promise<ExitCode> {
  const output = opts.output;
  const sinceMs = opts.since !== undefined ? parseTime(opts.since, '--since', ctx.now()) : undefined;
  let node: string | undefined;
  if (opts.node !== undefined) {
    try {
      node = parseNodeEntry(opts.node);
    } catch (err) {
      throw new UsageError(`--node: ${(err as Error).message}`, 'give a node as in a node list: http(s)://host:port, host:port or host');
    }
  }
  const path = journalPath({ flag: opts.journal, env: ctx.env, cwd: ctx.cwd });
  const entries: JournalEntry[] = [];
  const skipped = new Map<string, number[]>();
  try {
    for await (const line of readJournal(path)) {
      if ('error' in line) {
        const lines = skipped.get(line.error) ?? [];
        lines.push(line.line);
        skipped.set(line.error, lines);
        ctx.log.debug(`${path}:${line.line}: skipped (${line.error})`);
      } else entries.push(line.entry);
    }
  } catch (err) {
    throw new UsageError(`cannot read the journal ${path}: ${(err as Error).message}`, 'pass another file with --journal');
  }
  ctx.log.info(`journal: ${path}`);
  if (skipped.size) ctx.log.warn(skippedLines(skipped));
  const runs = filterRuns(assembleRuns(entries), { ...(sinceMs !== undefined ? { sinceMs } : {}), ...(node !== undefined ? { node } : {}) });
  const nodeKey = node !== undefined ? safeKey(node) : undefined;

  if (output === 'json') {
    ctx.stdout.write(renderJson({ journal: path, runs: runs.map(runJson) }));
    return EXIT.ok;
  }
  if (output === 'csv') {
    ctx.stdout.write(renderCsv(CSV_HEADERS, runs.map(csvRow), { terminal: Boolean(ctx.stdout.isTTY) }));
    return EXIT.ok;
  }
  if (runs.length === 0) {
    ctx.log.info(entries.length ? 'no run matches' : 'no runs journaled yet');
    return EXIT.ok;
  }
  printRunsTable(runs, node, nodeKey, ctx);
  return EXIT.ok;
}

/**
 * What `tsnode write` prints when the replay ends: the summary on stdout (`-o table`: sentences
 * and a per-node table; `-o json`: one object; `-o csv`: a row for the run and one per node), the
 * exit code, and the command line that continues an interrupted run.
 */
import { redactUrlCredentials } from '../../../client/headers.js';
import type { RejectEntry } from '../../../records/index.js';
import type { ReplayResult } from '../../../replay/index.js';
import type { CliContext } from '../../context.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { errorJson } from '../../render/json-values.js';
import { thousands } from '../../render/number-format.js';
import { renderCsv, renderJson, renderTable, tableWidth, type CellValue } from '../../render/table.js';
import { escapeText } from '../../render/terminal-text.js';
import { painter } from '../../render/painter.js';
import type { WriteOptions } from './options.js';
import type { WriteRoute } from './route.js';

/** How many invalid records --strict names on stderr. */
export const STRICT_SHOWN = 10;

export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

export function describeReject(e: RejectEntry): string {
  return `${e.file}: record ${e.record}${e.line !== undefined ? ` (line ${e.line})` : ''}: ${e.error}`;
}

/**
 * The command line that continues this run: the same arguments plus --resume, with no secret
 * in it. Every `--header` value is replaced by a placeholder naming the header (`headers` lists
 * them, so the hint can say what to put back), and credentials in URLs are hidden.
 */
export function resumeCommand(args: readonly string[]): { command: string; headers: string[] } {
  const quote = (a: string): string => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  const headers: string[] = [];
  const placeholder = (line: string): string => {
    const name = line.includes(':') ? line.slice(0, line.indexOf(':')).trim() : '';
    const shown = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,60}$/.test(name) ? name : 'header';
    headers.push(shown);
    return `${shown}: <${shown} value>`;
  };
  const out: string[] = [];
  for (let k = 0; k < args.length; k++) {
    const a = args[k]!;
    if (a === '--header' && k + 1 < args.length) out.push(a, placeholder(args[++k]!));
    else if (a.startsWith('--header=')) out.push(`--header=${placeholder(a.slice('--header='.length))}`);
    else out.push(redactUrlCredentials(a));
  }
  const command = ['tsnode', ...out.map(quote), ...(args.includes('--resume') ? [] : ['--resume'])].join(' ');
  return { command, headers };
}

/** Records in the rejects file from the earlier run(s) of a resumed run (0 otherwise). */
function earlierRejected(r: ReplayResult): number {
  return r.earlier ? r.earlier.invalid + r.earlier.refused + r.earlier.notWritten : 0;
}

export function exitCodeOf(r: ReplayResult): ExitCode {
  // Records were read but none reached a node: that is "nothing could be written" (exit 1). With
  // --to all, `written` counts records every node took; a node that took some makes it partial.
  const reachedANode = r.written > 0 || r.nodes.some((n) => n.records > 0);
  const nothingWritten = !r.dryRun && r.read > 0 && !reachedANode;
  switch (r.stopped) {
    case 'interrupted':
      return EXIT.interrupted;
    case 'strict':
    case 'input-error':
      return EXIT.usage;
    case 'max-errors':
      return nothingWritten ? EXIT.failed : EXIT.partial;
    case 'nodes-down':
      return reachedANode ? EXIT.partial : EXIT.failed;
    case 'done':
      if (r.dryRun) return r.rejected > 0 ? EXIT.partial : EXIT.ok;
      if (nothingWritten) return EXIT.failed;
      // Records an earlier run left in the rejects file are not written either: partial until they are replayed.
      return r.rejected > 0 || r.failedBatches > 0 || earlierRejected(r) > 0 ? EXIT.partial : EXIT.ok;
  }
}

/** What every output format is built from. */
interface Facts {
  r: ReplayResult;
  opts: Pick<WriteOptions, 'kind' | 'maxErrors'>;
  route: WriteRoute;
  invalidShown: readonly RejectEntry[];
  /** Records the local check found invalid (the rest of `rejected` a node refused or did not take). */
  invalid: number;
  rate: number;
  /** The command that continues the run, when it stopped part-way with a state file. */
  resume: { command: string; headers: string[] } | undefined;
}

/** Prints the summary in the chosen format (stderr for --strict's invalid records) and returns the exit code. */
export function report(r: ReplayResult, opts: WriteOptions, ctx: CliContext, route: WriteRoute, invalidShown: readonly RejectEntry[]): ExitCode {
  const code = exitCodeOf(r);
  const f: Facts = {
    r,
    opts,
    route,
    invalidShown,
    invalid: r.rejected - r.rejectedByNode - r.failedRecords,
    rate: r.seconds > 0 ? Math.round(r.read / r.seconds) : r.read,
    resume:
      r.statePath && (r.stopped === 'interrupted' || r.stopped === 'max-errors' || r.stopped === 'input-error' || r.stopped === 'nodes-down')
        ? resumeCommand(process.argv.slice(2))
        : undefined,
  };
  if (r.stopped === 'strict') {
    // The records that stopped it, where a person looks for errors: stderr, first ones named.
    ctx.log.error(`--strict: ${thousands(r.rejected)} invalid record${r.rejected === 1 ? '' : 's'}, nothing was sent`);
    for (const e of invalidShown) ctx.log.info(`  ${describeReject(e)}`);
    if (r.rejected > invalidShown.length) ctx.log.info(`  ... and ${thousands(r.rejected - invalidShown.length)} more`);
    if (r.rejectsPath) ctx.log.info(`  every one of them is in ${r.rejectsPath}`);
  }
  if (opts.output === 'json') ctx.stdout.write(renderJson(summaryJson(f, ctx.verbose)));
  else if (opts.output === 'csv') ctx.stdout.write(renderCsv(SUMMARY_CSV_HEADERS, summaryCsvRows(f), { terminal: Boolean(ctx.stdout.isTTY) }));
  else if (r.stopped !== 'strict') ctx.stdout.write(summaryTable(f, ctx)); // table (or text, its old name)
  warnAckCounts(r, ctx);
  if (r.inputError) ctx.log.error(r.inputError.message);
  return code;
}

/**
 * A node that acknowledged records while counting some of them misdirected (not its own on its
 * ring) or failed says so in its own answer: a warning per node, whatever the output format.
 */
function warnAckCounts(r: ReplayResult, ctx: CliContext): void {
  for (const n of r.nodes) {
    const parts = [
      n.misdirected > 0 ? `${thousands(n.misdirected)} misdirected (records whose metric it says it does not own)` : '',
      n.errors > 0 ? `${thousands(n.errors)} with errors` : '',
    ].filter(Boolean);
    if (parts.length > 0) ctx.log.warn(`${n.node} acknowledged records but counted ${parts.join(' and ')}`);
  }
}

/** The nodes that did not take records they were first choice for, which then went on to the next node: how many and why. */
function fallbacksOf(r: ReplayResult): Array<{ node: string; records: number; reason: string }> {
  return r.nodes.filter((x) => x.handedOn > 0).map((x) => ({ node: x.node, records: x.handedOn, reason: x.handOnError ?? 'it failed' }));
}

/** Per-node lines are shown when they say something a total does not: several destinations per record, or a dry run's split. */
function showsNodes(f: Facts): boolean {
  return f.route.to === 'all' || f.route.to === 'owners' || f.route.to === 'primary' || f.r.dryRun;
}

/** `-o json`: one object, snake_case (docs/cli-conventions.md#json). */
export function summaryJson(f: Facts, verbose: boolean): Record<string, unknown> {
  const { r, route } = f;
  const to = route.to;
  const doc: Record<string, unknown> = {
    status: r.stopped,
    kind: f.opts.kind,
    to,
    ring: route.targets ? { hash: route.targets.ring.hash, write_copies: route.targets.ring.topology.writeCopies, node_count: route.targets.ring.nodes.length } : null,
    smallest_span: route.smallestSpan ? { seconds: route.smallestSpan.seconds, from: route.smallestSpan.from } : null,
    histogram_periods: route.histogramPeriods ? { seconds: route.histogramPeriods.seconds, from: route.histogramPeriods.from } : null,
    read: r.read,
    written: r.written,
    ...(to === 'all' || to === 'owners' ? { written_to_some: r.writtenToSome } : {}),
    ...(to === 'owners' ? { to_named_owner: r.toNamedOwner } : {}),
    fallback_records: r.fallbackRecords,
    fallbacks: fallbacksOf(r).map((x) => ({ from: x.node, records: x.records, reason: x.reason })),
    acknowledged: { by_count: r.acknowledged.byCount, bare: r.acknowledged.bare },
    rejected: r.rejected,
    invalid: f.invalid,
    refused: r.rejectedByNode,
    failed_records: r.failedRecords,
    batches: r.batches,
    failed_batches: r.failedBatches,
    retries: r.retries,
    bytes: r.bytes,
    elapsed_ms: Math.round(r.seconds * 1000),
    records_per_second: f.rate,
    rejects: r.rejectsPath ?? null,
    state: r.stopped === 'done' ? null : (r.statePath ?? null),
    dry_run: r.dryRun,
    inputs: r.inputs.map((i) => ({ file: i.name, format: i.format, read: i.read, skipped: i.skipped, position: i.position })),
    earlier: r.earlier
      ? {
          written: r.earlier.written,
          written_to_some: r.earlier.writtenToSome,
          invalid: r.earlier.invalid,
          refused: r.earlier.refused,
          not_written: r.earlier.notWritten,
          rejected: earlierRejected(r),
        }
      : null,
  };
  if (showsNodes(f)) {
    doc.nodes = r.nodes.map((n) => ({
      node: n.node,
      batches: n.batches,
      records: n.records,
      primary_records: n.primaryRecords,
      fallback_records: n.fallbackRecords,
      handed_on: n.handedOn,
      acknowledged: { by_count: n.ackedByCount, bare: n.ackedBare },
      failed_batches: n.failedBatches,
      failed_records: n.failedRecords,
      refused: n.rejected,
      bytes_sent: n.bytesSent,
      misdirected: n.misdirected,
      errors: n.errors,
      error: n.lastError ? errorJson(n.lastErrorCode ?? 'failed', n.lastError) : null,
    }));
  }
  if (r.stopped === 'strict')
    doc.invalid_records = f.invalidShown.map((e) => ({ file: e.file, record: e.record, ...(e.line !== undefined ? { line: e.line } : {}), error: e.error }));
  doc.error = r.inputError ? errorJson('input_error', r.inputError.message) : null;
  doc.resume = f.resume ? f.resume.command : null;
  if (verbose) doc.max_rss_bytes = process.resourceUsage().maxRSS * 1024;
  return doc;
}

/** `-o csv`: the run's row (scope `run`), then a row per node (scope `node`); a cell that does not apply is empty. */
export const SUMMARY_CSV_HEADERS = [
  'scope',
  'node',
  'status',
  'kind',
  'to',
  'read',
  'written',
  'written_to_some',
  'rejected',
  'invalid',
  'refused',
  'failed_records',
  'batches',
  'failed_batches',
  'retries',
  'bytes',
  'bytes_sent',
  'acknowledged_by_count',
  'acknowledged_bare',
  'elapsed_ms',
  'rejects',
  'state',
  'error',
  'primary_records',
  'fallback_records',
  'handed_on',
] as const;

export function summaryCsvRows(f: Facts): CellValue[][] {
  const { r, route } = f;
  const some = route.to === 'all' || route.to === 'owners' ? r.writtenToSome : undefined;
  const run: CellValue[] = [
    'run',
    '',
    r.stopped,
    f.opts.kind,
    route.to,
    r.read,
    r.written,
    some,
    r.rejected,
    f.invalid,
    r.rejectedByNode,
    r.failedRecords,
    r.batches,
    r.failedBatches,
    r.retries,
    r.bytes,
    r.nodes.reduce((a, n) => a + n.bytesSent, 0),
    r.acknowledged.byCount,
    r.acknowledged.bare,
    Math.round(r.seconds * 1000),
    r.rejectsPath ?? '',
    r.stopped === 'done' ? '' : (r.statePath ?? ''),
    r.inputError?.message ?? '',
    r.written - r.fallbackRecords,
    r.fallbackRecords,
    r.nodes.reduce((a, n) => a + n.handedOn, 0),
  ];
  // Every node, whatever the target: a row per node is the finest grain the run has.
  const nodes = r.nodes.map((n): CellValue[] => [
    'node',
    n.node,
    '',
    '',
    '',
    '',
    n.records,
    '',
    '',
    '',
    n.rejected,
    n.failedRecords,
    n.batches,
    n.failedBatches,
    '',
    '',
    n.bytesSent,
    n.ackedByCount,
    n.ackedBare,
    '',
    '',
    '',
    n.lastError ?? '',
    n.primaryRecords,
    n.fallbackRecords,
    n.handedOn,
  ]);
  return [run, ...nodes];
}

/** `-o table` (the default): the summary in sentences, with a table of the nodes when each record went to several. */
export function summaryTable(f: Facts, ctx: CliContext): string {
  const { r, route } = f;
  const paint = painter(ctx.colour);
  const to = route.to;
  const n = thousands;
  // The summary quotes nodes and inputs (a node's error text among them): every line is escaped
  // before it is painted, as in a table.
  const out: string[] = [];
  const say: Say = (text, colour) => {
    out.push(colour ? colour(escapeText(text)) : escapeText(text));
  };
  const kind = f.opts.kind === 'nnt' ? '' : ` ${f.opts.kind}`;
  const inputs = `${n(r.read)}${kind} records from ${r.inputs.length} input${r.inputs.length === 1 ? '' : 's'}`;
  const batches = `${n(r.batches)} batch${r.batches === 1 ? '' : 'es'}`;
  sayHeadline(f, say, paint, inputs, batches);
  for (const i of r.inputs) if (i.skipped > 0) say(`  ${i.name}: resumed after record ${n(i.skipped)}`);
  sayRejected(f, say, paint, kind);
  if (!r.dryRun && r.acknowledged.byCount + r.acknowledged.bare > 0) {
    say(`acknowledged: ${n(r.acknowledged.byCount)} records by the node's count, ${n(r.acknowledged.bare)} by a 2xx that carried no count`);
  }
  say(`retries ${n(r.retries)}, ${humanBytes(r.bytes)} read, ${r.seconds.toFixed(1)}s, ${n(f.rate)} records/s`);
  if (ctx.verbose) say(`peak RSS ${humanBytes(process.resourceUsage().maxRSS * 1024)}`);
  if (r.stopped === 'max-errors') say(`stopped: more than ${f.opts.maxErrors} records rejected`, paint.red);
  if (r.stopped === 'nodes-down' && to === 'owners')
    say(
      `stopped: every owner a batch went to failed it (${r.nodes.find((x) => x.lastError)?.lastError ?? ''}); its records are in the rejects file, the rest of the input was not read`,
      paint.red,
    );
  else if (r.stopped === 'nodes-down')
    say(
      `stopped: a batch failed on every node after retries (${r.nodes.find((x) => x.lastError)?.lastError ?? ''}); its records are in the rejects file, the rest of the input was not read`,
      paint.red,
    );
  if (r.stopped === 'interrupted')
    say(r.statePath ? 'interrupted: acknowledged records are saved' : 'interrupted before any batch was acknowledged: run it again to start over', paint.yellow);
  if (r.inputError) say(`stopped: ${r.inputError.message}`, paint.red);
  if (f.resume) {
    say(`to continue: ${f.resume.command} (state: ${r.statePath})`);
    if (f.resume.headers.length) say(`  (header values are not repeated: put back the value of ${[...new Set(f.resume.headers)].join(', ')} where it says <... value>)`);
  }
  let text = `${out.join('\n')}\n`;
  if (showsNodes(f)) text += nodeTable(f, ctx);
  return text;
}

/** Says what a line of the summary says: escaped, then painted. */
type Say = (text: string, colour?: (s: string) => string) => void;
type Paint = ReturnType<typeof painter>;

/** The first line: what was read and where it went, per `--to` (yellow when not every record got there). */
function sayHeadline(f: Facts, say: Say, paint: Paint, inputs: string, batches: string): void {
  const { r, route } = f;
  const to = route.to;
  const nodeCount = route.clients.length;
  const copies = route.ring?.writeCopies;
  const invalid = f.invalid;
  const n = thousands;
  if (r.dryRun) {
    say(`dry run: read ${inputs}, would write ${n(r.read - r.rejected)} in ${batches} to ${nodeCount} node${nodeCount === 1 ? '' : 's'} (--to ${to})`);
  } else if (to === 'owners') {
    // The headline says whether every record reached all of its owners; a node that failed must not hide in "wrote N".
    const complete = r.writtenToSome === 0 && r.failedRecords === 0 && r.rejectedByNode === 0;
    // Records replayed from owner-named rejects lines go to that one owner: say so rather than "all of its owners".
    const named =
      r.toNamedOwner === 0
        ? ''
        : r.toNamedOwner >= r.read - invalid
          ? ' (each to the owner its rejects-file line names)'
          : ` (${n(r.toNamedOwner)} of them to the one owner their rejects-file line names)`;
    const where = complete
      ? r.toNamedOwner > 0 && r.toNamedOwner >= r.read - invalid
        ? `wrote ${n(r.written)} to their owners${named}`
        : `wrote ${n(r.written)}, each to all of its ${copies} owner${copies === 1 ? '' : 's'}${named}`
      : r.written > 0
        ? `wrote ${n(r.written)} to all of their owners and ${n(r.writtenToSome)} to some of their owners only`
        : `wrote ${n(r.writtenToSome)} to some of their owners only, none to all of them`;
    say(`read ${inputs}, ${where}, in ${batches} to ${nodeCount} nodes (--to owners)`, complete ? undefined : paint.yellow);
  } else if (to === 'primary') {
    const complete = r.failedRecords === 0 && r.rejectedByNode === 0;
    const fallback = r.fallbackRecords > 0 ? ` (${n(r.fallbackRecords)} of them to a fallback owner)` : '';
    say(
      `read ${inputs}, wrote ${n(r.written)}, each once to its primary owner${fallback}, in ${batches} to ${nodeCount} nodes (--to primary)`,
      complete ? undefined : paint.yellow,
    );
    for (const x of fallbacksOf(r)) say(`  ${n(x.records)} record${x.records === 1 ? '' : 's'} went past ${x.node} to the next owner: ${x.reason}`, paint.yellow);
  } else if (to === 'all') {
    // "Written" with --to all is what every node took; a node that took less must not turn the headline into "wrote 0".
    const complete = r.writtenToSome === 0 && r.nodes.every((x) => x.failedBatches === 0);
    const where = complete
      ? `wrote ${n(r.written)} to every node`
      : r.written > 0
        ? `wrote ${n(r.written)} to every node and ${n(r.writtenToSome)} more to some nodes only`
        : `wrote ${n(r.writtenToSome)} to some nodes only, none to every node`;
    say(`read ${inputs}, ${where}, in ${batches} to ${nodeCount} nodes (--to all)`, complete ? undefined : paint.yellow);
  } else {
    say(`read ${inputs}, wrote ${n(r.written)} in ${batches} to ${nodeCount} node${nodeCount === 1 ? '' : 's'} (--to any)`);
  }
}

/** What was rejected, in this run and in the earlier runs it resumed, and how to replay it. */
function sayRejected(f: Facts, say: Say, paint: Paint, kind: string): void {
  const { r } = f;
  const to = f.route.to;
  const invalid = f.invalid;
  const n = thousands;
  if (r.rejected > 0) {
    const parts = [
      invalid > 0 ? `${n(invalid)} invalid` : '',
      r.rejectedByNode > 0 ? `${n(r.rejectedByNode)} refused by a node` : '',
      r.failedRecords > 0 ? `${n(r.failedRecords)} in ${n(r.failedBatches)} batch(es) that failed after retries` : '',
    ]
      .filter(Boolean)
      .join(', ');
    say(`rejected ${n(r.rejected)} (${parts})${r.rejectsPath ? `: see ${r.rejectsPath}` : ''}`, paint.yellow);
    const owedTo = r.nodes.filter((x) => x.failedRecords > 0).map((x) => x.node);
    if (to === 'owners' && owedTo.length > 0 && r.rejectsPath) {
      say(
        `  once ${owedTo.join(', ')} ${owedTo.length === 1 ? 'is' : 'are'} back: tsnode write ${r.rejectsPath}${kind ? ` --kind${kind}` : ''} (with the same node flags) sends each of those records to the node its line names`,
      );
    }
  } else say('rejected 0');
  if (r.earlier) {
    const e = r.earlier;
    const before = earlierRejected(r);
    const parts = [e.invalid ? `${n(e.invalid)} invalid` : '', e.refused ? `${n(e.refused)} refused by a node` : '', e.notWritten ? `${n(e.notWritten)} not written` : '']
      .filter(Boolean)
      .join(', ');
    say(
      `earlier run(s), up to where this one resumed: wrote ${n(e.written)}${(to === 'all' || to === 'owners') && e.writtenToSome ? ` (and ${n(e.writtenToSome)} to some ${to === 'owners' ? 'of their owners' : 'nodes'} only)` : ''}, rejected ${n(before)}${before ? ` (${parts})${r.rejectsPath ? `: in ${r.rejectsPath}` : ''}` : ''}`,
      before ? paint.yellow : undefined,
    );
    if (before && r.stopped === 'done')
      say(`  fix them, then replay the rejects file: tsnode write ${r.rejectsPath ?? '<rejects file>'}${kind ? ` --kind${kind}` : ''} (with the same node flags)`);
  }
}

/** One row per node: what it took, and what it did not (its records are in the rejects file, naming it). */
function nodeTable(f: Facts, ctx: CliContext): string {
  const { r } = f;
  if (r.dryRun) {
    return renderTable(
      ['node', 'records'],
      r.nodes.map((x) => [x.node, thousands(x.records)]),
      { colour: ctx.colour, width: tableWidth(ctx), align: [undefined, 'right'] },
    );
  }
  if (f.route.to === 'primary') return primaryTable(f, ctx);
  const rows = r.nodes.map((x) => [
    x.node,
    thousands(x.records),
    thousands(x.batches),
    thousands(x.rejected),
    thousands(x.failedRecords),
    // The error names its node already: the row does.
    x.failedBatches > 0 ? `${x.failedBatches} request${x.failedBatches === 1 ? '' : 's'} failed: ${(x.lastError ?? '').replace(`${x.node}: `, '')}` : '',
  ]);
  return renderTable(['node', 'written', 'requests', 'refused', 'not written', 'error'], rows, {
    colour: ctx.colour,
    width: tableWidth(ctx),
    align: [undefined, 'right', 'right', 'right', 'right'],
    paint: (cell, column, row, p) => (column >= 4 && r.nodes[row]!.failedBatches > 0 && cell !== '' ? p.red(cell) : cell),
  });
}

/** `--to primary`: what each node took as the primary owner and as a fallback, what it passed on, and its bytes. */
function primaryTable(f: Facts, ctx: CliContext): string {
  const { r } = f;
  const n = thousands;
  const rows = r.nodes.map((x) => [
    x.node,
    n(x.primaryRecords),
    n(x.fallbackRecords),
    n(x.handedOn),
    humanBytes(x.bytesSent),
    n(x.rejected),
    n(x.failedRecords),
    x.failedBatches > 0 ? `${x.failedBatches} request${x.failedBatches === 1 ? '' : 's'} failed: ${(x.lastError ?? '').replace(`${x.node}: `, '')}` : '',
  ]);
  return renderTable(['node', 'as primary', 'as fallback', 'passed on', 'sent', 'refused', 'not written', 'error'], rows, {
    colour: ctx.colour,
    width: tableWidth(ctx),
    align: [undefined, 'right', 'right', 'right', 'right', 'right', 'right'],
    paint: (cell, column, row, p) => (column >= 6 && r.nodes[row]!.failedBatches > 0 && cell !== '' ? p.red(cell) : cell),
  });
}

import { resolve } from 'node:path';
import type { Ora } from 'ora';
import { redactUrlCredentials } from '../../../client/headers.js';
import { DEFAULT_RETRY } from '../../../client/retry.js';
import { SourceError, RecordSyntaxError, type RejectEntry } from '../../../records/index.js';
import {
  writeRecords,
  ReplayUsageError,
  ReplayStateError,
  UnsafeFileError,
  type ReplayEvent,
  type ReplayProgress,
  type ReplayResult,
} from '../../../replay/index.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { openNetwork, parseCount, parseSize } from '../../network.js';
import { parseNodeEntry, resolveNodes } from '../../nodes.js';
import { seededRing } from '../../node-source.js';
import { DiscoveryError } from '../../../client/discovery.js';
import { planWriteRoute, type WriteRoute } from './route.js';
import { escapeText } from '../../render/terminal-text.js';
import { painter } from '../../runtime.js';
import type { WriteFlags } from './command.js';

export { parseSize } from '../../network.js';

function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

function humanDuration(s: number): string {
  if (!Number.isFinite(s)) return '?';
  if (s < 60) return `${Math.round(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function progressLine(p: ReplayProgress): string {
  const secs = p.elapsedMs / 1000;
  const rate = secs > 0 ? Math.round(p.read / secs) : 0;
  let where = `${p.read.toLocaleString('en-US')} records read`;
  let eta = '';
  if (p.bytesTotal !== undefined && p.bytesTotal > 0) {
    const frac = Math.min(1, p.bytesRead / p.bytesTotal);
    where = `${(frac * 100).toFixed(1)}% (${humanBytes(p.bytesRead)} of ${humanBytes(p.bytesTotal)}), ${p.read.toLocaleString('en-US')} records read`;
    if (frac > 0 && frac < 1) eta = `, ETA ${humanDuration((secs / frac) * (1 - frac))}`;
  }
  return `${where}, ${p.written.toLocaleString('en-US')} written, ${rate.toLocaleString('en-US')} records/s${eta}, ${p.retries} retries, ${p.rejected} rejected`;
}

export async function writeAction(opts: WriteFlags & { files: string[] }, ctx: CliContext): Promise<ExitCode> {
  const files = opts.files;
  const batchSize = parseCount(opts.batchSize, '--batch-size', 1);
  const batchBytes = parseSize(opts.batchBytes, '--batch-bytes');
  const concurrency = parseCount(opts.concurrency, '--concurrency', 1);
  if (opts.smallestSpan !== undefined) parseCount(opts.smallestSpan, '--smallest-span', 1);
  const maxErrors = opts.maxErrors === undefined ? undefined : parseCount(opts.maxErrors, '--max-errors', 0);
  const retries = parseCount(opts.retries, '--retries');
  let rate: number | undefined;
  if (opts.rate !== undefined) {
    rate = Number(opts.rate);
    if (!/^\d+(\.\d+)?$/.test(opts.rate.trim()) || !(rate > 0)) throw new UsageError(`--rate: ${JSON.stringify(opts.rate)} is not a positive number of records per second`, 'e.g. --rate 50000');
  }
  if (opts.node !== undefined && opts.nodes !== undefined) throw new UsageError('--node and --nodes both given', 'use --node for one node or --nodes for a list, not both');
  if (opts.force && !opts.resume) throw new UsageError('--force only makes sense with --resume');
  // Each input keeps its own resume position, by name: the same input twice would share one.
  const seen = new Set<string>();
  for (const f of files) {
    const key = f === '-' ? '-' : resolve(ctx.cwd, f);
    if (seen.has(key)) throw new UsageError(`input ${JSON.stringify(f)} is named twice`, 'name each file once (its records would be written twice, and its resume position mixed up)');
    seen.add(key);
  }
  if (opts.strict && opts.dryRun) ctx.log.debug('--strict with --dry-run: validating only');

  let nodes: string[];
  if (opts.node !== undefined) {
    try {
      nodes = [parseNodeEntry(opts.node)];
    } catch (err) {
      throw new UsageError(`--node: ${(err as Error).message}`, 'e.g. --node http://127.0.0.1:8112');
    }
  } else {
    const list = resolveNodes({ flag: opts.nodes, env: ctx.env, cwd: ctx.cwd });
    list.warnings.forEach((w) => ctx.log.warn(w));
    nodes = list.nodes;
  }

  const first = files[0]!;
  const base = first === '-' ? resolve(ctx.cwd, 'tsnode') : resolve(ctx.cwd, first);
  const rejectsPath = opts.rejects !== undefined ? resolve(ctx.cwd, opts.rejects) : `${base}${first === '-' ? '-rejects.ndjson' : '.rejects.ndjson'}`;
  const statePath = opts.state !== undefined ? resolve(ctx.cwd, opts.state) : `${base}${first === '-' ? '-state.json' : '.tsnode-state.json'}`;

  const paint = painter(ctx.colourErr);
  const net = openNetwork(opts, ctx, { connectionsPerNode: Math.max(concurrency + 2, 8) });
  let route: WriteRoute;
  try {
    route = await planWriteRoute(opts, nodes, ctx, net, seededRing(opts));
  } catch (err) {
    await net.close();
    if (err instanceof DiscoveryError) throw new UsageError(err.message, err.hint);
    throw err;
  }
  let spinner: Ora | undefined;
  let latest: ReplayProgress | undefined;
  let timer: NodeJS.Timeout | undefined;
  let shownRejects = 0;
  // --strict names the first invalid records on stderr; the count is the result's.
  const invalidShown: RejectEntry[] = [];
  const onEvent = (e: ReplayEvent): void => {
    const say = (m: string, warn = false): void => {
      if (spinner) spinner.clear();
      if (warn) ctx.log.warn(m);
      else ctx.log.info(m);
      if (spinner) spinner.render();
    };
    switch (e.type) {
      case 'node-down':
        say(
          route.to === 'owners'
            ? `${e.node} is failing (${e.error}); its records go to the rejects file (naming it) for ${Math.round((e.untilMs - ctx.now()) / 1000)}s, then it is tried again`
            : `${e.node} is failing (${e.error}); sending to the other nodes for ${Math.round((e.untilMs - ctx.now()) / 1000)}s`,
          true,
        );
        break;
      case 'node-up':
        say(`${e.node} is taking writes again`);
        break;
      case 'batch-failed':
        say(`batch ${e.source} records ${e.firstRecord}-${e.lastRecord} not written: ${e.error}`, true);
        break;
      case 'warning':
        say(e.message, true);
        break;
      case 'rejected':
        if (opts.strict) {
          if (invalidShown.length < STRICT_SHOWN) invalidShown.push(e.entry);
        } else if (opts.dryRun || ctx.verbose) {
          if (shownRejects < 20) say(describeReject(e.entry), true);
          shownRejects++;
        }
        break;
      case 'input':
        ctx.log.debug(`${e.name}: ${e.format}${e.resumedAt ? `, resuming after record ${e.resumedAt.record} (${e.seeked ? `seeked to byte ${e.resumedAt.byte}` : 'skipping records'})` : ''}`);
        break;
    }
  };
  // A spinner needs a terminal width: ora counts wrapped lines to erase, and a pty without a size
  // (columns 0) makes that count explode. The line is also cut to one row so nothing wraps.
  const columns = ctx.stderr.columns ?? 0;
  // ora (and what it pulls in) costs ~0.1 s to load: only a terminal that shows the spinner pays for it.
  // discardStdin off: ora's default puts the terminal in raw mode to swallow keystrokes, and
  // then Ctrl-C (and Ctrl-\, Ctrl-Z) no longer make signals: the write could not be stopped.
  if (ctx.interactive && columns >= 20) spinner = (await import('ora')).default({ text: 'starting', stream: ctx.stderr, color: 'cyan', discardStdin: false }).start();
  const fit = (line: string): string => (line.length > columns - 3 ? `${line.slice(0, Math.max(0, columns - 4))}…` : line);
  timer = setInterval(
    () => {
      if (!latest) return;
      if (spinner) spinner.text = fit(progressLine(latest));
      else ctx.log.info(progressLine(latest));
      if (ctx.verbose && !spinner) {
        const m = process.memoryUsage();
        ctx.log.debug(`memory: rss ${humanBytes(m.rss)}, heap ${humanBytes(m.heapUsed)} of ${humanBytes(m.heapTotal)}, buffers ${humanBytes(m.arrayBuffers)}`);
      }
    },
    spinner ? 250 : 5000,
  );
  timer.unref();

  let result: ReplayResult;
  try {
    result = await writeRecords(files, {
      clients: route.clients,
      to: route.to,
      ...(route.ring ? { ring: route.ring } : {}),
      format: opts.format as 'auto' | 'json' | 'ndjson',
      batchSize,
      batchBytes,
      concurrency,
      method: opts.method === 'put' ? 'PUT' : 'POST',
      rejectsPath,
      ...(maxErrors !== undefined ? { maxErrors } : {}),
      ...(rate !== undefined ? { rate } : {}),
      smallestSpan: route.smallestSpan,
      strict: opts.strict,
      statePath,
      resume: opts.resume,
      force: opts.force,
      dryRun: opts.dryRun,
      signal: ctx.signal,
      stdin: ctx.stdin,
      ackRetry: { ...DEFAULT_RETRY, retries },
      onProgress: (p) => (latest = p),
      onEvent,
      now: ctx.now,
    });
  } catch (err) {
    spinner?.stop();
    if (err instanceof ReplayUsageError || err instanceof ReplayStateError) throw new UsageError(err.message, err.hint);
    if (err instanceof UnsafeFileError) throw new UsageError(err.message);
    if (err instanceof SourceError || err instanceof RecordSyntaxError) throw new UsageError(err.message);
    throw err;
  } finally {
    clearInterval(timer);
    await net.close();
  }
  spinner?.stop();
  return report(result, opts, ctx, paint, route, invalidShown);
}

/** How many invalid records --strict names on stderr. */
const STRICT_SHOWN = 10;

function describeReject(e: RejectEntry): string {
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

function exitCodeOf(r: ReplayResult): ExitCode {
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

function report(r: ReplayResult, opts: WriteFlags, ctx: CliContext, paint: ReturnType<typeof painter>, route: WriteRoute, invalidShown: readonly RejectEntry[]): ExitCode {
  const code = exitCodeOf(r);
  const to = route.to;
  const nodeCount = route.clients.length;
  const copies = route.ring?.writeCopies;
  const rate = r.seconds > 0 ? Math.round(r.read / r.seconds) : r.read;
  const invalid = r.rejected - r.rejectedByNode - r.failedRecords;
  const resume =
    r.statePath && (r.stopped === 'interrupted' || r.stopped === 'max-errors' || r.stopped === 'input-error' || r.stopped === 'nodes-down') ? resumeCommand(process.argv.slice(2)) : undefined;
  const resumeHint = resume ? `to continue: ${resume.command} (state: ${r.statePath})` : undefined;
  const headerNote = resume?.headers.length
    ? `  (header values are not repeated: put back the value of ${[...new Set(resume.headers)].join(', ')} where it says <... value>)`
    : undefined;
  if (r.stopped === 'strict') {
    // The records that stopped it, where a person looks for errors: stderr, first ones named.
    ctx.log.error(`--strict: ${r.rejected.toLocaleString('en-US')} invalid record${r.rejected === 1 ? '' : 's'}, nothing was sent`);
    for (const e of invalidShown) ctx.log.info(`  ${describeReject(e)}`);
    if (r.rejected > invalidShown.length) ctx.log.info(`  ... and ${(r.rejected - invalidShown.length).toLocaleString('en-US')} more`);
    if (r.rejectsPath) ctx.log.info(`  every one of them is in ${r.rejectsPath}`);
  }
  if (opts.output === 'json') {
    const doc: Record<string, unknown> = {
      status: r.stopped,
      to,
      ring: route.targets ? { hash: route.targets.ring.hash, writeCopies: route.targets.ring.topology.writeCopies, nodes: route.targets.ring.nodes.length } : null,
      smallestSpan: { seconds: route.smallestSpan, from: route.spanFrom },
      read: r.read,
      written: r.written,
      ...(to === 'all' || to === 'owners' ? { writtenToSome: r.writtenToSome } : {}),
      ...(to === 'owners' ? { toNamedOwner: r.toNamedOwner } : {}),
      acknowledged: r.acknowledged,
      rejected: r.rejected,
      invalid,
      refused: r.rejectedByNode,
      failedRecords: r.failedRecords,
      batches: r.batches,
      failedBatches: r.failedBatches,
      retries: r.retries,
      bytes: r.bytes,
      seconds: Number(r.seconds.toFixed(3)),
      recordsPerSecond: rate,
      rejects: r.rejectsPath ?? null,
      state: r.stopped === 'done' ? null : (r.statePath ?? null),
      dryRun: r.dryRun,
      inputs: r.inputs.map((i) => ({ file: i.name, format: i.format, read: i.read, skipped: i.skipped, position: i.position })),
      earlier: r.earlier ? { ...r.earlier, rejected: earlierRejected(r) } : null,
    };
    if (to === 'all' || to === 'owners' || r.dryRun) {
      doc.nodes = r.nodes.map((n) => ({
        node: n.node,
        batches: n.batches,
        records: n.records,
        acknowledged: { byCount: n.ackedByCount, bare: n.ackedBare },
        failedBatches: n.failedBatches,
        failedRecords: n.failedRecords,
        refused: n.rejected,
        bytesSent: n.bytesSent,
        ...(n.lastError ? { error: n.lastError } : {}),
      }));
    }
    if (r.stopped === 'strict') doc.invalidRecords = invalidShown.map((e) => ({ file: e.file, record: e.record, ...(e.line !== undefined ? { line: e.line } : {}), error: e.error }));
    if (r.inputError) doc.error = r.inputError.message;
    if (resumeHint) doc.resume = resumeHint;
    if (ctx.verbose) doc.maxRssBytes = process.resourceUsage().maxRSS * 1024;
    ctx.stdout.write(`${JSON.stringify(doc)}\n`);
  } else if (r.stopped !== 'strict') {
    const n = (x: number): string => x.toLocaleString('en-US');
    // The summary quotes nodes and inputs (a node's error text among them): every line is escaped
    // before it is painted, as in a table.
    const out: string[] = [];
    const say = (text: string, colour?: (s: string) => string, tail?: { text: string; colour: (s: string) => string }): void => {
      const line = colour ? colour(escapeText(text)) : escapeText(text);
      out.push(tail ? line + tail.colour(escapeText(tail.text)) : line);
    };
    const inputs = `${n(r.read)} records from ${r.inputs.length} input${r.inputs.length === 1 ? '' : 's'}`;
    const batches = `${n(r.batches)} batch${r.batches === 1 ? '' : 'es'}`;
    if (r.dryRun) {
      say(`dry run: read ${inputs}, would write ${n(r.read - r.rejected)} in ${batches} to ${nodeCount} node${nodeCount === 1 ? '' : 's'} (--to ${to})`);
    } else if (to === 'owners') {
      // The headline says whether every record reached all of its owners; a node that failed must not hide in "wrote N".
      const complete = r.writtenToSome === 0 && r.failedRecords === 0 && r.rejectedByNode === 0;
      // Records replayed from owner-named rejects lines go to that one owner: say so rather than "all of its owners".
      const named = r.toNamedOwner === 0 ? '' : r.toNamedOwner >= r.read - invalid ? ' (each to the owner its rejects-file line names)' : ` (${n(r.toNamedOwner)} of them to the one owner their rejects-file line names)`;
      const where = complete
        ? r.toNamedOwner > 0 && r.toNamedOwner >= r.read - invalid
          ? `wrote ${n(r.written)} to their owners${named}`
          : `wrote ${n(r.written)}, each to all of its ${copies} owner${copies === 1 ? '' : 's'}${named}`
        : r.written > 0
          ? `wrote ${n(r.written)} to all of their owners and ${n(r.writtenToSome)} to some of their owners only`
          : `wrote ${n(r.writtenToSome)} to some of their owners only, none to all of them`;
      say(`read ${inputs}, ${where}, in ${batches} to ${nodeCount} nodes (--to owners)`, complete ? undefined : paint.yellow);
    } else if (to === 'all') {
      // "Written" with --to all is what every node took; a node that took less must not turn the headline into "wrote 0".
      const complete = r.writtenToSome === 0 && r.nodes.every((x) => x.failedBatches === 0);
      const where =
        complete
          ? `wrote ${n(r.written)} to every node`
          : r.written > 0
            ? `wrote ${n(r.written)} to every node and ${n(r.writtenToSome)} more to some nodes only`
            : `wrote ${n(r.writtenToSome)} to some nodes only, none to every node`;
      say(`read ${inputs}, ${where}, in ${batches} to ${nodeCount} nodes (--to all)`, complete ? undefined : paint.yellow);
    } else {
      say(`read ${inputs}, wrote ${n(r.written)} in ${batches} to ${nodeCount} node${nodeCount === 1 ? '' : 's'} (--to any)`);
    }
    for (const i of r.inputs) if (i.skipped > 0) say(`  ${i.name}: resumed after record ${n(i.skipped)}`);
    if (r.rejected > 0) {
      const parts = [invalid > 0 ? `${n(invalid)} invalid` : '', r.rejectedByNode > 0 ? `${n(r.rejectedByNode)} refused by a node` : '', r.failedRecords > 0 ? `${n(r.failedRecords)} in ${n(r.failedBatches)} batch(es) that failed after retries` : '']
        .filter(Boolean)
        .join(', ');
      say(`rejected ${n(r.rejected)} (${parts})${r.rejectsPath ? `: see ${r.rejectsPath}` : ''}`, paint.yellow);
      const owedTo = r.nodes.filter((x) => x.failedRecords > 0).map((x) => x.node);
      if (to === 'owners' && owedTo.length > 0 && r.rejectsPath) {
        say(`  once ${owedTo.join(', ')} ${owedTo.length === 1 ? 'is' : 'are'} back: tsnode write ${r.rejectsPath} (with the same node flags) sends each of those records to the node its line names`);
      }
    } else say('rejected 0');
    if (r.earlier) {
      const e = r.earlier;
      const before = earlierRejected(r);
      const parts = [e.invalid ? `${n(e.invalid)} invalid` : '', e.refused ? `${n(e.refused)} refused by a node` : '', e.notWritten ? `${n(e.notWritten)} not written` : ''].filter(Boolean).join(', ');
      say(
        `earlier run(s), up to where this one resumed: wrote ${n(e.written)}${(to === 'all' || to === 'owners') && e.writtenToSome ? ` (and ${n(e.writtenToSome)} to some ${to === 'owners' ? 'of their owners' : 'nodes'} only)` : ''}, rejected ${n(before)}${before ? ` (${parts})${r.rejectsPath ? `: in ${r.rejectsPath}` : ''}` : ''}`,
        before ? paint.yellow : undefined,
      );
      if (before && r.stopped === 'done') say(`  fix them, then replay the rejects file: tsnode write ${r.rejectsPath ?? '<rejects file>'} (with the same node flags)`);
    }
    if (!r.dryRun && r.acknowledged.byCount + r.acknowledged.bare > 0) {
      say(`acknowledged: ${n(r.acknowledged.byCount)} records by the node's count, ${n(r.acknowledged.bare)} by a 2xx that carried no count`);
    }
    if (to === 'all' || to === 'owners' || r.dryRun) {
      for (const node of r.nodes) {
        const base = `  ${node.node}: ${n(node.records)} records${r.dryRun ? '' : ` in ${n(node.batches)} batch${node.batches === 1 ? '' : 'es'}`}`;
        const failed =
          to === 'owners'
            ? `, ${n(node.failedRecords)} records not written in ${node.failedBatches} failed batch${node.failedBatches === 1 ? '' : 'es'} (${node.lastError ?? ''}): in the rejects file for this node`
            : `, ${node.failedBatches} batches failed (${node.lastError ?? ''})`;
        say(base, undefined, node.failedBatches ? { text: failed, colour: paint.red } : undefined);
      }
    }
    say(`retries ${n(r.retries)}, ${humanBytes(r.bytes)} read, ${r.seconds.toFixed(1)}s, ${n(rate)} records/s`);
    if (ctx.verbose) say(`peak RSS ${humanBytes(process.resourceUsage().maxRSS * 1024)}`);
    if (r.stopped === 'max-errors') say(`stopped: more than ${opts.maxErrors} records rejected`, paint.red);
    if (r.stopped === 'nodes-down' && to === 'owners') say(`stopped: every owner a batch went to failed it (${r.nodes.find((x) => x.lastError)?.lastError ?? ''}); its records are in the rejects file, the rest of the input was not read`, paint.red);
    else if (r.stopped === 'nodes-down') say(`stopped: a batch failed on every node after retries (${r.nodes.find((x) => x.lastError)?.lastError ?? ''}); its records are in the rejects file, the rest of the input was not read`, paint.red);
    if (r.stopped === 'interrupted') say(r.statePath ? 'interrupted: acknowledged records are saved' : 'interrupted before any batch was acknowledged: run it again to start over', paint.yellow);
    if (r.inputError) say(`stopped: ${r.inputError.message}`, paint.red);
    if (resumeHint) say(resumeHint);
    if (headerNote) say(headerNote);
    ctx.stdout.write(`${out.join('\n')}\n`);
  }
  if (r.inputError) ctx.log.error(r.inputError.message);
  return code;
}

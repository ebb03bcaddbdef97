import { resolve } from 'node:path';
import type { Ora } from 'ora';
import { SourceError, RecordSyntaxError } from '../../../records/index.js';
import { writeRecords, ReplayUsageError, ReplayStateError, type ReplayEvent, type ReplayProgress, type ReplayResult } from '../../../replay/index.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { openNetwork, parseCount } from '../../network.js';
import { parseNodeEntry, resolveNodes } from '../../nodes.js';
import { painter } from '../../runtime.js';
import type { WriteFlags } from './command.js';

const SIZE_UNITS: Record<string, number> = { b: 1, k: 1000, kb: 1000, kib: 1024, m: 1e6, mb: 1e6, mib: 1024 ** 2, g: 1e9, gb: 1e9, gib: 1024 ** 3 };

/** `4MiB`, `512KiB`, `1MB`, `65536`: a byte size. */
export function parseSize(text: string, field: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = m ? SIZE_UNITS[(m[2] || 'b').toLowerCase()] : undefined;
  if (!m || unit === undefined || Number(m[1]) <= 0) {
    throw new UsageError(`${field}: ${JSON.stringify(text)} is not a size`, 'use bytes or a unit: 65536, 512KiB, 4MiB, 1MB');
  }
  return Math.round(Number(m[1]) * unit);
}

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
  const smallestSpan = parseCount(opts.smallestSpan, '--smallest-span', 1);
  const maxErrors = opts.maxErrors === undefined ? undefined : parseCount(opts.maxErrors, '--max-errors', 0);
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
  const clients = nodes.map((n) => net.client(n));
  let spinner: Ora | undefined;
  let latest: ReplayProgress | undefined;
  let timer: NodeJS.Timeout | undefined;
  let shownRejects = 0;
  const onEvent = (e: ReplayEvent): void => {
    const say = (m: string, warn = false): void => {
      if (spinner) spinner.clear();
      if (warn) ctx.log.warn(m);
      else ctx.log.info(m);
      if (spinner) spinner.render();
    };
    switch (e.type) {
      case 'node-down':
        say(`${e.node} is failing (${e.error}); sending to the other nodes for ${Math.round((e.untilMs - ctx.now()) / 1000)}s`, true);
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
        if (opts.dryRun || ctx.verbose) {
          if (shownRejects < 20) say(`${e.entry.file}: record ${e.entry.record}${e.entry.line !== undefined ? ` (line ${e.entry.line})` : ''}: ${e.entry.error}`, true);
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
  if (ctx.interactive && columns >= 20) spinner = (await import('ora')).default({ text: 'starting', stream: ctx.stderr, color: 'cyan' }).start();
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
      clients,
      to: opts.to as 'any' | 'all',
      format: opts.format as 'auto' | 'json' | 'ndjson',
      batchSize,
      batchBytes,
      concurrency,
      method: opts.method === 'put' ? 'PUT' : 'POST',
      rejectsPath,
      ...(maxErrors !== undefined ? { maxErrors } : {}),
      ...(rate !== undefined ? { rate } : {}),
      smallestSpan,
      strict: opts.strict,
      statePath,
      resume: opts.resume,
      force: opts.force,
      dryRun: opts.dryRun,
      signal: ctx.signal,
      stdin: ctx.stdin,
      onProgress: (p) => (latest = p),
      onEvent,
      now: ctx.now,
    });
  } catch (err) {
    spinner?.stop();
    if (err instanceof ReplayUsageError || err instanceof ReplayStateError) throw new UsageError(err.message, err.hint);
    if (err instanceof SourceError || err instanceof RecordSyntaxError) throw new UsageError(err.message);
    throw err;
  } finally {
    clearInterval(timer);
    await net.close();
  }
  spinner?.stop();
  return report(result, opts, ctx, paint, nodes);
}

/** The command line that continues this run: the same arguments plus --resume. */
function resumeCommand(): string {
  const args = process.argv.slice(2);
  const quote = (a: string): string => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  return ['tsnode', ...args.map(quote), ...(args.includes('--resume') ? [] : ['--resume'])].join(' ');
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
      return r.rejected > 0 || r.failedBatches > 0 ? EXIT.partial : EXIT.ok;
  }
}

function report(r: ReplayResult, opts: WriteFlags, ctx: CliContext, paint: ReturnType<typeof painter>, nodes: string[]): ExitCode {
  const code = exitCodeOf(r);
  const rate = r.seconds > 0 ? Math.round(r.read / r.seconds) : r.read;
  const invalid = r.rejected - r.rejectedByNode - r.failedRecords;
  const resumeHint =
    r.statePath && (r.stopped === 'interrupted' || r.stopped === 'max-errors' || r.stopped === 'input-error' || r.stopped === 'nodes-down') ? `to continue: ${resumeCommand()} (state: ${r.statePath})` : undefined;
  if (opts.output === 'json') {
    const doc: Record<string, unknown> = {
      status: r.stopped,
      read: r.read,
      written: r.written,
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
    };
    if (opts.to === 'all' || r.dryRun) doc.nodes = r.nodes.map((n) => ({ node: n.node, batches: n.batches, records: n.records, failedBatches: n.failedBatches, refused: n.rejected, ...(n.lastError ? { error: n.lastError } : {}) }));
    if (r.inputError) doc.error = r.inputError.message;
    if (resumeHint) doc.resume = resumeHint;
    if (ctx.verbose) doc.maxRssBytes = process.resourceUsage().maxRSS * 1024;
    ctx.stdout.write(`${JSON.stringify(doc)}\n`);
  } else {
    const n = (x: number): string => x.toLocaleString('en-US');
    const out: string[] = [];
    const verb = r.dryRun ? 'would write' : 'wrote';
    out.push(
      `${r.dryRun ? 'dry run: ' : ''}read ${n(r.read)} records from ${r.inputs.length} input${r.inputs.length === 1 ? '' : 's'}, ${verb} ${n(r.dryRun ? r.read - r.rejected : r.written)} in ${n(r.batches)} batch${r.batches === 1 ? '' : 'es'} to ${nodes.length} node${nodes.length === 1 ? '' : 's'} (--to ${opts.to})`,
    );
    for (const i of r.inputs) if (i.skipped > 0) out.push(`  ${i.name}: resumed after record ${n(i.skipped)}`);
    if (r.rejected > 0) {
      const parts = [invalid > 0 ? `${n(invalid)} invalid` : '', r.rejectedByNode > 0 ? `${n(r.rejectedByNode)} refused by a node` : '', r.failedRecords > 0 ? `${n(r.failedRecords)} in ${n(r.failedBatches)} batch(es) that failed after retries` : '']
        .filter(Boolean)
        .join(', ');
      out.push(paint.yellow(`rejected ${n(r.rejected)} (${parts})${r.rejectsPath ? `: see ${r.rejectsPath}` : ''}`));
    } else out.push('rejected 0');
    if (opts.to === 'all' || r.dryRun) {
      for (const node of r.nodes) {
        out.push(`  ${node.node}: ${n(node.records)} records${r.dryRun ? '' : ` in ${n(node.batches)} batches`}${node.failedBatches ? paint.red(`, ${node.failedBatches} batches failed (${node.lastError ?? ''})`) : ''}`);
      }
    }
    out.push(`retries ${n(r.retries)}, ${humanBytes(r.bytes)} read, ${r.seconds.toFixed(1)}s, ${n(rate)} records/s`);
    if (ctx.verbose) out.push(`peak RSS ${humanBytes(process.resourceUsage().maxRSS * 1024)}`);
    if (r.stopped === 'strict') out.push(paint.red(`--strict: ${n(r.rejected)} invalid record(s), nothing was sent`));
    if (r.stopped === 'max-errors') out.push(paint.red(`stopped: more than ${opts.maxErrors} records rejected`));
    if (r.stopped === 'nodes-down') out.push(paint.red(`stopped: a batch failed on every node after retries (${r.nodes.find((x) => x.lastError)?.lastError ?? ''}); its records are in the rejects file, the rest of the input was not read`));
    if (r.stopped === 'interrupted') out.push(paint.yellow(r.statePath ? 'interrupted: acknowledged records are saved' : 'interrupted before any batch was acknowledged: run it again to start over'));
    if (r.inputError) out.push(paint.red(`stopped: ${r.inputError.message}`));
    if (resumeHint) out.push(resumeHint);
    ctx.stdout.write(`${out.join('\n')}\n`);
  }
  if (r.inputError) ctx.log.error(r.inputError.message);
  return code;
}

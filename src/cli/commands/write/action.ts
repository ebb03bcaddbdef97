import { resolve } from 'node:path';
import type { Ora } from 'ora';
import { DEFAULT_RETRY } from '../../../client/retry.js';
import { type RejectEntry } from '../../../records/index.js';
import { writeRecords, type ReplayOptions, type ReplayProgress, type ReplayResult } from '../../../replay/index.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import type { ExitCode } from '../../exit-codes.js';
import { openTarget, type TargetRun } from '../../node-source.js';
import { startSpinner } from '../../render/spinner.js';
import type { WriteOptions } from './options.js';
import { planWriteRoute, type WriteRoute } from './route.js';
import { eventLog, progressTimer } from './progress.js';
import { report } from './render.js';

/** Refuses flags that contradict each other or name an input twice, before anything is read; returns --allow-changed-input (or its old spelling). */
function checkWriteFlags(opts: WriteOptions & { files: string[] }, ctx: CliContext): boolean {
  if (opts.output === 'text') ctx.log.warn('write --output text is deprecated: it is now --output table (the same summary); text goes in the next release');
  // --force is the old spelling: read for one release, with a warning (it means "replace a running sweep" everywhere else).
  if (opts.force && opts.allowChangedInput)
    throw new UsageError('--force and --allow-changed-input both given', '--force is the old spelling of --allow-changed-input: give --allow-changed-input only');
  if (opts.force) ctx.log.warn('write --force is deprecated: use --allow-changed-input (--force means "replace a running sweep" in sweep; this spelling goes in the next release)');
  const allowChangedInput = opts.allowChangedInput || opts.force;
  if (allowChangedInput && !opts.resume)
    throw new UsageError(
      `${opts.force ? '--force' : '--allow-changed-input'} only makes sense with --resume`,
      'it lets --resume continue an input that changed since the saved run',
    );
  if (opts.smallestSpan !== undefined && opts.kind !== 'nnt') {
    throw new UsageError(`--smallest-span: ${opts.kind} records have no rollup span to sit on`, 'drop --smallest-span (it checks the offsets of numeric records, --kind nnt)');
  }
  // Each input keeps its own resume position, by name: the same input twice would share one.
  const seen = new Set<string>();
  for (const f of opts.files) {
    const key = f === '-' ? '-' : resolve(ctx.cwd, f);
    if (seen.has(key))
      throw new UsageError(`input ${JSON.stringify(f)} is named twice`, 'name each file once (its records would be written twice, and its resume position mixed up)');
    seen.add(key);
  }
  if (opts.strict && opts.dryRun) ctx.log.debug('--strict with --dry-run: validating only');
  return allowChangedInput;
}

/** The rejects and state files: the flags', else beside the first input (`tsnode-*` in the working directory for stdin). */
function runFiles(opts: WriteOptions & { files: string[] }, ctx: CliContext): { rejectsPath: string; statePath: string } {
  const first = opts.files[0]!;
  const base = first === '-' ? resolve(ctx.cwd, 'tsnode') : resolve(ctx.cwd, first);
  const rejectsPath = opts.rejects !== undefined ? resolve(ctx.cwd, opts.rejects) : `${base}${first === '-' ? '-rejects.ndjson' : '.rejects.ndjson'}`;
  const statePath = opts.state !== undefined ? resolve(ctx.cwd, opts.state) : `${base}${first === '-' ? '-state.json' : '.tsnode-state.json'}`;
  return { rejectsPath, statePath };
}

/** Opens the network and decides where the records go; closes the network again when that fails. */
async function openRoute(opts: WriteOptions, ctx: CliContext): Promise<{ net: TargetRun['network']; route: WriteRoute }> {
  const run = await openTarget(opts, ctx, {
    command: 'tsnode write',
    connectionsPerNode: Math.max(opts.concurrency + 2, 8),
    ...(opts.node !== undefined ? { node: opts.node } : {}),
  });
  const net = run.network;
  try {
    // --to, else the profile's write_to, else decided from the nodes.
    const to = opts.to ?? run.target.writeTo?.value;
    const toFrom = opts.to !== undefined ? '--to' : run.target.writeTo?.from;
    return { net, route: await planWriteRoute({ kind: opts.kind, to, toFrom, spans: run.target.spans }, run.nodes, ctx, net, run.ring) };
  } catch (err) {
    await net.close();
    throw err;
  }
}

/** The library's options for this run, from the flags and the route. */
function replayOptions(
  opts: WriteOptions & { files: string[] },
  ctx: CliContext,
  route: WriteRoute,
  files: { rejectsPath: string; statePath: string },
  allowChangedInput: boolean,
): ReplayOptions {
  return {
    clients: route.clients,
    to: route.to,
    ...(route.ring ? { ring: route.ring } : {}),
    kind: opts.kind,
    format: opts.format,
    batchSize: opts.batchSize,
    batchBytes: opts.batchBytes,
    concurrency: opts.concurrency,
    method: opts.method === 'put' ? 'PUT' : 'POST',
    rejectsPath: files.rejectsPath,
    ...(opts.maxErrors !== undefined ? { maxErrors: opts.maxErrors } : {}),
    ...(opts.rate !== undefined ? { rate: opts.rate } : {}),
    ...(route.smallestSpan ? { smallestSpan: route.smallestSpan.seconds } : {}),
    ...(route.histogramPeriods?.seconds ? { histogramPeriods: route.histogramPeriods.seconds } : {}),
    strict: opts.strict,
    statePath: files.statePath,
    resume: opts.resume,
    allowChangedInput,
    dryRun: opts.dryRun,
    signal: ctx.signal,
    // Only a run that reads `-` touches stdin (creating process.stdin costs every other run).
    ...(opts.files.includes('-') ? { stdin: ctx.stdin } : {}),
    ackRetry: { ...DEFAULT_RETRY, retries: opts.retries },
    now: ctx.now,
  };
}

export async function writeAction(opts: WriteOptions & { files: string[] }, ctx: CliContext): Promise<ExitCode> {
  const allowChangedInput = checkWriteFlags(opts, ctx);
  const files = runFiles(opts, ctx);
  // Only now, with every flag checked, is anything read or sent (a seed's discovery included).
  const { net, route } = await openRoute(opts, ctx);
  let spinner: Ora | undefined;
  let latest: ReplayProgress | undefined;
  // --strict names the first invalid records on stderr; the count is the result's.
  const invalidShown: RejectEntry[] = [];
  const onEvent = eventLog(route, opts, ctx, () => spinner, invalidShown);
  spinner = await startSpinner(ctx, 'starting');
  const timer = progressTimer(ctx, spinner, () => latest);

  let result: ReplayResult;
  try {
    result = await writeRecords(opts.files, { ...replayOptions(opts, ctx, route, files, allowChangedInput), onProgress: (p) => (latest = p), onEvent });
  } catch (err) {
    spinner?.stop();
    throw err;
  } finally {
    clearInterval(timer);
    await net.close();
  }
  spinner?.stop();
  return report(result, opts, ctx, route, invalidShown);
}

export { describeReject, resumeCommand, STRICT_SHOWN } from './render.js';

/**
 * `--metrics-file <path>`: a run's outcome for node_exporter's textfile collector. The command
 * adds what it learnt (per node and step states, compliance, removals) as it goes; whatever
 * happens (done, partial, refused before anything was sent, an error) the file is written once at
 * the end: to a temp file beside it, flushed, then renamed over it, so the collector never reads
 * half a file.
 */
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { CliContext } from './context.js';
import { UsageError } from './errors.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { renderPrometheus, type MetricFamily } from './render/prometheus.js';
import { reportError } from './runtime.js';

/** What a command collects for its metrics file while it runs. */
export class MetricsRecorder {
  readonly families: MetricFamily[] = [];
  /** A word for the run's outcome (`done`, `partial`, `refused`, `compliant`, ...); set by the command. */
  outcome: string | undefined;
  add(...families: MetricFamily[]): void {
    this.families.push(...families);
  }
}

/** The outcome word an exit code means when the command set none. */
function outcomeOf(exit: ExitCode): string {
  return exit === EXIT.ok ? 'ok' : exit === EXIT.usage ? 'refused' : exit === EXIT.partial ? 'partial' : exit === EXIT.interrupted ? 'interrupted' : 'failed';
}

/** The run's own families: when it ran, how it ended. */
export function runFamilies(command: string, atMs: number, exit: ExitCode, outcome: string): MetricFamily[] {
  const c = { command };
  return [
    {
      name: 'tsnode_last_run_timestamp_seconds',
      help: 'When the last run of the command ended (epoch seconds).',
      type: 'gauge',
      samples: [{ labels: c, value: Math.floor(atMs / 1000) }],
    },
    {
      name: 'tsnode_last_run_exit_code',
      help: 'Exit code of the last run: 0 ok, 1 failed, 2 refused (nothing sent), 3 partial, 130 interrupted.',
      type: 'gauge',
      samples: [{ labels: c, value: exit }],
    },
    { name: 'tsnode_last_run_success', help: '1 when the last run exited 0, else 0.', type: 'gauge', samples: [{ labels: c, value: exit === EXIT.ok ? 1 : 0 }] },
    { name: 'tsnode_last_run_outcome', help: 'The last run outcome, as a label (value always 1).', type: 'gauge', samples: [{ labels: { ...c, outcome }, value: 1 }] },
  ];
}

/** Refuses a path whose directory does not exist, before anything is sent. */
export function checkMetricsPath(path: string, cwd: string): string {
  const full = resolve(cwd, path);
  const dir = dirname(full);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new UsageError(
      `--metrics-file: ${JSON.stringify(path)}: its directory ${dir} does not exist`,
      "e.g. node_exporter's --collector.textfile.directory, /var/lib/node_exporter/textfile_collector/tsnode-retention.prom",
    );
  }
  if (existsSync(full) && statSync(full).isDirectory()) throw new UsageError(`--metrics-file: ${JSON.stringify(path)} is a directory`, 'a file path ending in .prom');
  return full;
}

/** Writes `text` to `path` atomically: a temp file in the same directory, fsynced, renamed over it. */
export function writeFileAtomic(path: string, text: string): void {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const fd = openSync(tmp, 'w', 0o644);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Runs a command's body and writes its metrics file afterwards, however it ended. An error that
 * escapes the body is reported here (as the runner would) so its exit code can be written too.
 * Without `path` it only runs the body.
 */
export async function withMetricsFile(path: string | undefined, command: string, ctx: CliContext, body: (m: MetricsRecorder) => Promise<ExitCode>): Promise<ExitCode> {
  if (path === undefined) return body(new MetricsRecorder());
  const full = checkMetricsPath(path, ctx.cwd);
  const m = new MetricsRecorder();
  let exit: ExitCode;
  try {
    exit = await body(m);
  } catch (err) {
    exit = reportError(err, ctx);
  }
  try {
    writeFileAtomic(full, renderPrometheus([...runFamilies(command, ctx.now(), exit, m.outcome ?? outcomeOf(exit)), ...m.families]));
    ctx.log.debug(`metrics written to ${full}`);
  } catch (err) {
    ctx.log.error(`--metrics-file: could not write ${full}: ${(err as Error).message}`);
    if (exit === EXIT.ok) return EXIT.failed;
  }
  return exit;
}

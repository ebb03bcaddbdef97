/**
 * What the destructive commands (sweep, sweep cancel, retention apply, delete) say about a run around its
 * result: the checks' notes, a refusal's lines and hints, the ring nodes a partial run left out,
 * the journal and the lock the run core uses. Shared here so the three say it alike.
 */
import { join } from 'node:path';
import type { ClusterCheckReport, CoverageOutcome } from '../../client/sweep-checks.js';
import { preflightProblem, type SweepRefusedError } from '../../client/sweep-preflight.js';
import type { ResolvedTarget } from '../config/target.js';
import type { CliContext } from '../context.js';
import { Journal, journalPath, readJournal, stateDir, type JournalEntry, type JournaledCoverage } from '../journal.js';
import { describeTime } from '../time.js';
import type { HeaderPrefix } from '../../protocol/constants.js';

/** The coverage as the journal carries it (null: not checked, e.g. a dry run). A file format: keys kept as they are. */
export function journaledCoverage(c: CoverageOutcome | undefined): JournaledCoverage | null {
  return c ? { verdict: c.verdict, hash: c.hash, missing: c.missing, problems: c.problems, allowed: c.allowed } : null;
}

/** Where a run's nodes came from and with which settings: every document of a run carries it. */
export interface RunTarget {
  /** `--nodes nodes.txt`, `profile prod`, `--seed http://db1:8112`. */
  origin: string;
  /** The profile whose settings applied, if any. */
  profile: string | null;
  headerPrefix: HeaderPrefix;
}

/** The target as results and documents name it. */
export function runTarget(target: ResolvedTarget): RunTarget {
  return { origin: target.origin, profile: target.profile?.name ?? null, headerPrefix: target.headerPrefix.value };
}

/** Lines for stderr after a check: what it found or could not check; the missing nodes a partial run leaves alone. */
export function logReport(ctx: CliContext, report: ClusterCheckReport | undefined): void {
  if (!report) return;
  for (const note of report.notes) ctx.log.info(note);
  if (report.coverage.allowed && report.coverage.problems.length) {
    for (const p of report.coverage.problems) ctx.log.warn(`${p} (going ahead: --allow-partial)`);
  }
}

/** The hint of a refusal that a coverage problem caused. */
export function coverageHint(report: ClusterCheckReport | undefined): string {
  return report && report.coverage.problems.length && !report.coverage.allowed ? '--allow-partial to sweep the listed nodes anyway (the missing ones keep their data)' : '';
}

/** Under the table: the ring nodes a partial run did not reach. */
export function missingFooter(report: ClusterCheckReport | undefined, what = 'not swept'): string {
  const c = report?.coverage;
  if (!c || !c.allowed || c.missing.length === 0) return '';
  return `\nring nodes not in the list, ${what} (--allow-partial): ${c.missing.map((m) => `${m.id} (${m.url})`).join(', ')}\n`;
}

/** The hint for a node without the sweep API: which stores have it, and what checks such a node instead. */
export const NO_SWEEP_API_HINT =
  'a store with /sweep_delete (versions 0.11.6 to 0.19.22, or a tsnode reference node; 0.19.23 removed it), or, where a node keeps its data by its own retention config, tsnode retention verify to check what it keeps';

/**
 * The hint for nodes that gave no status, fitting their silence: a node that accepts connections
 * and does not answer (frozen, overloaded) wants waiting or a restart, one that refuses wants
 * starting; `--skip-unreachable` is offered only when other nodes answered (`total` nodes asked),
 * with what it does (`skipWhat`: "to run on the others ...").
 */
export function silentNodesHint(err: SweepRefusedError, total: number, skipWhat: string): string {
  const silent = err.unreachable.filter((u) => u.error?.code !== 'no_sweep_api');
  if (!silent.length) return '';
  const frozen = silent.filter((u) => u.error?.code === 'timeout').map((u) => u.node);
  const down = silent.filter((u) => u.error?.code !== 'timeout').map((u) => u.node);
  const hints = [
    frozen.length
      ? `${frozen.join(', ')} accept${frozen.length === 1 ? 's' : ''} connections but do${frozen.length === 1 ? 'es' : ''} not answer (frozen or overloaded): wait and run again, or restart ${frozen.length === 1 ? 'it' : 'them'}`
      : '',
    down.length ? `start ${down.join(', ')} (or correct the node list), then run again` : '',
    total > err.unreachable.length ? `--skip-unreachable ${skipWhat}` : '',
  ];
  return hints.filter(Boolean).join('; ');
}

/** A refusal's lines on stderr: each busy node with what it runs, each unreachable node, each problem. */
export function logRefusal(ctx: CliContext, err: SweepRefusedError, busyLine: (b: SweepRefusedError['busy'][number]) => string): void {
  for (const b of err.busy) ctx.log.error(busyLine(b));
  for (const u of err.unreachable)
    ctx.log.error(
      `${u.node} ${preflightProblem(u.error)
        .replace(/^unreachable:/, u.error?.code === 'timeout' ? 'does not answer:' : 'is unreachable:')
        .replace(/^no sweep API:/, 'has no sweep API:')}`,
    );
  for (const p of err.problems) ctx.log.error(p.node ? `${p.node}: ${p.message}` : p.message);
}

/** What a busy node runs, with its delete times. */
export function busyText(b: SweepRefusedError['busy'][number]): string {
  return b.running.map((t) => `${t}${b.status?.[t].timestamp !== undefined ? ` before ${describeTime(b.status[t].timestamp * 1000)}` : ''}`).join(', ');
}

/** The journal a run writes to (`--journal`, else the state dir's). */
export function openJournal(ctx: CliContext, flag: string | undefined, keepOpen = false): Journal {
  return new Journal(journalPath({ flag, env: ctx.env, cwd: ctx.cwd }), (m) => ctx.log.warn(m), ctx.now, keepOpen);
}

/** Where the run core keeps its target locks: `<state dir>/locks`. */
export function lockDir(ctx: CliContext): string {
  return join(stateDir(ctx.env), 'locks');
}

/** Without a terminal to ask on, --yes is the only confirmation. */
export function canAsk(ctx: CliContext): boolean {
  return Boolean(ctx.stdin.isTTY && ctx.stderr.isTTY);
}

/** The journal's `sweep.end` lines (a journal that cannot be read has none: the run then counts every left-out node as left). */
export async function pastSweepEnds(path: string, kind: 'sweep.end' | 'delete.end' = 'sweep.end'): Promise<JournalEntry[]> {
  const ends: JournalEntry[] = [];
  try {
    for await (const line of readJournal(path)) if ('entry' in line && line.entry.kind === kind) ends.push(line.entry);
  } catch {
    return [];
  }
  return ends;
}

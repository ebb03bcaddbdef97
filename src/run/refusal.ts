/**
 * A refused run leaves a trace: whatever stops a destructive run before it sends anything (a node
 * busy or unreachable, the ring's coverage, spans, one node under two URLs, another run's lock)
 * becomes one `run.refused` journal record with the reason, and goes to the `onRefused` hook (the
 * metrics file). `guardRun` wraps a run's body with the target lock and this record, so every
 * destructive command gets both the same way.
 */
import type { ClusterCheckReport } from '../client/sweep-checks.js';
import { SweepRefusedError } from '../client/sweep-preflight.js';
import { RetentionError } from '../retention/errors.js';
import { lockTargets, RunLockedError, type TargetLock } from './lock.js';
import type { JournaledDelete, JournaledSweep, RefusalCode, RefusedEntry, RunJournal } from './records.js';

/** Why a run was refused. */
export interface Refusal {
  codes: RefusalCode[];
  /** One line: what stopped it. */
  reason: string;
  /** One line per thing found. */
  problems: string[];
}

/** What names a run in its records: set by the command before anything is sent. */
export interface RunIdentity {
  /** `sweep`, `sweep cancel`, `retention apply`, `delete`. */
  command: string;
  runId: string;
  /** `user@host`. */
  by: string;
  nodes: readonly string[];
  nodeSource: string | null;
  profile?: string | null;
  sweep?: JournaledSweep | null;
  policySource?: string | null;
  fingerprint?: string | null;
  catchUp?: RefusedEntry['catchUp'];
  /** A delete: what it would have deleted. */
  deleting?: JournaledDelete;
}

/** What a refused run told the outside: the record it wrote. */
export interface RefusedRun {
  entry: RefusedEntry;
  error: unknown;
}

/** Hooks every destructive run takes. */
export interface RunRecordHooks {
  /** Where the run's records go (the journal). */
  journal?: RunJournal | undefined;
  /** Called once when the run is refused (after the journal record): the metrics file hangs here. */
  onRefused?: ((r: RefusedRun) => void) | undefined;
}

const IDENTITY = /answer as the same node/;

/** The refusal an error stands for, or undefined when it is not one (a bug, an interruption). */
export function refusalOf(err: unknown, report?: ClusterCheckReport): Refusal | undefined {
  if (err instanceof RunLockedError) return { codes: ['lock'], reason: err.message, problems: [err.message] };
  if (err instanceof RetentionError && err.code === 'unknown_span') return { codes: ['spans'], reason: err.message, problems: [err.message] };
  if (!(err instanceof SweepRefusedError)) return undefined;
  const codes = new Set<RefusalCode>();
  const problems: string[] = [];
  for (const b of err.busy) {
    codes.add('busy');
    problems.push(`${b.node} is already sweeping ${b.running.join(',')}`);
  }
  for (const u of err.unreachable) {
    codes.add('unreachable');
    problems.push(`${u.node} gave no status: ${u.error?.detail ?? 'no answer'}`);
  }
  const coverage = new Set(report?.coverage.problems ?? []);
  for (const p of err.problems) {
    const line = p.node ? `${p.node}: ${p.message}` : p.message;
    problems.push(line);
    if (coverage.has(p.message)) codes.add('coverage');
    else if (IDENTITY.test(p.message)) codes.add('identity');
    else if (/ span /.test(p.message)) codes.add('spans');
    else codes.add('check');
  }
  const list = [...codes];
  return { codes: list, reason: `refused (${list.join(', ')}): ${problems.join('; ')}`, problems };
}

/** Writes the `run.refused` record and calls the hook. */
export function recordRefusal(id: RunIdentity, refusal: Refusal, error: unknown, hooks: RunRecordHooks): RefusedEntry {
  const entry: RefusedEntry = {
    kind: 'run.refused',
    run: id.runId,
    command: id.command,
    by: id.by,
    codes: refusal.codes,
    reason: refusal.reason,
    problems: refusal.problems,
    nodes: [...id.nodes],
    nodeSource: id.nodeSource,
    ...(id.profile !== undefined ? { profile: id.profile } : {}),
    ...(id.sweep !== undefined ? { sweep: id.sweep } : {}),
    ...(id.policySource !== undefined ? { policySource: id.policySource } : {}),
    ...(id.fingerprint !== undefined ? { fingerprint: id.fingerprint } : {}),
    ...(id.deleting ?? {}),
    catchUp: id.catchUp ?? null,
  };
  hooks.journal?.append(entry);
  hooks.onRefused?.({ entry, error });
  return entry;
}

export interface GuardOptions extends RunRecordHooks {
  /** The state directory's lock folder; without it no lock is taken (a script that locks itself). */
  lockDir?: string | undefined;
  onTakeOver?: (message: string) => void;
  /** The cluster report, when the run made one (to tell a coverage refusal from a span one). */
  report?: () => ClusterCheckReport | undefined;
  /** Lock when the body calls `hold()` (a run that finds its nodes by connecting), not before it runs. */
  lockWhenHeld?: boolean;
}

/**
 * Runs `body` holding the target lock of `id.nodes`; a refusal (the lock, or one the body throws)
 * is recorded before it is thrown on. The identity is read when the refusal happens, so the body
 * may fill it in (a plan made inside the run, the nodes found by connecting).
 */
export async function guardRun<T>(id: () => RunIdentity, opts: GuardOptions, body: (hold: () => void) => Promise<T>): Promise<T> {
  let lock: TargetLock | undefined;
  const hold = (): void => {
    if (opts.lockDir === undefined || lock) return;
    const who = id();
    lock = lockTargets(opts.lockDir, who.nodes, { command: `${who.command} ${who.runId}`, by: who.by, run: who.command }, opts.onTakeOver);
  };
  try {
    if (!opts.lockWhenHeld) hold();
    return await body(hold);
  } catch (err) {
    const refusal = refusalOf(err, opts.report?.());
    if (refusal) recordRefusal(id(), refusal, err, opts);
    throw err;
  } finally {
    lock?.release();
  }
}

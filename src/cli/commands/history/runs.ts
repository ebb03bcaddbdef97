/**
 * Turning journal lines into runs: a `sweep.start` and its `sweep.end` (same `run`) are one run;
 * a start without an end is a run with no outcome recorded (killed, or still going). For every
 * sweep run, the nodes left to catch up: the ones not `done`, minus those a later run finished
 * (same types and spans, a delete time at least as late, `done` on that node).
 *
 * A retention run is its `retention.start` lines (one per attempt: the first run and each resume),
 * its `retention.step` lines and its `retention.end` lines, all under one `run`: each node shows
 * where it stands after the latest attempt (`finished`, or the state of the step it stopped at);
 * nodes not finished are left to catch up unless a later run of the same policy on the same nodes
 * (same fingerprint) finished them. A `run.refused` line is a run that stopped before sending
 * anything: every node `refused` with the reason (a missed night stays visible), none left to
 * catch up (nothing of it ran), and a command to run it again only where that is the truthful
 * next step (REFUSED_AGAIN). Pure: the action reads the file and hands the entries in.
 */
import type { JournalEntry, JournaledNode, SweepCancelEntry } from '../../journal.js';
import { sameNodeKey } from '../../nodes.js';
import { catchUpFor, catchUpIsPartial, type CatchUp, type RunCoverage } from '../../../run/catch-up.js';
import type { DataType } from '../../../protocol/index.js';

export interface HistoryNode {
  node: string;
  /** The final state, or null when the run recorded no outcome. */
  state: string | null;
  reason: string;
  /** The run (id) whose later sweep finished this node, when one did. */
  caughtUpBy?: string;
}

/** What a retention run adds to a run: its policy, steps and attempts. */
export interface HistoryRetention {
  policySource: string | null;
  fingerprint: string | null;
  /** The pinned "now", epoch seconds. */
  now: number | null;
  steps: Array<{ step: number; cutoff: number | null; types: string[]; rules: string[] }>;
  /** The latest attempt journaled (1: the first run; each resume adds one). */
  attempt: number;
  runFile: string | null;
  /** The run's outcome after its latest attempt (complete, partial, failed, interrupted), null when not recorded. */
  outcome: string | null;
  /** Per node and step, the latest state journaled. */
  stepsByNode: Record<string, Record<string, { state: string; reason: string; attempt: number }>>;
  /** The command that continues the run, as its start line recorded it (null: an older journal). */
  resume: { command: string; addBack: string[] } | null;
  /** Per step, what its DELETEs asked for (`nnt 60 300`, `nnt all`, `text`): one entry per distinct request. */
  stepScopes: Record<string, string[]>;
}

export interface HistoryRun {
  run: string;
  kind: 'sweep' | 'cancel' | 'retention' | 'delete';
  /** ISO times of the start and end lines (a cancel has one line: both are its time). */
  started: string | null;
  finished: string | null;
  by: string | null;
  nodeSource: string | null;
  /** The profile whose settings the run used, when the journal says (older journals do not). */
  profile: string | null;
  before: number | null;
  types: string[];
  nntRollups: number[] | 'all' | null;
  histogramRollups: number[] | 'all' | null;
  headerPrefix: string | null;
  /** Whether an end line recorded every node's outcome. */
  outcome: boolean;
  exit: number | null;
  summary: Record<string, number> | null;
  nodes: HistoryNode[];
  /** Nodes still not known to be done (after later runs), and the command that repeats the sweep there. */
  pending: string[];
  catchUp: CatchUp | null;
  /** Retention runs only. */
  retention?: HistoryRetention;
  /** Delete runs only: the query (or --metric) and what went, in the journal's words (null: a refused run, which journals neither). */
  delete?: { query: string | null; metric: string | null; scope: string | null; key: string };
  /**
   * The run stopped before sending anything (a `run.refused` line): why, and the command that runs
   * the same sweep again (null where running it again unchanged would only be refused again).
   */
  refused?: { codes: string[]; reason: string; runAgain: CatchUp | null };
  /** The run's receipt (cli/receipts.ts) as journaled, the latest attempt's; unchecked beyond being an object. */
  receipt?: JournaledReceipt;
}

/** A journaled receipt as read back: only what a summary needs is typed, and every value is checked where it is used. */
export interface JournaledReceipt {
  settle_seconds?: unknown;
  nodes?: unknown;
  [field: string]: unknown;
}

/** A journal line as read back: nothing in it is trusted to have its documented type. */
type Sweepish = JournalEntry;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const spans = (v: unknown): number[] | 'all' | null => (v === 'all' ? 'all' : Array.isArray(v) && v.every((x) => typeof x === 'number') ? v : null);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function newSweepRun(e: Sweepish): HistoryRun {
  return {
    run: e.run,
    kind: 'sweep',
    started: null,
    finished: null,
    by: str(e.by),
    nodeSource: str(e.nodeSource),
    profile: str(e.profile),
    before: num(e.before),
    types: strings(e.types),
    nntRollups: spans(e.nntRollups),
    histogramRollups: spans(e.histogramRollups),
    headerPrefix: str(e.headerPrefix),
    outcome: false,
    exit: null,
    summary: null,
    nodes: [],
    pending: [],
    catchUp: null,
  };
}

function endNodes(v: unknown): HistoryNode[] {
  if (!Array.isArray(v)) return [];
  return v
    .filter((n): n is JournaledNode => Boolean(n) && typeof (n as JournaledNode).node === 'string')
    .map((n) => ({
      node: n.node,
      state: typeof n.state === 'string' ? n.state : null,
      reason: typeof n.reason === 'string' ? n.reason : '',
      // A ring node the run left out that an earlier run had swept for the same request: not left.
      ...(typeof n.sweptBy === 'string' ? { caughtUpBy: n.sweptBy } : {}),
    }));
}

/** What a sweep deletes apart from its delete time: runs with the same scope and a later time cover earlier ones. */
function scopeOf(r: HistoryRun): string {
  const sorted = (a: number[] | 'all' | null): unknown => (Array.isArray(a) ? [...a].sort((x, y) => x - y) : a);
  return JSON.stringify([[...r.types].sort(), sorted(r.nntRollups), sorted(r.histogramRollups), r.headerPrefix ?? '']);
}

/**
 * For each node of each sweep not done, the first later run of the same scope, with a delete
 * time at least as late, that finished that node. One pass from the newest run back, keeping per
 * (scope, node) only the runs no other run beats (earlier and at least as late a delete time):
 * their delete times then grow with their position, so a binary search answers each node in
 * O(log n), the whole journal in O(n log n) (a pairwise scan took 90 s on 20,000 runs).
 */
function markCaughtUpSweeps(sweeps: readonly HistoryRun[]): void {
  /** Per scope and node: runs that finished it, newest-processed last, `before` decreasing towards the end. */
  const frontier = new Map<string, Array<{ before: number; run: string }>>();
  for (let i = sweeps.length - 1; i >= 0; i--) {
    const r = sweeps[i]!;
    const scope = scopeOf(r);
    if (r.before !== null) {
      for (const n of r.nodes) {
        if (n.state === 'done') continue;
        const list = frontier.get(`${scope} ${keyOf(n.node)}`);
        if (!list) continue;
        // The last entry with before >= r.before is the earliest such run (befores fall towards the end).
        let lo = 0;
        let hi = list.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (list[mid]!.before >= r.before) lo = mid + 1;
          else hi = mid;
        }
        if (lo > 0) n.caughtUpBy = list[lo - 1]!.run;
      }
    }
    if (r.before === null) continue;
    for (const n of r.nodes) {
      if (n.state !== 'done') continue;
      const key = `${scope} ${keyOf(n.node)}`;
      const list = frontier.get(key) ?? [];
      // This run is earlier than every run in the list: it beats those with a delete time no later.
      while (list.length && list[list.length - 1]!.before <= r.before) list.pop();
      list.push({ before: r.before, run: r.run });
      frontier.set(key, list);
    }
  }
}

function keyOf(node: string): string {
  try {
    return sameNodeKey(node);
  } catch {
    return node;
  }
}

/** Assembles the runs of a journal, oldest first. Entries of kinds it does not know are left out. */
export function assembleRuns(entries: readonly JournalEntry[]): HistoryRun[] {
  const runs = new Map<string, HistoryRun>();
  const carry = new Map<string, { carry: string[]; addBack: string[] }>();
  /** What each sweep's coverage check found (whether its catch-up needs --allow-partial). */
  const coverage = new Map<string, RunCoverage>();
  const receipts = new Map<string, JournaledReceipt>();
  for (const raw of entries) {
    const e = raw;
    if (typeof e.run !== 'string') continue;
    const at = str(e.at);
    if (e.kind === 'receipt') {
      if (e.receipt && typeof e.receipt === 'object' && !Array.isArray(e.receipt)) receipts.set(e.run, e.receipt as JournaledReceipt);
      continue;
    }
    if (e.kind === 'sweep.start' || e.kind === 'sweep.end') {
      let r = runs.get(e.run);
      if (!r || r.kind !== 'sweep') {
        r = newSweepRun(e);
        runs.set(e.run, r);
      }
      carry.set(e.run, { carry: strings(e.carry), addBack: strings(e.addBack) });
      const c = e.coverage as { hash?: unknown; allowed?: unknown } | null | undefined;
      if (c && typeof c === 'object') coverage.set(e.run, { hash: str(c.hash), allowed: c.allowed === true });
      if (e.kind === 'sweep.start') {
        r.started = at;
        if (!r.outcome) r.nodes = strings(e.nodes).map((node) => ({ node, state: null, reason: 'no outcome recorded (tsnode was stopped, or is still running)' }));
      } else {
        r.finished = at;
        r.outcome = true;
        r.exit = num(e.exit);
        r.summary = e.summary && typeof e.summary === 'object' ? (e.summary as Record<string, number>) : null;
        r.nodes = endNodes(e.nodes);
      }
    } else if (e.kind === 'retention.start' || e.kind === 'retention.step' || e.kind === 'retention.end') {
      let r = runs.get(e.run);
      if (!r || r.kind !== 'retention') {
        r = newRetentionRun(e);
        runs.set(e.run, r);
      }
      retentionLine(r, e, at);
    } else if (e.kind === 'delete.start' || e.kind === 'delete.end') {
      const r = runs.get(e.run)?.kind === 'delete' ? runs.get(e.run)! : newDeleteRun(e);
      runs.set(e.run, r);
      deleteLine(r, e, at);
    } else if (e.kind === 'run.refused') {
      runs.set(e.run, refusedRun(e, at));
      const c = e.catchUp && typeof e.catchUp === 'object' ? (e.catchUp as { carry?: unknown; addBack?: unknown }) : null;
      const sweep = e.sweep && typeof e.sweep === 'object' ? (e.sweep as JournalEntry) : null;
      if (sweep) carry.set(e.run, { carry: strings(sweep.carry), addBack: strings(c?.addBack ?? sweep.addBack) });
    } else if (e.kind === 'sweep.cancel') {
      runs.set(e.run, cancelRun(e, at));
    }
  }
  const list = [...runs.values()];
  for (const r of list) {
    const receipt = receipts.get(r.run);
    if (receipt) r.receipt = receipt;
  }
  settleRetention(list.filter((r) => r.kind === 'retention'));
  markCaughtUpDeletes(list.filter((r) => r.kind === 'delete' && !r.refused));
  const sweeps = list.filter((r) => r.kind === 'sweep');
  markCaughtUpSweeps(sweeps);
  settleSweeps(sweeps, coverage, carry);
  return list;
}

/** A `sweep.cancel` journal line as a run: one line, started and finished at once. */
function cancelRun(e: JournalEntry & { run: string }, at: string | null): HistoryRun {
  const c = e as unknown as Partial<SweepCancelEntry> & JournalEntry;
  return {
    ...newSweepRun(e),
    kind: 'cancel',
    started: at,
    finished: at,
    by: str(c.by),
    nodeSource: str(c.nodeSource),
    profile: str(c.profile),
    before: null,
    types: [],
    outcome: true,
    nodes: Array.isArray(c.nodes)
      ? c.nodes
          .filter((n) => n && typeof n.node === 'string')
          .map((n) => ({
            node: n.node,
            state: typeof n.state === 'string' ? n.state : null,
            reason: n.error ?? (n.cancelled?.length ? `was sweeping ${n.cancelled.join(',')}` : 'nothing was running'),
          }))
      : [],
  };
}

/** Each sweep's pending nodes and, when it has a before and types, the command that catches them up. */
function settleSweeps(sweeps: readonly HistoryRun[], coverage: ReadonlyMap<string, RunCoverage>, carry: ReadonlyMap<string, { carry: string[]; addBack: string[] }>): void {
  for (const r of sweeps) {
    if (r.refused) {
      r.refused.runAgain = refusedAgain(r, carry.get(r.run));
      continue;
    }
    r.pending = r.nodes.filter((n) => n.state !== 'done' && !n.caughtUpBy).map((n) => n.node);
    if (r.before !== null && r.types.length) {
      const request = {
        before: r.before,
        types: r.types as DataType[],
        ...(Array.isArray(r.nntRollups) ? { nntRollups: r.nntRollups } : {}),
        ...(Array.isArray(r.histogramRollups) ? { histogramRollups: r.histogramRollups } : {}),
      };
      const partial = catchUpIsPartial(coverage.get(r.run), r.pending.length, r.nodes.length);
      r.catchUp = catchUpFor(request, r.headerPrefix ?? 'X-Service', r.pending, carry.get(r.run), partial) ?? null;
    }
  }
}

/**
 * Refusals that a later try of the same command may get past unchanged (a node back, a sweep
 * ended, a lock released). Coverage, spans, identity and the other checks refuse again until the
 * operator changes something, so no command is offered for them.
 */
const REFUSED_AGAIN: ReadonlySet<string> = new Set(['busy', 'unreachable', 'lock']);

/** The same sweep on the same nodes with the same pinned cut-off, when REFUSED_AGAIN allows (sweeps only). */
function refusedAgain(r: HistoryRun, flags: { carry: string[]; addBack: string[] } | undefined): CatchUp | null {
  if (!r.refused || !r.refused.codes.length || !r.refused.codes.every((c) => REFUSED_AGAIN.has(c))) return null;
  if (r.before === null || !r.types.length) return null;
  const request = {
    before: r.before,
    types: r.types as DataType[],
    ...(Array.isArray(r.nntRollups) ? { nntRollups: r.nntRollups } : {}),
    ...(Array.isArray(r.histogramRollups) ? { histogramRollups: r.histogramRollups } : {}),
  };
  return (
    catchUpFor(
      request,
      r.headerPrefix ?? 'X-Service',
      r.nodes.map((n) => n.node),
      flags,
    ) ?? null
  );
}

/** `--node` and `--since` filters. A run matches `node` when it lists a node of the same key. */
export function filterRuns(runs: readonly HistoryRun[], opts: { sinceMs?: number; node?: string }): HistoryRun[] {
  const key = opts.node !== undefined ? keyOf(opts.node) : undefined;
  return runs.filter((r) => {
    if (opts.sinceMs !== undefined) {
      const t = Date.parse(r.started ?? r.finished ?? '');
      if (Number.isNaN(t) || t < opts.sinceMs) return false;
    }
    return key === undefined || r.nodes.some((n) => keyOf(n.node) === key);
  });
}

// ---------------------------------------------------------------- delete runs

function newDeleteRun(e: Sweepish): HistoryRun {
  const scope = e.scope && typeof e.scope === 'object' ? (e.scope as { kind?: unknown; before?: unknown; types?: unknown }) : null;
  const words = scope?.kind === 'full' ? 'all data and the names' : scope?.kind === 'before' ? `${strings(scope.types).join(',')} data before` : null;
  const metric = e.metric && typeof e.metric === 'object' ? str((e.metric as { metric?: unknown }).metric) : null;
  return {
    ...newSweepRun(e),
    kind: 'delete',
    before: scope?.kind === 'before' ? num(scope.before) : null,
    types: scope?.kind === 'before' ? strings(scope.types) : [],
    // What makes two delete runs the same request (a later one may catch up an earlier one's nodes).
    delete: { query: str(e.query), metric, scope: words, key: JSON.stringify([e.query, e.metric, e.scope, e.account]) },
  };
}

/** A delete run's nodes left that a later run of the same request deleted (or found nothing on) are caught up by it. */
function markCaughtUpDeletes(deletes: readonly HistoryRun[]): void {
  deletes.forEach((r, i) => {
    for (const n of r.nodes) {
      if (n.state === 'deleted' || n.state === 'nothing') continue;
      const later = deletes
        .slice(i + 1)
        .find((x) => x.delete!.key === r.delete!.key && x.nodes.some((m) => keyOf(m.node) === keyOf(n.node) && (m.state === 'deleted' || m.state === 'nothing')));
      if (later) n.caughtUpBy = later.run;
    }
    r.pending = r.pending.filter((p) => !r.nodes.some((n) => n.node === p && n.caughtUpBy));
    if (r.catchUp && r.pending.length === 0) r.catchUp = null;
  });
}

/** A delete run's start (its nodes, no outcome yet) or end (each node's state, the exit, the catch-up the run printed). */
function deleteLine(r: HistoryRun, e: Sweepish, at: string | null): void {
  if (e.kind === 'delete.start') {
    r.started = at;
    if (!r.outcome) r.nodes = strings(e.nodes).map((node) => ({ node, state: null, reason: 'no outcome recorded (tsnode was stopped, or is still running)' }));
    r.pending = r.outcome ? r.pending : r.nodes.map((n) => n.node);
    return;
  }
  r.finished = at;
  r.outcome = true;
  r.exit = num(e.exit);
  r.nodes = endNodes(e.nodes);
  r.pending = r.nodes.filter((n) => n.state !== 'deleted' && n.state !== 'nothing').map((n) => n.node);
  r.catchUp = typeof e.catchUp === 'string' ? { nodes: r.pending, command: e.catchUp, addBack: [] } : null;
}

/** A `run.refused` line: the run it would have been, every node `refused`, nothing sent (exit 2). */
function refusedRun(e: Sweepish, at: string | null): HistoryRun {
  const command = str(e.command) ?? '';
  const sweep = e.sweep && typeof e.sweep === 'object' ? ({ ...e.sweep, run: e.run, kind: 'sweep' } as Sweepish) : e;
  const base = command === 'retention apply' ? newRetentionRun(e) : command === 'delete' ? newDeleteRun(e) : newSweepRun(sweep);
  const reason = str(e.reason) ?? 'refused';
  if (base.retention) {
    base.retention.policySource = str(e.policySource);
    base.retention.fingerprint = str(e.fingerprint);
    base.retention.outcome = 'refused';
    const c = e.catchUp && typeof e.catchUp === 'object' ? (e.catchUp as Record<string, unknown>) : null;
    base.catchUp = c && typeof c.command === 'string' ? { nodes: strings(c.nodes), command: c.command, addBack: strings(c.addBack) } : null;
  }
  return {
    ...base,
    kind: command === 'sweep cancel' ? 'cancel' : base.kind,
    started: at,
    finished: at,
    by: str(e.by),
    nodeSource: str(e.nodeSource),
    profile: str(e.profile),
    outcome: true,
    exit: 2,
    nodes: strings(e.nodes).map((node) => ({ node, state: 'refused', reason })),
    refused: { codes: strings(e.codes), reason, runAgain: null },
  };
}

// ---------------------------------------------------------------- retention runs

function newRetentionRun(e: Sweepish): HistoryRun {
  return {
    ...newSweepRun(e),
    kind: 'retention',
    before: null,
    types: [],
    nntRollups: null,
    histogramRollups: null,
    retention: { policySource: null, fingerprint: null, now: null, steps: [], attempt: 0, runFile: null, outcome: null, stepsByNode: {}, stepScopes: {}, resume: null },
  };
}

function retentionLine(r: HistoryRun, e: Sweepish, at: string | null): void {
  const ret = r.retention!;
  const attempt = num(e.attempt) ?? 1;
  if (e.kind === 'retention.start') {
    r.started ??= at;
    r.by = str(e.by) ?? r.by;
    r.nodeSource = str(e.nodeSource) ?? r.nodeSource;
    r.headerPrefix = str(e.headerPrefix) ?? r.headerPrefix;
    ret.policySource = str(e.policySource) ?? ret.policySource;
    ret.fingerprint = str(e.fingerprint) ?? ret.fingerprint;
    ret.now = num(e.now) ?? ret.now;
    ret.runFile = str(e.runFile) ?? ret.runFile;
    r.profile = str(e.profile) ?? r.profile;
    const resume = e.resume && typeof e.resume === 'object' ? (e.resume as Record<string, unknown>) : null;
    if (resume && typeof resume.command === 'string') ret.resume = { command: resume.command, addBack: strings(resume.addBack) };
    if (Array.isArray(e.steps)) {
      ret.steps = e.steps
        .filter((s): s is Record<string, unknown> => Boolean(s) && typeof s === 'object')
        .map((s) => ({ step: num(s.step) ?? 0, cutoff: num(s.cutoff), types: strings(s.types), rules: strings(s.rules) }));
      r.types = [...new Set(ret.steps.flatMap((s) => s.types))];
    }
    const nodes = strings(e.nodes);
    if (nodes.length) r.nodes = nodes.map((node) => ({ node, state: null, reason: '' }));
    if (attempt >= ret.attempt) {
      // A newer attempt without its end line yet: its outcome is not recorded.
      ret.attempt = attempt;
      r.outcome = false;
      ret.outcome = null;
      r.exit = null;
    }
  } else if (e.kind === 'retention.step') {
    const node = str(e.node);
    const step = num(e.step);
    if (node === null || step === null) return;
    (ret.stepsByNode[node] ??= {})[String(step)] = { state: str(e.state) ?? '?', reason: str(e.reason) ?? '', attempt };
    const scope = stepScope(e);
    const scopes = (ret.stepScopes[String(step)] ??= []);
    if (scope && !scopes.includes(scope)) scopes.push(scope);
  } else {
    if (attempt < ret.attempt) return;
    ret.attempt = attempt;
    r.finished = at;
    r.outcome = true;
    ret.outcome = str(e.outcome);
    r.exit = num(e.exit);
    if (Array.isArray(e.nodes)) {
      r.nodes = e.nodes
        .filter((n): n is Record<string, unknown> => Boolean(n) && typeof n === 'object' && typeof (n as { node?: unknown }).node === 'string')
        .map((n) => {
          const stop = n.stoppedAt && typeof n.stoppedAt === 'object' ? (n.stoppedAt as Record<string, unknown>) : null;
          if (!stop) return { node: n.node as string, state: 'finished', reason: `every step done (${num(n.done) ?? '?'} sent)` };
          return { node: n.node as string, state: str(stop.state) ?? '?', reason: `step ${num(stop.step) ?? '?'}: ${str(stop.reason) ?? ''}` };
        });
    }
    const c = e.catchUp && typeof e.catchUp === 'object' ? (e.catchUp as Record<string, unknown>) : null;
    r.catchUp = c && typeof c.command === 'string' ? { nodes: strings(c.nodes), command: c.command, addBack: strings(c.addBack) } : null;
  }
}

/** What one journaled step asked a node to delete: `nnt 60 300; histogram all; text` (null: nothing readable). */
function stepScope(e: Sweepish): string | null {
  const parts = strings(e.types).map((t) => {
    if (t !== 'nnt' && t !== 'histogram') return t;
    const list = spans(t === 'nnt' ? e.nntRollups : e.histogramRollups);
    return list === null ? t : `${t} ${list === 'all' ? 'all' : list.join(' ')}`;
  });
  return parts.length ? parts.join('; ') : null;
}

/** Nodes without an end line get their progress from the step lines; what is left is what later runs did not finish. */
function settleRetention(runs: HistoryRun[]): void {
  for (const r of runs) {
    if (r.outcome) continue;
    const ret = r.retention!;
    r.nodes = r.nodes.map((n) => {
      const steps = Object.entries(ret.stepsByNode[n.node] ?? {}).sort((a, b) => Number(a[0]) - Number(b[0]));
      const last = steps[steps.length - 1];
      const seen = last ? `; last journaled: step ${last[0]} ${last[1].state.replace(/_/g, ' ')}` : '';
      return { node: n.node, state: null, reason: `no outcome recorded (tsnode was stopped, or is still running)${seen}` };
    });
  }
  // Newest first: per `<fingerprint> <node>`, the earliest later run of the same policy on the same nodes that finished it.
  const finishedBy = new Map<string, string>();
  for (let i = runs.length - 1; i >= 0; i--) {
    const r = runs[i]!;
    const fp = r.retention!.fingerprint;
    if (fp === null) continue;
    for (const n of r.nodes) {
      if (n.state === 'finished') continue;
      const by = finishedBy.get(`${fp} ${keyOf(n.node)}`);
      if (by !== undefined) n.caughtUpBy = by;
    }
    for (const n of r.nodes) if (n.state === 'finished') finishedBy.set(`${fp} ${keyOf(n.node)}`, r.run);
  }
  for (const r of runs) {
    if (r.refused) {
      // Nothing of it ran: no node left behind by it (its reason says why it did not run).
      r.pending = [];
      r.catchUp = null;
      continue;
    }
    r.pending = r.nodes.filter((n) => n.state !== 'finished' && !n.caughtUpBy).map((n) => n.node);
    if (r.catchUp && r.pending.length) r.catchUp = { ...r.catchUp, nodes: r.pending };
    else if (!r.outcome && r.pending.length) {
      // Killed before its end line: a re-run of the same command continues it; --resume names it.
      // (as its start line recorded it: with the profile and the flags that reached its nodes)
      const resume = r.retention?.resume;
      r.catchUp = { nodes: r.pending, command: resume?.command ?? `tsnode retention apply --resume ${r.run}`, addBack: resume ? [...resume.addBack] : [] };
    } else r.catchUp = null;
  }
}

/** `12 shard(s) removed, 41.5 MB freed so far`: a journaled receipt in one line ('' without one; `?` for what it does not say). */
export function receiptSummary(receipt: JournaledReceipt | undefined): string {
  if (!receipt || !Array.isArray(receipt.nodes)) return '';
  let shards = 0;
  let freed: number | null = null;
  let incomplete = 0;
  for (const n of receipt.nodes as Array<Record<string, unknown>>) {
    if (!n || typeof n !== 'object') continue;
    if (typeof n.problem === 'string') incomplete++;
    for (const sp of Array.isArray(n.spans) ? (n.spans as Array<Record<string, unknown>>) : []) shards += num(sp?.shards_removed) ?? 0;
    for (const f of Array.isArray(n.fs) ? (n.fs as Array<Record<string, unknown>>) : []) {
      const b = num(f?.free_mb_before);
      const a = num(f?.free_mb_after);
      if (b !== null && a !== null) freed = (freed ?? 0) + (a - b);
    }
  }
  const mb = freed === null ? '' : `, ${Math.round(freed * 10) / 10} MB freed so far`;
  return `${shards} shard(s) removed${mb}${incomplete ? ` (incomplete on ${incomplete} node(s))` : ''}`;
}

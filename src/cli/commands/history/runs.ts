/**
 * Turning journal lines into runs: a `sweep.start` and its `sweep.end` (same `run`) are one run;
 * a start without an end is a run with no outcome recorded (killed, or still going). For every
 * sweep run, the nodes left to catch up: the ones not `done`, minus those a later run finished
 * (same types and spans, a delete time at least as late, `done` on that node). Pure: the action
 * reads the file and hands the entries in.
 */
import type { JournalEntry, JournaledNode, SweepCancelEntry } from '../../journal.js';
import { sameNodeKey } from '../../nodes.js';
import { catchUpFor, type CatchUp } from '../sweep/catch-up.js';
import type { DataType } from '../../../protocol/index.js';

export interface HistoryNode {
  node: string;
  /** The final state, or null when the run recorded no outcome. */
  state: string | null;
  reason: string;
  /** The run (id) whose later sweep finished this node, when one did. */
  caughtUpBy?: string;
}

export interface HistoryRun {
  run: string;
  kind: 'sweep' | 'cancel';
  /** ISO times of the start and end lines (a cancel has one line: both are its time). */
  started: string | null;
  finished: string | null;
  by: string | null;
  nodeSource: string | null;
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
}

/** A journal line as read back: nothing in it is trusted to have its documented type. */
type Sweepish = JournalEntry;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const spans = (v: unknown): number[] | 'all' | null => (v === 'all' ? 'all' : Array.isArray(v) && v.every((x) => typeof x === 'number') ? (v as number[]) : null);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function newSweepRun(e: Sweepish): HistoryRun {
  return {
    run: e.run,
    kind: 'sweep',
    started: null,
    finished: null,
    by: str(e.by),
    nodeSource: str(e.nodeSource),
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
    .map((n) => ({ node: n.node, state: typeof n.state === 'string' ? n.state : null, reason: typeof n.reason === 'string' ? n.reason : '' }));
}

/** Same types and spans, and a delete time at least as late: a run that deletes all `earlier` asked for, and maybe more. */
function covers(later: HistoryRun, earlier: HistoryRun): boolean {
  const sameSpans = (a: number[] | 'all' | null, b: number[] | 'all' | null): boolean => JSON.stringify(Array.isArray(a) ? [...a].sort((x, y) => x - y) : a) === JSON.stringify(Array.isArray(b) ? [...b].sort((x, y) => x - y) : b);
  return (
    later.before !== null &&
    earlier.before !== null &&
    later.before >= earlier.before &&
    [...later.types].sort().join(',') === [...earlier.types].sort().join(',') &&
    sameSpans(later.nntRollups, earlier.nntRollups) &&
    sameSpans(later.histogramRollups, earlier.histogramRollups) &&
    (later.headerPrefix ?? '') === (earlier.headerPrefix ?? '')
  );
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
  for (const raw of entries) {
    const e = raw as Sweepish;
    if (typeof e.run !== 'string') continue;
    const at = str(e.at);
    if (e.kind === 'sweep.start' || e.kind === 'sweep.end') {
      let r = runs.get(e.run);
      if (!r || r.kind !== 'sweep') {
        r = newSweepRun(e);
        runs.set(e.run, r);
      }
      carry.set(e.run, { carry: strings(e.carry), addBack: strings(e.addBack) });
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
    } else if (e.kind === 'sweep.cancel') {
      const c = e as unknown as Partial<SweepCancelEntry> & JournalEntry;
      runs.set(e.run, {
        ...newSweepRun(e),
        kind: 'cancel',
        started: at,
        finished: at,
        by: str(c.by),
        nodeSource: str(c.nodeSource),
        before: null,
        types: [],
        outcome: true,
        nodes: Array.isArray(c.nodes)
          ? c.nodes
              .filter((n) => n && typeof n.node === 'string')
              .map((n) => ({ node: n.node, state: typeof n.state === 'string' ? n.state : null, reason: n.error ?? (n.cancelled?.length ? `was sweeping ${n.cancelled.join(',')}` : 'nothing was running') }))
          : [],
      });
    }
  }
  const list = [...runs.values()];
  const sweeps = list.filter((r) => r.kind === 'sweep');
  sweeps.forEach((r, i) => {
    const later = sweeps.slice(i + 1).filter((l) => covers(l, r));
    for (const n of r.nodes) {
      if (n.state === 'done') continue;
      const by = later.find((l) => l.nodes.some((m) => m.state === 'done' && keyOf(m.node) === keyOf(n.node)));
      if (by) n.caughtUpBy = by.run;
    }
    r.pending = r.nodes.filter((n) => n.state !== 'done' && !n.caughtUpBy).map((n) => n.node);
    if (r.before !== null && r.types.length) {
      const request = {
        before: r.before,
        types: r.types as DataType[],
        ...(Array.isArray(r.nntRollups) ? { nntRollups: r.nntRollups } : {}),
        ...(Array.isArray(r.histogramRollups) ? { histogramRollups: r.histogramRollups } : {}),
      };
      r.catchUp = catchUpFor(request, r.headerPrefix ?? 'X-Service', r.pending, carry.get(r.run)) ?? null;
    }
  });
  return list;
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

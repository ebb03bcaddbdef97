/**
 * How a retention plan and a run's result look: tables for people, CSV rows and JSON documents
 * for scripts (snake_case keys, spans as lists of numbers, times as epoch seconds plus ISO).
 * Pure: data in, text out.
 */
import type { LagReport } from '../../../client/replication-lag.js';
import type { SweepRequest } from '../../../protocol/index.js';
import {
  describeRawReadable,
  isoSeconds,
  nextAction,
  rawReadable,
  planToJson,
  runStateToJson,
  type KeptForever,
  type NodePlan,
  type RetentionPlan,
  type RunOutcome,
  type RunState,
  type StepRecord,
} from '../../../retention/index.js';
import type { CoverageOutcome } from '../../../client/sweep-checks.js';
import { renderCsv, renderTable } from '../../render/table.js';
import { formatElapsed } from '../../render/elapsed.js';

/** `nnt spans 60; histogram every span; text`: what one request deletes. */
export function describeRequest(r: SweepRequest): string {
  return r.types
    .map((t) => {
      if (t === 'text') return 'text';
      const list = t === 'nnt' ? r.nntRollups : r.histogramRollups;
      return list?.length ? `${t} spans ${list.join(', ')}` : t === 'nnt' ? 'nnt every span (and the raw records)' : `${t} every span`;
    })
    .join('; ');
}

/** What a node keeps forever, in words: `nnt spans 1800, 10800 and the nnt raw records; histogram spans 300`. */
export function describeKept(kept: readonly KeptForever[]): string {
  const parts = kept.map((k) => {
    if (k.all) return `all ${k.type} (no rule)`;
    const bits: string[] = [];
    if (k.spans.length) bits.push(`${k.type} spans ${k.spans.join(', ')}`);
    if (k.otherSpans) bits.push(`any ${k.type} span no rule lists (the node's spans are not known)`);
    if (k.raw === true) bits.push('the nnt raw records');
    if (k.raw === null && k.type === 'nnt') bits.push("perhaps the nnt raw records (the node's spans are not known)");
    return bits.join(' and ');
  });
  return parts.filter(Boolean).join('; ');
}

/** The nodes whose requests and kept data are the same, as one group (the usual case: all of them). */
function groups(plan: RetentionPlan): NodePlan[][] {
  const out = new Map<string, NodePlan[]>();
  for (const n of plan.nodes) {
    const key = JSON.stringify([n.steps.map((s) => [s.request, s.note ?? null]), n.kept, n.spanSource]);
    out.set(key, [...(out.get(key) ?? []), n]);
  }
  return [...out.values()];
}

function nodesText(nodes: readonly NodePlan[], all: number): string {
  if (nodes.length === all && all > 1) return `the same on all ${all} nodes: ${listSome(nodes.map((n) => n.node))}`;
  return nodes.length === 1 ? nodes[0]!.node : listSome(nodes.map((n) => n.node));
}

function listSome(items: readonly string[], max = 6): string {
  return items.length > max ? `${items.slice(0, max).join(', ')} and ${items.length - max} more` : items.join(', ');
}

const SOURCE: Record<string, string> = {
  node: 'from GET /state',
  profile: 'from the profile',
  unchecked: 'not checked: the node does not report them and no profile declares them',
};

/** `retention plan` as a person reads it: the steps, what is kept forever, each step's exact request. */
export function planText(plan: RetentionPlan, colour: boolean, width?: number): string {
  const steps = renderTable(
    ['step', 'cut-off (deletes data before)', 'age', 'deletes'],
    plan.steps.map((s) => {
      const reqs = plan.nodes.map((n) => n.steps[s.step - 1]!.request).filter((r): r is SweepRequest => r !== null);
      const same = reqs.every((r) => JSON.stringify(r) === JSON.stringify(reqs[0]));
      const deletes = reqs.length === 0 ? 'nothing on any node' : same ? describeRequest(reqs[0]!) : `${s.types.join(', ')} (differs per node: see the requests)`;
      return [s.step, `${isoSeconds(s.cutoff)} (${s.cutoff})`, s.age, deletes];
    }),
    { colour, width },
  );
  const lines: string[] = [steps.trimEnd(), ''];
  if (plan.steps.length === 0) lines.push("no steps: every rule's cut-off is before 1970", '');
  for (const g of groups(plan)) {
    const first = g[0]!;
    lines.push(`${nodesText(g, plan.nodes.length)}:`);
    const spanFrom = (['nnt', 'histogram'] as const).map((t) => {
      const list = first.spans[t];
      return `${t} ${list ? `${list.join(', ')} ` : ''}(${SOURCE[first.spanSource[t]]})`;
    });
    lines.push(`  spans: ${spanFrom.join('; ')}`);
    const kept = describeKept(first.kept);
    lines.push(`  kept forever: ${kept || 'nothing (every span of every type has a rule)'}`);
    const readable = describeRawReadable(rawReadable(first, plan.steps));
    if (readable) lines.push(`  ${readable}: a plain read (engine dispatch) still shows them; --engine nnt does not`);
    for (const s of first.steps) {
      if (!s.http) {
        lines.push(`  step ${s.step}  nothing to send${s.note ? ` (${s.note})` : ''}`);
        continue;
      }
      lines.push(`  step ${s.step}  ${s.http.method} ${s.http.url}${g.length > 1 && s.step === 1 ? '   (the same on the other nodes, each to its own URL)' : ''}`);
      for (const [k, v] of Object.entries(s.http.headers)) lines.push(`          ${k}: ${v}`);
      if (s.note) lines.push(`          (${s.note})`);
    }
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

export const PLAN_CSV_HEADERS = ['node', 'step', 'cutoff', 'cutoff_iso', 'age', 'types', 'nnt_spans', 'histogram_spans', 'spans_from', 'note'] as const;

/** A request's spans of one type in CSV: space-separated numbers, `all` for every span, empty when the type is not swept. */
function spans(r: SweepRequest | null, t: 'nnt' | 'histogram'): string {
  if (!r || !r.types.includes(t)) return '';
  const list = t === 'nnt' ? r.nntRollups : r.histogramRollups;
  return list?.length ? list.join(' ') : 'all';
}

/** One row per node and step: spans as space-separated numbers, `all` for every span, empty when not swept. */
export function planCsv(plan: RetentionPlan, terminal: boolean): string {
  const rows = plan.nodes.flatMap((n) =>
    plan.steps.map((s) => {
      const ns = n.steps[s.step - 1]!;
      return [
        n.node,
        s.step,
        s.cutoff,
        isoSeconds(s.cutoff),
        s.age,
        ns.request?.types.join(' ') ?? '',
        spans(ns.request, 'nnt'),
        spans(ns.request, 'histogram'),
        `nnt:${n.spanSource.nnt} histogram:${n.spanSource.histogram}`,
        ns.note ?? '',
      ];
    }),
  );
  return renderCsv(PLAN_CSV_HEADERS, rows, { terminal });
}

/** The coverage outcome in JSON (snake_case). */
export function coverageJson(c: CoverageOutcome | null): unknown {
  return c ? { verdict: c.verdict, topology: c.hash, missing: c.missing, problems: c.problems, allowed_partial: c.allowed } : null;
}

/** `retention plan -o json`: the library's plan document, plus where the nodes came from and the coverage. */
export function planJson(
  plan: RetentionPlan,
  extra: { nodeSource: string; coverage: CoverageOutcome | null; managed?: ReadonlyMap<string, 'sweep' | 'node' | null>; lag?: LagReport },
): unknown {
  const doc = planToJson(plan);
  // `retention`: who removes the node's old data: `sweep` (apply sends it the steps), `node` (its own config: apply sends nothing and verifies it), null (not known).
  // `lag_seconds`: how far its replication is behind (null: the node reports none).
  const nodes = doc.nodes.map((n, i) => ({
    ...n,
    // nnt spans swept while the raw records stay: a dispatch read still shows them (until: the step that deletes the raw records, null: none).
    raw_readable: rawReadable(plan.nodes[i]!, plan.steps).map((r) => ({ span: r.span, step: r.step, age: r.age, until: r.until })),
    retention: extra.managed?.get(n.node) ?? null,
    lag_seconds: extra.lag?.nodes.find((l) => l.node === n.node)?.lagSeconds ?? null,
  }));
  return { ...doc, nodes, node_source: extra.nodeSource, coverage: coverageJson(extra.coverage) };
}

// ---------------------------------------------------------------- the result of apply

function seconds(rec: StepRecord): number | null {
  return rec.sentAt !== undefined && rec.finishedAt !== undefined && rec.state !== 'in_flight' ? Math.round(rec.finishedAt - rec.sentAt) / 1000 : null;
}

/** Where a node stopped in this run (null: it finished every step). */
export function stoppedAt(state: RunState, node: string): { step: number; state: string; reason: string } | null {
  const a = nextAction(state, node);
  if (a.kind === 'finished') return null;
  const run = state.nodes.find((n) => n.node === node)!;
  const rec = run.steps[a.step - 1]!;
  return { step: a.step, state: rec.state, reason: rec.reason ?? (a.kind === 'send' ? 'not run yet' : '') };
}

const BAD = new Set(['failed', 'lost', 'timed out', 'replaced', 'cancelled', 'unconfirmed']);
const MEH = new Set(['late data', 'skipped', 'interrupted', 'pending', 'in flight', 'started']);

/**
 * One row per node: each step's state and duration, then where it stopped and why. With `width`
 * (the terminal's: tableWidth(ctx)) the table fits it, the reason wrapping inside its cell.
 */
export function resultTable(state: RunState, colour: boolean, width?: number): string {
  const steps = state.plan.steps.map((s) => `step ${s.step}`);
  const anyStopped = state.nodes.some((n) => stoppedAt(state, n.node) !== null);
  const table = renderTable(
    ['node', ...steps, 'stopped at', 'reason'].slice(0, anyStopped ? undefined : steps.length + 1),
    state.nodes.map((n) => {
      const cells = n.steps.map((rec) => {
        if (rec.state === 'not_needed') return 'not needed';
        if (rec.state === 'pending') return 'not run';
        const s = seconds(rec);
        const d = s === null ? '' : formatElapsed(s, { tenthsBelow: 60 });
        return `${rec.state.replace(/_/g, ' ')}${d ? ` ${d}` : ''}`;
      });
      const stop = stoppedAt(state, n.node);
      return [n.node, ...cells, stop ? `step ${stop.step}` : '', stop ? `${stop.state.replace(/_/g, ' ')}: ${stop.reason}` : ''].slice(
        0,
        anyStopped ? undefined : steps.length + 1,
      );
    }),
    {
      colour,
      width,
      paint: (cell, col, _row, p) => {
        if (col === 0 || col > steps.length) return cell;
        const word = cell.replace(/\s+/g, ' ').replace(/ [\d.hms]+$/, ''); // (a wrapped cell spans lines)
        return word === 'done' ? p.green(cell) : BAD.has(word) ? p.red(cell) : MEH.has(word) ? p.yellow(cell) : cell;
      },
    },
  );
  return table;
}

export const RESULT_CSV_HEADERS = [
  'run_id',
  'attempt',
  'node',
  'step',
  'cutoff',
  'cutoff_iso',
  'types',
  'state',
  'reason',
  'sent_at',
  'sent_at_iso',
  'finished_at',
  'finished_at_iso',
  'seconds',
  // Added after the first release: appended, so scripts reading columns by position keep working.
  'nnt_spans',
  'histogram_spans',
] as const;

export function resultCsv(state: RunState, terminal: boolean): string {
  const rows = state.nodes.flatMap((n) =>
    n.steps.map((rec) => {
      const step = state.plan.steps[rec.step - 1]!;
      const req = state.plan.nodes.find((p) => p.node === n.node)!.steps[rec.step - 1]!.request;
      return [
        state.runId,
        rec.attempt,
        n.node,
        rec.step,
        step.cutoff,
        isoSeconds(step.cutoff),
        req?.types.join(' ') ?? '',
        rec.state,
        rec.reason ?? '',
        rec.sentAt !== undefined ? rec.sentAt / 1000 : '',
        rec.sentAt !== undefined ? isoSeconds(rec.sentAt / 1000) : '',
        rec.finishedAt !== undefined ? rec.finishedAt / 1000 : '',
        rec.finishedAt !== undefined ? isoSeconds(rec.finishedAt / 1000) : '',
        seconds(rec) ?? '',
        spans(req, 'nnt'),
        spans(req, 'histogram'),
      ];
    }),
  );
  return renderCsv(RESULT_CSV_HEADERS, rows, { terminal });
}

export interface ResultExtras {
  runFile: string;
  outcome: RunOutcome;
  exitCode: number;
  interrupted: boolean;
  nodeSource: string;
  coverage: CoverageOutcome | null;
  catchUp: { nodes: string[]; command: string; add_back: string[] } | null;
  /** Each node's result, with the replication lag read after its steps (absent: not read). */
  nodes?: ReadonlyArray<{ node: string; lag?: { lagSeconds: number | null }; lateRecords?: number }>;
}

/** `retention apply -o json`: the run (its plan with the pinned cut-offs, every node's steps), the outcome and the catch-up. */
export function resultJson(state: RunState, x: ResultExtras): unknown {
  const run = runStateToJson(state);
  const summary: Record<string, number> = {};
  for (const n of state.nodes) for (const s of n.steps) summary[s.state] = (summary[s.state] ?? 0) + 1;
  return {
    run_id: state.runId,
    attempt: state.attempt,
    run_file: x.runFile,
    outcome: x.outcome,
    exit_code: x.exitCode,
    interrupted: x.interrupted,
    now: state.plan.now,
    now_iso: isoSeconds(state.plan.now),
    node_source: x.nodeSource,
    coverage: coverageJson(x.coverage),
    plan: run.plan,
    nodes: run.nodes.map((n) => ({
      node: n.node,
      finished: stoppedAt(state, n.node) === null,
      stopped_at: stoppedAt(state, n.node),
      // Read after the steps: null when the node reports no lag (or it was not read).
      lag_seconds: x.nodes?.find((r) => r.node === n.node)?.lag?.lagSeconds ?? null,
      late_records: x.nodes?.find((r) => r.node === n.node)?.lateRecords ?? null,
      steps: n.steps.map((s) => {
        const rec = state.nodes.find((x) => x.node === n.node)!.steps[s.step - 1]!;
        return { ...s, seconds: seconds(rec) };
      }),
    })),
    summary,
    catch_up: x.catchUp,
  };
}

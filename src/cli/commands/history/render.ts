/** `tsnode history`: the journal's runs on stdout, as a table (with what to run again and to catch up), CSV or JSON. */
import type { CliContext } from '../../context.js';
import { parseNodeEntry, sameNodeKey } from '../../nodes.js';
import { timeFields } from '../../render/json-values.js';
import { renderTable, tableWidth, type CellValue } from '../../render/table.js';
import { escapeText } from '../../render/terminal-text.js';
import { describeTime } from '../../time.js';
import { receiptSummary, type HistoryRun } from './runs.js';

function what(r: HistoryRun): string {
  if (r.kind === 'cancel') return 'cancel running sweeps';
  if (r.kind === 'delete') {
    const d = r.delete!;
    const target = d.metric !== null ? `--metric ${d.metric}` : (d.query ?? '(query not journaled)');
    const scope = d.scope === null ? '' : `: ${d.scope}${r.before !== null ? ` ${describeTime(r.before * 1000)}` : ''}`;
    return `delete ${target}${scope}`;
  }
  if (r.kind === 'retention') {
    const ret = r.retention!;
    const cutoffs = ret.steps.map((s) => s.cutoff).filter((c): c is number => c !== null);
    const span = cutoffs.length ? `, cut-offs ${isoDay(Math.max(...cutoffs))}${cutoffs.length > 1 ? ` .. ${isoDay(Math.min(...cutoffs))}` : ''}` : '';
    const attempt = ret.attempt > 1 ? `, attempt ${ret.attempt}` : '';
    return `retention ${ret.policySource ?? '?'}: ${ret.steps.length} step(s) (${ret.steps.map((s) => s.rules.join(' ')).join('; ')})${span}${attempt}`;
  }
  const scope = r.types
    .map((t) => {
      if (t === 'text') return t;
      const s = t === 'nnt' ? r.nntRollups : r.histogramRollups;
      return Array.isArray(s) ? `${t} spans ${s.join(',')} only` : `${t} all spans`;
    })
    .join(', ');
  return `${scope} before ${r.before !== null ? describeTime(r.before * 1000) : '?'}`;
}

function isoDay(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

function outcome(r: HistoryRun, nodeKey?: string): string {
  if (nodeKey !== undefined) {
    const n = r.nodes.find((x) => safeKey(x.node) === nodeKey);
    if (n) return n.state ? `${n.state.replace(/_/g, ' ')}: ${n.reason}${n.caughtUpBy ? ` (caught up by run ${n.caughtUpBy})` : ''}` : n.reason;
  }
  if (!r.outcome) return 'no outcome recorded';
  if (r.refused) return `refused, nothing sent: ${r.refused.reason}`;
  const counts = new Map<string, number>();
  for (const n of r.nodes) counts.set(n.state ?? '?', (counts.get(n.state ?? '?') ?? 0) + 1);
  return [...counts].map(([s, c]) => `${c} ${s.replace(/_/g, ' ')}`).join(', ');
}

/** The same-node key (any spelling of one node gives the same key). */
export function safeKey(node: string): string {
  try {
    return sameNodeKey(parseNodeEntry(node));
  } catch {
    return node;
  }
}

export const CSV_HEADERS = [
  'run',
  'kind',
  'started',
  'finished',
  'by',
  'before',
  'before_iso',
  'types',
  'nnt_rollups',
  'histogram_rollups',
  'node_source',
  'nodes',
  'outcome',
  'left',
  'catch_up',
  // Added later, appended so scripts reading columns by position keep working. Retention runs:
  // each step's cut-off and what it deleted (`1 2026-11-19T05:57:33Z nnt 60 | 2 ... nnt all`).
  'steps',
] as const;

export function csvRow(r: HistoryRun): CellValue[] {
  const sp = (s: number[] | 'all' | null): string => (s === null ? '' : Array.isArray(s) ? s.join(' ') : s);
  return [
    r.run,
    r.kind,
    isoOf(r.started) ?? '',
    isoOf(r.finished) ?? '',
    r.by ?? '',
    r.before ?? '',
    r.before !== null ? new Date(r.before * 1000).toISOString().replace('.000Z', 'Z') : '',
    r.types.join(' '),
    sp(r.nntRollups),
    sp(r.histogramRollups),
    r.nodeSource ?? '',
    r.nodes.length,
    outcome(r),
    r.pending.join(' '),
    r.catchUp?.command ?? '',
    r.retention ? retentionSteps(r.retention) : '',
  ];
}

/**
 * A retention run's steps in one CSV field: `<step> <cut-off ISO> <what it deleted>`, steps
 * separated by ` | `; what a step deleted comes from its journaled DELETEs (their spans), else
 * from its rules, and says `differs per node` with each request when nodes got different ones.
 */
function retentionSteps(ret: NonNullable<HistoryRun['retention']>): string {
  return ret.steps
    .map((s) => {
      const scopes = ret.stepScopes[String(s.step)] ?? [];
      const what = scopes.length === 0 ? s.rules.join(' ') : scopes.length === 1 ? scopes[0]! : `differs per node: ${scopes.join(' / ')}`;
      const cutoff = s.cutoff !== null ? new Date(s.cutoff * 1000).toISOString().replace('.000Z', 'Z') : '?';
      return `${s.step} ${cutoff} ${what}`;
    })
    .join(' | ');
}

/** An ISO time as the journal wrote it (`...T00:00:00.000Z`), shown without zero milliseconds; null when unreadable. */
function isoOf(at: string | null): string | null {
  const ms = at === null ? NaN : Date.parse(at);
  return Number.isNaN(ms) ? null : (timeFields('t', ms).t_iso as string);
}

/** A journal time as JSON: epoch seconds and ISO under `key` (null for both when the journal has none). */
function atFields(key: string, at: string | null): Record<string, number | string | null> {
  const ms = at === null ? NaN : Date.parse(at);
  return Number.isNaN(ms) ? { [key]: null, [`${key}_iso`]: null } : timeFields(key, ms);
}

/** Spans as JSON: the numbers, null for every span or a type not swept (`types` says which). */
function spansJson(s: number[] | 'all' | null): number[] | null {
  return Array.isArray(s) ? [...s] : null;
}

/** One run as `history -o json` prints it (docs/cli-conventions.md#json: snake_case, times as epoch seconds plus ISO). */
export function runJson(r: HistoryRun): Record<string, unknown> {
  const out: Record<string, unknown> = {
    run: r.run,
    kind: r.kind,
    ...atFields('started', r.started),
    ...atFields('finished', r.finished),
    by: r.by,
    node_source: r.nodeSource,
    profile: r.profile,
    ...(r.before !== null ? timeFields('before', r.before * 1000) : { before: null, before_iso: null }),
    types: [...r.types],
    nnt_rollups: spansJson(r.nntRollups),
    histogram_rollups: spansJson(r.histogramRollups),
    header_prefix: r.headerPrefix,
    outcome_recorded: r.outcome,
    exit_code: r.exit,
    summary: r.summary,
    nodes: r.nodes.map((n) => ({ node: n.node, state: n.state, reason: n.reason, caught_up_by: n.caughtUpBy ?? null })),
    pending: [...r.pending],
    catch_up: r.catchUp ? { nodes: [...r.catchUp.nodes], command: r.catchUp.command, add_back: [...r.catchUp.addBack] } : null,
    receipt: r.receipt ?? null,
    receipt_summary: receiptSummary(r.receipt) || null,
    refused: r.refused
      ? {
          codes: [...r.refused.codes],
          reason: r.refused.reason,
          run_again: r.refused.runAgain ? { command: r.refused.runAgain.command, add_back: [...r.refused.runAgain.addBack] } : null,
        }
      : null,
  };
  const ret = r.retention;
  if (ret) {
    out.retention = {
      policy_source: ret.policySource,
      fingerprint: ret.fingerprint,
      ...(ret.now !== null ? timeFields('now', ret.now * 1000) : { now: null, now_iso: null }),
      steps: ret.steps.map((s) => ({
        step: s.step,
        ...(s.cutoff !== null ? timeFields('cutoff', s.cutoff * 1000) : { cutoff: null, cutoff_iso: null }),
        types: [...s.types],
        rules: [...s.rules],
      })),
      attempt: ret.attempt,
      run_file: ret.runFile,
      outcome: ret.outcome,
      steps_by_node: ret.stepsByNode,
    };
  }
  return out;
}

/** One warning for the lines skipped, grouped by reason, with the first few line numbers of each. */
/** Refused runs a later try may get past unchanged (runs.ts REFUSED_AGAIN): the command, under the table. */
function printRunAgain(runs: readonly HistoryRun[], ctx: CliContext): void {
  const again = runs.filter((r) => r.refused?.runAgain);
  if (!again.length) return;
  ctx.stdout.write(
    `\nrefused (nothing was sent); to run again:\n${again
      .map((r) => {
        const a = r.refused!.runAgain!;
        // Journal fields are text anyone could have written: escaped before the terminal.
        const addBack = a.addBack.length ? `\n    add back: ${escapeText(a.addBack.join('; '))}` : '';
        return `  run ${escapeText(r.run)}: ${escapeText(a.command)}${addBack}`;
      })
      .join('\n')}\n`,
  );
}

/** The table of runs (its outcome column for `--node`, when given), then what to run again and what to catch up. */
export function printRunsTable(runs: readonly HistoryRun[], node: string | undefined, nodeKey: string | undefined, ctx: CliContext): void {
  ctx.stdout.write(
    renderTable(
      ['started', 'run', 'by', 'what', 'nodes', node !== undefined ? `on ${node}` : 'outcome', 'left', 'receipt'],
      runs.map((r) => [
        // to the second: a table is read, not parsed (JSON and CSV keep the milliseconds)
        (isoOf(r.started) ?? isoOf(r.finished) ?? '').replace(/\.\d{3}Z$/, 'Z'),
        r.run,
        r.by ?? '',
        what(r),
        `${r.nodes.length}${r.nodeSource ? ` (${r.nodeSource})` : ''}`,
        outcome(r, nodeKey),
        r.kind === 'cancel' ? '' : r.pending.length ? String(r.pending.length) : r.refused ? 'none (refused)' : 'none',
        receiptSummary(r.receipt),
      ]),
      {
        colour: ctx.colour,
        width: tableWidth(ctx),
        paint: (cell, col, _r, p) => (col === 6 && cell !== 'none' && cell !== '' ? p.yellow(cell) : col === 5 && /no outcome/.test(cell) ? p.yellow(cell) : cell),
      },
    ),
  );
  printRunAgain(runs, ctx);
  const open = runs.filter((r) => r.catchUp);
  if (open.length) {
    ctx.stdout.write(
      `\nto catch up:\n${open
        .map((r) => {
          // Journal fields are text anyone could have written: escaped before the terminal.
          const addBack = r.catchUp!.addBack.length ? `\n    add back: ${escapeText(r.catchUp!.addBack.join('; '))}` : '';
          return `  run ${escapeText(r.run)}: ${escapeText(r.catchUp!.command)}${addBack}`;
        })
        .join('\n')}\n`,
    );
  }
}

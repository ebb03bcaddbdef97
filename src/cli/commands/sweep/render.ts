/**
 * How a sweep's result, a dry run and a cancel look: tables for people, CSV rows and JSON
 * documents for scripts (docs/cli-conventions.md#json: snake_case keys, spans as lists of numbers
 * with null for "all", times as epoch seconds plus ISO, a failure as {code, message}, durations in
 * ms). Pure: data in, text out.
 */
import type { CoverageOutcome } from '../../../client/sweep-checks.js';
import type { ClusterSweepResult } from '../../../client/sweep.js';
import type { NodeSweepResult } from '../../../client/sweep-node.js';
import type { FinalSweepState } from '../../../client/sweep-states.js';
import type { SweepRequest } from '../../../protocol/index.js';
import { errorJson, timeFields } from '../../render/json-values.js';
import { stateLabel } from '../../render/node-progress.js';
import { renderCsv, renderTable, type CellValue } from '../../render/table.js';
import type { CatchUp } from '../../../run/catch-up.js';
import type { RunTarget } from '../../run/run-text.js';
import { formatElapsed } from '../../render/elapsed.js';

export type { RunTarget };

/** A type's spans in JSON: the list, or null when every span is swept (or the type is not: `types` says which). */
export function spansJson(req: SweepRequest, type: 'nnt' | 'histogram'): number[] | null {
  const list = type === 'nnt' ? req.nntRollups : req.histogramRollups;
  return req.types.includes(type) && list?.length ? [...list] : null;
}

/** A type's spans in a CSV cell: `60 300`, `all`, or empty when the type is not swept. */
export function spansCell(req: Pick<SweepRequest, 'types' | 'nntRollups' | 'histogramRollups'>, type: 'nnt' | 'histogram'): string {
  if (!req.types.includes(type)) return '';
  const list = type === 'nnt' ? req.nntRollups : req.histogramRollups;
  return list?.length ? list.join(' ') : 'all';
}

/** What a request deletes, as the JSON documents start: before, types, spans. */
function requestJson(req: SweepRequest): Record<string, unknown> {
  return { ...timeFields('before', req.before * 1000), types: [...req.types], nnt_rollups: spansJson(req, 'nnt'), histogram_rollups: spansJson(req, 'histogram') };
}

function targetJson(t: RunTarget): Record<string, unknown> {
  return { header_prefix: t.headerPrefix, node_source: t.origin, profile: t.profile };
}

/** The coverage check in JSON, as `retention apply` writes it (null: not checked, e.g. a dry run). */
export function coverageJson(c: CoverageOutcome | undefined | null): unknown {
  return c ? { verdict: c.verdict, topology: c.hash, missing: c.missing, problems: c.problems, allowed_partial: c.allowed } : null;
}

export function catchUpJson(c: CatchUp | undefined | null): unknown {
  return c ? { nodes: [...c.nodes], command: c.command, add_back: [...c.addBack] } : null;
}

const elapsedMs = (n: NodeSweepResult): number | null => (n.seconds === undefined ? null : Math.round(n.seconds * 1000));

/** A node's outcome: state, the reason it rests on, and {code, message} when it is not done (the code is the state). */
export function nodeJson(n: NodeSweepResult): Record<string, unknown> {
  return { node: n.node, state: n.state, reason: n.reason, error: n.error !== undefined ? errorJson(n.state, n.error) : null, other: n.other ?? null, elapsed_ms: elapsedMs(n) };
}

/** `sweep -o json`: one document, stable keys (catch_up null when every node is done, coverage null when not checked). */
export function sweepJson(result: ClusterSweepResult, x: { target: RunTarget; exitCode: number; catchUp?: CatchUp | undefined; coverage?: CoverageOutcome | undefined }): unknown {
  return {
    ...requestJson(result.request),
    ...targetJson(x.target),
    interrupted: result.interrupted,
    exit_code: x.exitCode,
    nodes: result.nodes.map(nodeJson),
    summary: result.summary,
    catch_up: catchUpJson(x.catchUp),
    coverage: coverageJson(x.coverage),
  };
}

export const SWEEP_CSV_HEADERS = [
  'node',
  'state',
  'reason',
  'error_code',
  'error',
  'other',
  'elapsed_ms',
  'before',
  'before_iso',
  'types',
  'nnt_rollups',
  'histogram_rollups',
] as const;

/** `sweep -o csv`: one row per node. */
export function sweepCsv(result: ClusterSweepResult, terminal: boolean): string {
  const req = result.request;
  const iso = timeFields('before', req.before * 1000).before_iso!;
  const rows: CellValue[][] = result.nodes.map((n) => [
    n.node,
    n.state,
    n.reason,
    n.error !== undefined ? n.state : '',
    n.error ?? '',
    n.other ?? '',
    elapsedMs(n) ?? '',
    req.before,
    iso,
    req.types.join(' '),
    spansCell(req, 'nnt'),
    spansCell(req, 'histogram'),
  ]);
  return renderCsv(SWEEP_CSV_HEADERS, rows, { terminal });
}

const duration = (seconds: number | undefined): string => (seconds === undefined ? '' : formatElapsed(seconds, { tenthsBelow: 60 }));

const BAD: ReadonlySet<string> = new Set(['failed', 'lost', 'timed out', 'replaced', 'cancelled', 'unconfirmed']);
const MEH: ReadonlySet<string> = new Set(['skipped', 'interrupted', 'started', 'late data']);

/** The result table: one row per node; `width` fits it to the terminal (undefined: natural width). */
export function sweepTable(result: ClusterSweepResult, opts: { colour: boolean; width?: number | undefined }): string {
  const types = result.request.types.join(',');
  return renderTable(
    ['node', 'types', 'state', 'duration', 'reason'],
    result.nodes.map((n) => [n.node, types, stateLabel(n.state), duration(n.seconds), n.reason]),
    {
      colour: opts.colour,
      ...(opts.width !== undefined ? { width: opts.width } : {}),
      align: [undefined, undefined, undefined, 'right'],
      paint: (cell, col, _row, p) => (col !== 2 ? cell : cell === 'done' ? p.green(cell) : BAD.has(cell) ? p.red(cell) : MEH.has(cell) ? p.yellow(cell) : cell),
    },
  );
}

export function summaryLine(result: ClusterSweepResult): string {
  return Object.entries(result.summary)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${stateLabel(s as FinalSweepState)}`)
    .join(', ');
}

// ---------------------------------------------------------------- the dry run

export interface PlannedRequest {
  node: string;
  method: 'DELETE' | 'GET';
  url: string;
  headers: Record<string, string>;
}

/** `--dry-run -o json`: what would be sent, node by node (the sweep headers; the target's own headers are not shown). */
export function dryRunJson(requests: readonly PlannedRequest[], x: { target: RunTarget; request?: SweepRequest }): unknown {
  return {
    dry_run: true,
    ...(x.request ? requestJson(x.request) : {}),
    ...targetJson(x.target),
    requests: requests.map((r) => ({ node: r.node, method: r.method, url: r.url, headers: { ...r.headers } })),
  };
}

export const DRY_RUN_CSV_HEADERS = ['node', 'method', 'url', 'headers'] as const;

/** `--dry-run -o csv`: one row per node; the headers as `Name: value` joined by `; `. */
export function dryRunCsv(requests: readonly PlannedRequest[], terminal: boolean): string {
  return renderCsv(
    DRY_RUN_CSV_HEADERS,
    requests.map((r) => [
      r.node,
      r.method,
      r.url,
      Object.entries(r.headers)
        .map(([k, v]) => `${k}: ${v}`)
        .join('; '),
    ]),
    { terminal },
  );
}

/** `--dry-run` as a person reads it: each request as it goes on the wire. */
export function dryRunText(requests: readonly PlannedRequest[]): string {
  return requests.flatMap((r) => [`${r.method} ${r.url}`, ...Object.entries(r.headers).map(([k, v]) => `  ${k}: ${v}`), '']).join('\n');
}

// ---------------------------------------------------------------- sweep cancel

export type { CancelRow } from '../../../run/cancel.js';
import type { CancelRow } from '../../../run/cancel.js';

export function cancelJson(rows: readonly CancelRow[], x: { target: RunTarget; coverage: CoverageOutcome | undefined; exitCode: number }): unknown {
  return {
    node_source: x.target.origin,
    profile: x.target.profile,
    exit_code: x.exitCode,
    nodes: rows.map((r) => ({ ...r, cancelled: [...r.cancelled] })),
    coverage: coverageJson(x.coverage),
  };
}

export const CANCEL_CSV_HEADERS = ['node', 'state', 'cancelled', 'error_code', 'error'] as const;

export function cancelCsv(rows: readonly CancelRow[], terminal: boolean): string {
  return renderCsv(
    CANCEL_CSV_HEADERS,
    rows.map((r) => [r.node, r.state, r.cancelled.join(' '), r.error?.code ?? '', r.error?.message ?? '']),
    { terminal },
  );
}

export function cancelTable(rows: readonly CancelRow[], opts: { colour: boolean; width?: number | undefined }): string {
  return renderTable(
    ['node', 'state', 'detail'],
    rows.map((r) => [
      r.node,
      r.state.replace(/_/g, ' ').replace('api', 'API'),
      r.error?.message ?? (r.cancelled.length ? `was sweeping ${r.cancelled.join(',')}` : 'nothing was running'),
    ]),
    { colour: opts.colour, ...(opts.width !== undefined ? { width: opts.width } : {}) },
  );
}

import { fanOut } from '../../../client/cluster.js';
import type { NodeErrorCode } from '../../../client/errors.js';
import { pollUntilIdle } from '../../../client/sweep.js';
import { DATA_TYPES, type SweepStatus, type TypeStatus } from '../../../protocol/index.js';
import type { CliContext } from '../../context.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import type { NetworkFlags } from '../../network-options.js';
import { openNetwork } from '../../network.js';
import { resolveNodes } from '../../nodes.js';
import { NodeProgress } from '../../render/node-progress.js';
import { renderCsv, renderJson, renderTable, type CellValue } from '../../render/table.js';
import { describeTime, isoTime, parseDuration } from '../../time.js';
import { parseOutput } from '../sweep/plan.js';

export interface StatusOptions extends NetworkFlags {
  watch?: boolean | string;
  lostAfter: string;
  output: string;
}

/** One node's answer: its status, or why there is none (`code`: the client's error code). */
export type NodeStatus = { node: string; ok: true; status: SweepStatus } | { node: string; ok: false; error: string; code?: NodeErrorCode };

/** The state shown for a node without a status: "unreachable" only when no answer came. */
function failedState(code: NodeErrorCode | undefined): string {
  if (code === 'no_sweep_api') return 'no sweep API';
  if (code === 'bad_answer') return 'bad answer';
  if (code === 'http') return 'error';
  return 'unreachable';
}

/** `--output json`: booleans and numbers, not the wire's strings; unreachable nodes carry `error`. */
export function statusJson(rows: readonly NodeStatus[]): unknown {
  return { nodes: rows.map((r) => (r.ok ? { node: r.node, ok: true, status: r.status } : { node: r.node, ok: false, error: r.error })) };
}

function current(s: TypeStatus): string {
  return s.current_metric ?? s.current_uuid ?? '';
}

export function statusTableRows(rows: readonly NodeStatus[]): CellValue[][] {
  return rows.flatMap((r): CellValue[][] => {
    if (!r.ok) return [[r.node, '-', failedState(r.code), r.error, '', '']];
    return DATA_TYPES.map((t) => {
      const s = r.status[t];
      return [r.node, t, s.running ? 'yes' : 'no', current(s), s.timestamp !== undefined ? describeTime(s.timestamp * 1000) : '', t === 'text' ? '' : (s.rollups ?? '')];
    });
  });
}

export const STATUS_CSV_HEADERS = ['node', 'ok', 'type', 'running', 'current_uuid', 'current_metric', 'delete_time', 'delete_time_iso', 'rollups', 'error'] as const;

export function statusCsvRows(rows: readonly NodeStatus[]): CellValue[][] {
  return rows.flatMap((r): CellValue[][] => {
    if (!r.ok) return [[r.node, 'false', '', '', '', '', '', '', '', r.error]];
    return DATA_TYPES.map((t) => {
      const s = r.status[t];
      return [r.node, 'true', t, String(s.running), s.current_uuid, s.current_metric, s.timestamp, s.timestamp !== undefined ? isoTime(s.timestamp * 1000) : '', s.rollups, ''];
    });
  });
}

function print(ctx: CliContext, output: 'table' | 'json' | 'csv', rows: readonly NodeStatus[]): void {
  if (output === 'json') ctx.stdout.write(renderJson(statusJson(rows)));
  else if (output === 'csv') ctx.stdout.write(renderCsv(STATUS_CSV_HEADERS, statusCsvRows(rows)));
  else {
    ctx.stdout.write(
      renderTable(['node', 'type', 'running', 'current', 'delete time', 'rollups'], statusTableRows(rows), {
        colour: ctx.colour,
        paint: (cell, col, _r, p) => (col !== 2 ? cell : cell === 'yes' ? p.cyan(cell) : cell === 'no' ? cell : p.red(cell)),
      }),
    );
  }
}

function exitFor(rows: readonly NodeStatus[], ctx: CliContext): ExitCode {
  if (ctx.signal.aborted) return EXIT.interrupted;
  const bad = rows.filter((r) => !r.ok).length;
  return bad === 0 ? EXIT.ok : bad === rows.length ? EXIT.failed : EXIT.partial;
}

export async function statusAction(opts: StatusOptions, ctx: CliContext): Promise<ExitCode> {
  const output = parseOutput(opts.output, ['table', 'json', 'csv'] as const);
  const intervalMs = opts.watch === undefined || opts.watch === false ? undefined : opts.watch === true ? 2000 : parseDuration(opts.watch, '--watch');
  const lostAfterMs = parseDuration(opts.lostAfter, '--lost-after');
  const list = resolveNodes({ flag: opts.nodes, env: ctx.env, cwd: ctx.cwd });
  for (const w of list.warnings) ctx.log.warn(w);
  const net = openNetwork(opts, ctx);
  try {
    const clients = list.nodes.map((n) => net.client(n));
    const outcomes = await fanOut(clients, (c) => c.sweepStatus({ signal: ctx.signal }));
    let rows: NodeStatus[] = outcomes.map((o) => (o.ok ? { node: o.node, ok: true, status: o.value } : { node: o.node, ok: false, error: o.error.detail, code: o.error.code }));
    if (intervalMs !== undefined && !ctx.signal.aborted) {
      // Watch: poll every reachable node until all of it is idle; changes on stderr, the final state on stdout.
      const progress = new NodeProgress(ctx, list.nodes);
      for (const r of rows) progress.onEvent({ kind: 'state', node: r.node, at: ctx.now(), ...(r.ok ? { state: r.status && DATA_TYPES.some((t) => r.status[t].running) ? 'running' : 'idle', status: r.status } : { state: 'unreachable', error: r.error }) });
      try {
        rows = await Promise.all(
          rows.map(async (r, i): Promise<NodeStatus> => {
            if (!r.ok) return r;
            const res = await pollUntilIdle(clients[i]!, {
              intervalMs,
              lostAfterMs,
              signal: ctx.signal,
              onEvent: (e) => progress.onEvent(e.kind === 'state' && e.state === 'done' ? { ...e, state: 'idle' } : e.kind === 'state' && e.state === 'lost' ? { ...e, state: 'unreachable' } : e),
            });
            if (res.state === 'lost') return { node: r.node, ok: false, error: res.error ?? 'stopped answering' };
            return { node: r.node, ok: true, status: res.status ?? r.status };
          }),
        );
      } finally {
        progress.stop();
      }
    }
    print(ctx, output, rows);
    if (ctx.signal.aborted) ctx.log.warn('interrupted: stopped watching (sweeps keep running on their nodes)');
    return exitFor(rows, ctx);
  } finally {
    await net.close();
  }
}

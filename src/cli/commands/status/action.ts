import { fanOut } from '../../../client/cluster.js';
import type { NodeRequestError } from '../../../client/errors.js';
import { pollUntilIdle, systemClock, type Clock } from '../../../client/sweep.js';
import { DATA_TYPES, type SweepStatus, type TypeStatus } from '../../../protocol/index.js';
import type { CliContext } from '../../context.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import type { NetworkFlags } from '../../network-options.js';
import { MAX_TIMEOUT_MS, openNetwork, parseTimeout } from '../../network.js';
import { UsageError } from '../../errors.js';
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

/**
 * Why a node has no status: `unreachable` (no connection, no answer in time, TLS failed),
 * `no sweep API` (a 404: the store removed /sweep_delete in 0.19.23), `error` (an error status),
 * `bad answer` (it answered, but not a status: too large, not JSON), `lost` (--watch: it stopped
 * answering polls usefully for --lost-after). Only the first means that no answer came.
 */
export type NoStatus = 'unreachable' | 'no sweep API' | 'error' | 'bad answer' | 'lost';

/** One node's answer: its status, or why there is none. */
export type NodeStatus = { node: string; ok: true; status: SweepStatus } | { node: string; ok: false; error: string; why: NoStatus };

/** A node that answered something unexpected is not "unreachable". */
export function noStatus(err: NodeRequestError): NoStatus {
  if (err.code === 'unreachable' || err.code === 'timeout' || err.code === 'tls' || err.code === 'aborted') return 'unreachable';
  if (err.code === 'no_sweep_api') return 'no sweep API';
  return err.code === 'http' ? 'error' : 'bad answer';
}

/** `--output json`: booleans and numbers, not the wire's strings; a node without status carries `error` and `why`. */
export function statusJson(rows: readonly NodeStatus[]): unknown {
  return { nodes: rows.map((r) => (r.ok ? { node: r.node, ok: true, status: r.status } : { node: r.node, ok: false, error: r.error, why: r.why })) };
}

function current(s: TypeStatus): string {
  return s.current_metric ?? s.current_uuid ?? '';
}

/** `completed: before 2026-08-24T00:00:00Z (1787529600), spans all, at 2026-11-22T04:33:00Z`: a node's record of its last sweep of a type. */
export function describeLastSweep(s: TypeStatus, type: string): string {
  const l = s.last;
  if (!l) return '';
  const bits = [`${l.result ?? 'unknown result'}:`];
  if (l.timestamp !== undefined) bits.push(`before ${describeTime(l.timestamp * 1000)}`);
  if (type !== 'text' && l.rollups !== undefined) bits.push(`spans ${l.rollups}`);
  if (l.finished !== undefined) bits.push(`at ${isoTime(l.finished)}`);
  if (l.error !== undefined) bits.push(`- ${l.error}`);
  else if (l.replacedBy !== undefined) bits.push(`- by ${l.replacedBy}`);
  return bits.join(' ');
}

/** Whether any node offers the reference node's record of its last sweep (then the table shows it). */
function anyLastSweep(rows: readonly NodeStatus[]): boolean {
  return rows.some((r) => r.ok && DATA_TYPES.some((t) => r.status[t].last !== undefined));
}

export function statusTableRows(rows: readonly NodeStatus[], withLast = anyLastSweep(rows)): CellValue[][] {
  return rows.flatMap((r): CellValue[][] => {
    if (!r.ok) return [[r.node, '-', r.why, r.error, '', '', ...(withLast ? [''] : [])]];
    return DATA_TYPES.map((t) => {
      const s = r.status[t];
      const row: CellValue[] = [r.node, t, s.running ? 'yes' : 'no', current(s), s.timestamp !== undefined ? describeTime(s.timestamp * 1000) : '', t === 'text' ? '' : (s.rollups ?? '')];
      if (withLast) row.push(describeLastSweep(s, t));
      return row;
    });
  });
}

export const STATUS_CSV_HEADERS = [
  'node',
  'ok',
  'type',
  'running',
  'current_uuid',
  'current_metric',
  'delete_time',
  'delete_time_iso',
  'rollups',
  'error',
  'last_result',
  'last_delete_time',
  'last_rollups',
  'last_finished_iso',
  'last_error',
] as const;

export function statusCsvRows(rows: readonly NodeStatus[]): CellValue[][] {
  return rows.flatMap((r): CellValue[][] => {
    if (!r.ok) return [[r.node, 'false', '', '', '', '', '', '', '', r.error, '', '', '', '', '']];
    return DATA_TYPES.map((t) => {
      const s = r.status[t];
      const l = s.last;
      return [
        r.node,
        'true',
        t,
        String(s.running),
        s.current_uuid,
        s.current_metric,
        s.timestamp,
        s.timestamp !== undefined ? isoTime(s.timestamp * 1000) : '',
        s.rollups,
        '',
        l?.result,
        l?.timestamp,
        l?.rollups,
        l?.finished !== undefined ? isoTime(l.finished) : '',
        l?.error,
      ];
    });
  });
}

function print(ctx: CliContext, output: 'table' | 'json' | 'csv', rows: readonly NodeStatus[]): void {
  if (output === 'json') ctx.stdout.write(renderJson(statusJson(rows)));
  else if (output === 'csv') ctx.stdout.write(renderCsv(STATUS_CSV_HEADERS, statusCsvRows(rows), { terminal: Boolean(ctx.stdout.isTTY) }));
  else {
    const withLast = anyLastSweep(rows);
    ctx.stdout.write(
      renderTable(['node', 'type', 'running', 'current', 'delete time', 'rollups', ...(withLast ? ['last sweep'] : [])], statusTableRows(rows, withLast), {
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

/** `--watch` intervals: a poll a node can answer before the next, and a watch that still watches. */
export const MIN_WATCH_MS = 100;
export const MAX_WATCH_MS = 3_600_000;

/** The `--watch` value: undefined (no watch), the default 2 s, or a duration within the bounds above. */
export function parseWatch(value: boolean | string | undefined): number | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return 2000;
  const ms = parseDuration(value, '--watch');
  if (ms < MIN_WATCH_MS || ms > MAX_WATCH_MS) {
    throw new UsageError(`--watch: ${JSON.stringify(value)} is outside ${MIN_WATCH_MS}ms..1h (the interval between two polls of each node)`, 'e.g. --watch 5s');
  }
  return ms;
}

/**
 * The watch loop's sleeper: every wait lasts at least `floorMs` and the whole time asked for,
 * whatever the timers do (a timer longer than 24.8 days fires after 1 ms), so no path through
 * the loop can poll without pausing. Only the run's signal ends a wait early.
 */
export function watchClock(floorMs: number, base: Clock = systemClock): Clock {
  return {
    now: base.now,
    sleep: async (ms, signal) => {
      const until = base.now() + Math.max(ms, floorMs);
      for (let left = until - base.now(); left > 0 && !signal?.aborted; left = until - base.now()) {
        await base.sleep(Math.min(left, MAX_TIMEOUT_MS), signal);
      }
    },
  };
}

export async function statusAction(opts: StatusOptions, ctx: CliContext): Promise<ExitCode> {
  const output = parseOutput(opts.output, ['table', 'json', 'csv'] as const);
  const intervalMs = parseWatch(opts.watch);
  const lostAfterMs = parseTimeout(opts.lostAfter, '--lost-after');
  const list = resolveNodes({ flag: opts.nodes, env: ctx.env, cwd: ctx.cwd });
  for (const w of list.warnings) ctx.log.warn(w);
  const net = openNetwork(opts, ctx);
  try {
    const clients = list.nodes.map((n) => net.client(n));
    const outcomes = await fanOut(clients, (c) => c.sweepStatus({ signal: ctx.signal }));
    let rows: NodeStatus[] = outcomes.map((o) => (o.ok ? { node: o.node, ok: true, status: o.value } : { node: o.node, ok: false, error: o.error.detail, why: noStatus(o.error) }));
    if (intervalMs !== undefined && !ctx.signal.aborted) {
      // Watch: poll every reachable node until all of it is idle; changes on stderr, the final state on stdout.
      const progress = new NodeProgress(ctx, list.nodes);
      for (const r of rows) progress.onEvent({ kind: 'state', node: r.node, at: ctx.now(), ...(r.ok ? { state: r.status && DATA_TYPES.some((t) => r.status[t].running) ? 'running' : 'idle', status: r.status } : { state: r.why === 'unreachable' ? 'unreachable' : 'failed', error: r.error }) });
      try {
        rows = await Promise.all(
          rows.map(async (r, i): Promise<NodeStatus> => {
            if (!r.ok) return r;
            const res = await pollUntilIdle(clients[i]!, {
              intervalMs,
              lostAfterMs,
              clock: watchClock(MIN_WATCH_MS),
              signal: ctx.signal,
              onEvent: (e) => progress.onEvent(e.kind === 'state' && e.state === 'done' ? { ...e, state: 'idle' } : e),
            });
            // no answer, or answers that were not a status, for --lost-after (the reason says which)
            if (res.state === 'lost' || res.state === 'unconfirmed') return { node: r.node, ok: false, error: res.reason, why: 'lost' };
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

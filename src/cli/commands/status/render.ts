/** `tsnode status`: each node's sweep state and lag on stdout, as a table (one line or per type), CSV or JSON. */
import { DATA_TYPES, type DataType, type SweepStatus, type TypeStatus } from '../../../protocol/index.js';
import type { CliContext } from '../../context.js';
import { errorJson, spanFields, timeFields } from '../../render/json-values.js';
import { lagText } from '../../render/lag.js';
import { renderCsv, renderJson, renderTable, tableWidth, type CellValue } from '../../render/table.js';
import { describeTime, isoTime } from '../../time.js';
import type { NodeStatus, NoStatus } from './node-status.js';
import type { StatusOptions } from './options.js';

/** How a state reads in a table: `no sweep API`, `bad answer`. */
function label(why: NoStatus): string {
  return why === 'no_sweep_api' ? 'no sweep API' : why.replace(/_/g, ' ');
}

/** A node that answered: `running` while any type sweeps, else `idle`. */
function nodeState(r: NodeStatus): string {
  if (!r.ok) return r.why;
  return DATA_TYPES.some((t) => r.status[t].running) ? 'running' : 'idle';
}

/** One type's status as JSON: booleans, times in epoch seconds and ISO, spans as numbers (null: all). */
export function typeStatusJson(type: DataType, s: TypeStatus): Record<string, unknown> {
  const out: Record<string, unknown> = { running: s.running };
  Object.assign(out, timeFields('delete_time', s.timestamp === undefined ? undefined : s.timestamp * 1000));
  if (type !== 'text') Object.assign(out, spanFields('rollups', s.rollups));
  if (s.current_uuid !== undefined) out.current_uuid = s.current_uuid;
  if (s.current_metric !== undefined) out.current_metric = s.current_metric;
  if (s.cancelling !== undefined) out.cancelling = s.cancelling;
  if (s.instance !== undefined) out.instance = s.instance;
  const l = s.last;
  if (l) {
    const last: Record<string, unknown> = {};
    if (l.result !== undefined) last.result = l.result;
    Object.assign(last, timeFields('delete_time', l.timestamp === undefined ? undefined : l.timestamp * 1000));
    if (type !== 'text') Object.assign(last, spanFields('rollups', l.rollups));
    Object.assign(last, timeFields('finished', l.finished));
    if (l.error !== undefined) last.error = l.error;
    if (l.replacedBy !== undefined) last.replaced_by = l.replacedBy;
    out.last = last;
  }
  return out;
}

/** `--output json`: one object per node; `state` says how it is, `error` why there is no status. */
export function statusJson(rows: readonly NodeStatus[]): unknown {
  return {
    nodes: rows.map((r) =>
      r.ok
        ? {
            node: r.node,
            ok: true,
            state: nodeState(r),
            lag_seconds: r.lagSeconds ?? null,
            status: Object.fromEntries(DATA_TYPES.map((t) => [t, typeStatusJson(t, r.status[t])])),
          }
        : { node: r.node, ok: false, state: r.why, lag_seconds: r.lagSeconds ?? null, error: errorJson(r.code, r.error) },
    ),
  };
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

export const PER_TYPE_HEADERS = ['node', 'type', 'running', 'current', 'delete time', 'rollups'] as const;

/** `--per-type`: one row per node and data type. */
export function statusTableRows(rows: readonly NodeStatus[], withLast = anyLastSweep(rows)): CellValue[][] {
  return rows.flatMap((r): CellValue[][] => {
    if (!r.ok) return [[r.node, '-', label(r.why), r.error, '', '', ...(withLast ? [''] : [])]];
    return DATA_TYPES.map((t) => {
      const s = r.status[t];
      const row: CellValue[] = [
        r.node,
        t,
        s.running ? 'yes' : 'no',
        current(s),
        s.timestamp !== undefined ? describeTime(s.timestamp * 1000) : '',
        t === 'text' ? '' : (s.rollups ?? ''),
      ];
      if (withLast) row.push(describeLastSweep(s, t));
      return row;
    });
  });
}

export const ONE_LINE_HEADERS = ['node', 'state', 'lag', 'nnt', 'text', 'histogram', 'note'] as const;

/** One type in the one-line view: `running` (with its spans when not all), `idle`, `idle, failed`. */
function typeCell(type: DataType, s: TypeStatus): string {
  if (s.running) return type !== 'text' && s.rollups !== undefined && s.rollups !== 'all' ? `running ${s.rollups}` : 'running';
  const result = s.last?.result;
  return result !== undefined && result !== 'completed' ? `idle, ${result}` : 'idle';
}

/** The last sweep a node finished (of any type), for the one-line view's note. */
function latestLastSweep(status: SweepStatus): string {
  const done = DATA_TYPES.filter((t) => status[t].last !== undefined).sort((a, b) => (status[b].last!.finished ?? 0) - (status[a].last!.finished ?? 0));
  const t = done[0];
  if (t === undefined) return '';
  const same = done.filter((x) => status[x].last!.timestamp === status[t].last!.timestamp && status[x].last!.finished === status[t].last!.finished);
  return `last sweep (${same.join(', ')}) ${describeLastSweep(status[t], t)}`;
}

/** The default view: one row per node, every type in it. */
export function statusOneLineRows(rows: readonly NodeStatus[]): CellValue[][] {
  return rows.map((r): CellValue[] => {
    const lag = lagText(r.lagSeconds);
    if (!r.ok) return [r.node, label(r.why), lag, '-', '-', '-', r.error];
    const s = r.status;
    const running = DATA_TYPES.filter((t) => s[t].running);
    if (running.length === 0) return [r.node, nodeState(r), lag, ...DATA_TYPES.map((t) => typeCell(t, s[t])), latestLastSweep(s)];
    // What runs: before which time (once when every type sweeps to the same), and where each type is.
    const times = [...new Set(running.map((t) => s[t].timestamp).filter((x): x is number => x !== undefined))];
    const before =
      times.length === 1
        ? [`before ${describeTime(times[0]! * 1000)}`]
        : running.filter((t) => s[t].timestamp !== undefined).map((t) => `${t} before ${describeTime(s[t].timestamp! * 1000)}`);
    const work = running.filter((t) => current(s[t]) !== '').map((t) => `${t} at ${current(s[t])}`);
    return [r.node, nodeState(r), lag, ...DATA_TYPES.map((t) => typeCell(t, s[t])), [...before, ...work].join('; ')];
  });
}

export const STATUS_CSV_HEADERS = [
  'node',
  'ok',
  'state',
  'type',
  'running',
  'current_uuid',
  'current_metric',
  'delete_time',
  'delete_time_iso',
  'rollups',
  'error_code',
  'error',
  'last_result',
  'last_delete_time',
  'last_delete_time_iso',
  'last_rollups',
  'last_finished',
  'last_finished_iso',
  'last_error',
  'lag_seconds',
] as const;

/** CSV: always one row per node and type (the grain a spreadsheet or a script wants); `rollups` as the node wrote it. */
export function statusCsvRows(rows: readonly NodeStatus[]): CellValue[][] {
  return rows.flatMap((r): CellValue[][] => {
    const lag = r.lagSeconds ?? '';
    if (!r.ok) return [[r.node, 'false', r.why, '', '', '', '', '', '', '', r.code, r.error, '', '', '', '', '', '', '', lag]];
    return DATA_TYPES.map((t) => {
      const s = r.status[t];
      const l = s.last;
      return [
        r.node,
        'true',
        nodeState(r),
        t,
        String(s.running),
        s.current_uuid,
        s.current_metric,
        s.timestamp,
        s.timestamp !== undefined ? isoTime(s.timestamp * 1000) : '',
        s.rollups,
        '',
        '',
        l?.result,
        l?.timestamp,
        l?.timestamp !== undefined ? isoTime(l.timestamp * 1000) : '',
        l?.rollups,
        l?.finished !== undefined ? l.finished / 1000 : '',
        l?.finished !== undefined ? isoTime(l.finished) : '',
        l?.error,
        lag,
      ];
    });
  });
}

export function print(ctx: CliContext, opts: Pick<StatusOptions, 'output' | 'perType'>, rows: readonly NodeStatus[]): void {
  if (opts.output === 'json') return void ctx.stdout.write(renderJson(statusJson(rows)));
  if (opts.output === 'csv') return void ctx.stdout.write(renderCsv(STATUS_CSV_HEADERS, statusCsvRows(rows), { terminal: Boolean(ctx.stdout.isTTY) }));
  const bad = (cell: string): boolean => /^(unreachable|no sweep API|error|bad answer|lost)$/.test(cell) || /^idle, (failed|cancelled|replaced)$/.test(cell);
  if (!opts.perType) {
    ctx.stdout.write(
      renderTable(ONE_LINE_HEADERS, statusOneLineRows(rows), {
        colour: ctx.colour,
        width: tableWidth(ctx),
        paint: (cell, col, _r, p) => (col < 1 || col > 5 || col === 2 ? cell : cell.startsWith('running') ? p.cyan(cell) : bad(cell) ? p.red(cell) : cell),
      }),
    );
    return;
  }
  const withLast = anyLastSweep(rows);
  ctx.stdout.write(
    renderTable([...PER_TYPE_HEADERS, ...(withLast ? ['last sweep'] : [])], statusTableRows(rows, withLast), {
      colour: ctx.colour,
      width: tableWidth(ctx),
      paint: (cell, col, _r, p) => (col !== 2 ? cell : cell === 'yes' ? p.cyan(cell) : cell === 'no' ? cell : p.red(cell)),
    }),
  );
}

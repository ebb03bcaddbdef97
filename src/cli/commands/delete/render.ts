/** `tsnode delete`: the dry run as metrics x nodes, and the result per node, as table, CSV or JSON. */
import { metricKey, type MetricKey, type NodeLook } from '../../../client/tag-delete.js';
import type { CliContext } from '../../context.js';
import { renderCsv, renderJson, renderTable, tableWidth, type CellValue } from '../../render/table.js';
import type { NodeOutcome } from '../../../run/delete-outcome.js';
import type { DeletePlan } from './plan.js';

export type { NodeOutcome } from '../../../run/delete-outcome.js';

/** Rows of a table shown on a terminal; the JSON and CSV always hold all of them. */
const TABLE_ROWS = 50;
const host = (url: string): string => url.replace(/^https?:\/\//, '');

type Output = 'table' | 'json' | 'csv';

/** The dry run: one row per metric (and type), one column per node, the node's status word in each cell. */
export function printLooks(ctx: CliContext, output: Output, plan: DeletePlan, looks: NodeLook[][], dryRun: boolean): void {
  const nodes = [...new Set(looks.flatMap((p) => p.map((l) => l.node)))];
  const rows = new Map<string, { type: string; m: MetricKey; cells: Map<string, string> }>();
  looks.forEach((perNode, r) => {
    const req = plan.requests[r]!;
    const type = req.scope.kind === 'before' ? req.scope.type : 'all';
    for (const l of perNode) {
      for (const m of l.metrics) {
        const key = `${type}\u0000${metricKey(m)}`;
        let row = rows.get(key);
        if (!row) rows.set(key, (row = { type, m, cells: new Map() }));
        row.cells.set(l.node, m.status);
      }
    }
  });
  const list = [...rows.values()].sort((a, b) => (a.m.metric < b.m.metric ? -1 : a.m.metric > b.m.metric ? 1 : a.type < b.type ? -1 : 1));
  if (output === 'json') {
    if (!dryRun) return; // the result document carries the receipt; one JSON document per run
    const perNode = nodes.map((node) => ({
      node,
      error: looks.flatMap((p) => p.filter((l) => l.node === node && l.error !== undefined).map((l) => l.error))[0] ?? null,
      incomplete: looks.some((p) => p.some((l) => l.node === node && l.incomplete)),
      found: list.filter((row) => row.cells.get(node) === 'found').length,
    }));
    const metrics = list.map((row) => ({ type: row.type, uuid: row.m.uuid, metric_name: row.m.metric, nodes: Object.fromEntries(row.cells) }));
    return void ctx.stdout.write(renderJson({ dry_run: true, query: plan.query, account: plan.account, scope: plan.scope, nodes: perNode, metrics }));
  }
  const header = ['metric', 'uuid', ...(plan.requests.length > 1 || plan.requests[0]!.scope.kind === 'before' ? ['type'] : []), ...nodes.map(host)];
  const withType = header.includes('type');
  const toRow = (row: (typeof list)[number]): CellValue[] => [row.m.metric, row.m.uuid, ...(withType ? [row.type] : []), ...nodes.map((n) => row.cells.get(n) ?? '-')];
  if (output === 'csv') {
    if (dryRun) ctx.stdout.write(renderCsv(header, list.map(toRow), { terminal: Boolean(ctx.stdout.isTTY) }));
    return;
  }
  const shown = list.slice(0, TABLE_ROWS).map(toRow);
  const totals: CellValue[] = ['found (total)', '', ...(withType ? [''] : []), ...nodes.map((n) => list.filter((row) => row.cells.get(n) === 'found').length)];
  const out = list.length ? renderTable(header, [...shown, totals], { colour: ctx.colour, width: tableWidth(ctx) }) : '(no metric matches on any node)\n';
  // Before a confirmed delete the table goes to stderr: stdout holds the result only.
  (dryRun ? ctx.stdout : ctx.stderr).write(out);
  if (list.length > TABLE_ROWS) ctx.log.info(`${list.length - TABLE_ROWS} more metric(s) not shown: use -o json or -o csv for every one`);
}

export interface DeleteResult {
  run: string;
  plan: DeletePlan;
  outcomes: NodeOutcome[];
  exit: number;
  catchUp: string | undefined;
  /** Ring nodes --allow-partial left out. */
  notSwept?: ReadonlyArray<{ id: string; url: string }>;
}

/** `delete -o json`: the run, what was asked, every node's outcome with its per-metric receipt. */
export function deleteJson(r: DeleteResult): unknown {
  return {
    run: r.run,
    query: r.plan.query,
    metric: r.plan.metric,
    account: r.plan.account,
    scope: r.plan.scope,
    exit: r.exit,
    catch_up: r.catchUp ?? null,
    not_swept: (r.notSwept ?? []).map((m) => ({ id: m.id, node: m.url })),
    nodes: r.outcomes.map((o) => ({
      ...o,
      reappeared: o.reappeared.map((m) => ({ uuid: m.uuid, metric_name: m.metric })),
      remaining: o.remaining.map((m) => ({ uuid: m.uuid, metric_name: m.metric })),
    })),
  };
}

export function printResult(ctx: CliContext, output: Output, r: DeleteResult): void {
  if (output === 'json') return void ctx.stdout.write(renderJson(deleteJson(r)));
  const header = ['node', 'state', 'found', 'deleted', 'rounds', 'gone', 'reappeared', 'remaining', 'reason'];
  const rows: CellValue[][] = r.outcomes.map((o) => [o.node, o.state, o.found, o.deleted, o.rounds, o.gone, o.reappeared.length, o.remaining.length, o.reason]);
  if (output === 'csv') return void ctx.stdout.write(renderCsv(header, rows, { terminal: Boolean(ctx.stdout.isTTY) }));
  ctx.stdout.write(renderTable(header, rows, { colour: ctx.colour, width: tableWidth(ctx), align: [undefined, undefined, 'right', 'right', 'right', 'right', 'right', 'right'] }));
}

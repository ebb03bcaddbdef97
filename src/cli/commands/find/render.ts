/** `tsnode find`: its result on stdout, as a table, CSV or JSON. */
import type { FindResult, NodeCount } from '../../../client/tag-find.js';
import type { CliContext } from '../../context.js';
import { renderCsv, renderJson, renderTable, tableWidth, type CellValue } from '../../render/table.js';
import type { FindArgs as Opts } from './options.js';

/** `find -o json`: the query, the metrics with the nodes holding each, and each node's answer. */
export function findJson(opts: Opts, r: FindResult): unknown {
  return {
    query: opts.query,
    account: opts.account ?? 1,
    metrics: r.metrics,
    nodes: r.nodes.map((n) => (n.ok ? { node: n.node, ok: true, count: n.count, incomplete: n.incomplete } : { node: n.node, ok: false, error: n.error })),
  };
}

const host = (url: string): string => url.replace(/^https?:\/\//, '');

export function printMetrics(ctx: CliContext, opts: Opts, r: FindResult): void {
  if (opts.output === 'json') return void ctx.stdout.write(renderJson(findJson(opts, r)));
  const rows: CellValue[][] = r.metrics.map((m) => [m.metric_name, m.uuid, m.type, m.nodes.map(host).join(' ')]);
  if (opts.output === 'csv') return void ctx.stdout.write(renderCsv(['metric_name', 'uuid', 'type', 'nodes'], rows, { terminal: Boolean(ctx.stdout.isTTY) }));
  ctx.stdout.write(renderTable(['metric', 'uuid', 'type', 'nodes'], rows, { colour: ctx.colour, width: tableWidth(ctx) }));
}

export function printCounts(ctx: CliContext, opts: Opts, r: { total: number; nodes: NodeCount[] }): void {
  if (opts.output === 'json') {
    const nodes = r.nodes.map((n) => (n.ok ? { node: n.node, ok: true, count: n.count, estimate: n.estimate } : { node: n.node, ok: false, count: null, error: n.error }));
    return void ctx.stdout.write(renderJson({ query: opts.query, account: opts.account ?? 1, total: r.total, nodes }));
  }
  const rows: CellValue[][] = r.nodes.map((n) => [n.node, n.ok ? n.count : 'no answer']);
  if (opts.output === 'csv') return void ctx.stdout.write(renderCsv(['node', 'count'], rows, { terminal: Boolean(ctx.stdout.isTTY) }));
  ctx.stdout.write(renderTable(['node', 'count'], [...rows, ['total', r.total]], { colour: ctx.colour, width: tableWidth(ctx), align: [undefined, 'right'] }));
}

import { countAcross, findAcross, type FindResult, type NodeCount } from '../../../client/tag-find.js';
import type { CliContext } from '../../context.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { openTarget } from '../../node-source.js';
import { printable } from '../../render/printable.js';
import { renderCsv, renderJson, renderTable, tableWidth, type CellValue } from '../../render/table.js';
import { checkTagQuery } from '../../tag-query.js';
import { DEFAULT_FIND_LIMIT, type FindOptions } from './options.js';

type Opts = FindOptions & { query: string };

/** The exit code of a fan-out: 0 when every node answered in full, 1 when none did, else 3. */
function exitOf(nodes: ReadonlyArray<{ ok: boolean; incomplete?: boolean }>): ExitCode {
  if (nodes.every((n) => !n.ok)) return EXIT.failed;
  return nodes.every((n) => n.ok && n.incomplete !== true) ? EXIT.ok : EXIT.partial;
}

function reportNodes(ctx: CliContext, nodes: FindResult['nodes'] | NodeCount[], limit: number): void {
  for (const n of nodes) {
    if (!n.ok) ctx.log.warn(`${n.node}: no answer: ${printable(n.error)}`);
    else if ('incomplete' in n && n.incomplete) ctx.log.warn(`${n.node}: listed only the first ${limit} matching metrics (the node has more; raise --limit or narrow the query)`);
  }
}

export async function findAction(opts: Opts, ctx: CliContext): Promise<ExitCode> {
  checkTagQuery(opts.query);
  const account = opts.account ?? 1;
  const limit = opts.limit ?? DEFAULT_FIND_LIMIT;
  const run = await openTarget(opts, ctx, { command: 'tsnode find' });
  const net = run.network;
  const clients = run.nodes.map((n) => net.client(n));
  try {
    if (opts.count) {
      const r = await countAcross(clients, { query: opts.query, account, signal: net.signal });
      printCounts(ctx, opts, r);
      reportNodes(ctx, r.nodes, limit);
      return exitOf(r.nodes);
    }
    const r = await findAcross(clients, { query: opts.query, account, limit, signal: net.signal });
    printMetrics(ctx, opts, r);
    reportNodes(ctx, r.nodes, limit);
    const answered = r.nodes.filter((n) => n.ok).length;
    ctx.log.info(`${r.metrics.length} metric(s) on ${answered} of ${r.nodes.length} node(s) that answered`);
    return exitOf(r.nodes);
  } finally {
    await net.close();
  }
}

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

function printMetrics(ctx: CliContext, opts: Opts, r: FindResult): void {
  if (opts.output === 'json') return void ctx.stdout.write(renderJson(findJson(opts, r)));
  const rows: CellValue[][] = r.metrics.map((m) => [m.metric_name, m.uuid, m.type, m.nodes.map(host).join(' ')]);
  if (opts.output === 'csv') return void ctx.stdout.write(renderCsv(['metric_name', 'uuid', 'type', 'nodes'], rows, { terminal: Boolean(ctx.stdout.isTTY) }));
  ctx.stdout.write(renderTable(['metric', 'uuid', 'type', 'nodes'], rows, { colour: ctx.colour, width: tableWidth(ctx) }));
}

function printCounts(ctx: CliContext, opts: Opts, r: { total: number; nodes: NodeCount[] }): void {
  if (opts.output === 'json') {
    const nodes = r.nodes.map((n) => (n.ok ? { node: n.node, ok: true, count: n.count, estimate: n.estimate } : { node: n.node, ok: false, count: null, error: n.error }));
    return void ctx.stdout.write(renderJson({ query: opts.query, account: opts.account ?? 1, total: r.total, nodes }));
  }
  const rows: CellValue[][] = r.nodes.map((n) => [n.node, n.ok ? n.count : 'no answer']);
  if (opts.output === 'csv') return void ctx.stdout.write(renderCsv(['node', 'count'], rows, { terminal: Boolean(ctx.stdout.isTTY) }));
  ctx.stdout.write(renderTable(['node', 'count'], [...rows, ['total', r.total]], { colour: ctx.colour, width: tableWidth(ctx), align: [undefined, 'right'] }));
}

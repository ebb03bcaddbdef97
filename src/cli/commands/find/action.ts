import { countAcross, findAcross, type FindResult, type NodeCount } from '../../../client/tag-find.js';
import type { CliContext } from '../../context.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { openTarget } from '../../node-source.js';
import { printable } from '../../render/printable.js';
import { checkTagQuery } from '../../tag-query.js';
import { DEFAULT_FIND_LIMIT, type FindArgs as Opts } from './options.js';
import { printCounts, printMetrics } from './render.js';

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

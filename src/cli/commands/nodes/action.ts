import { inspectCluster, type ClusterView } from '../../../client/cluster-view.js';
import type { CliContext } from '../../context.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { openTarget } from '../../node-source.js';
import type { NodesOptions } from './options.js';
import { print } from './render.js';

export async function nodesAction(opts: NodesOptions, ctx: CliContext): Promise<ExitCode> {
  const run = await openTarget(opts, ctx, { command: 'tsnode nodes' });
  const net = run.network;
  let view: ClusterView;
  try {
    view = await inspectCluster(
      run.nodes.map((n) => net.client(n)),
      (url) => net.client(url),
      { signal: net.signal },
    );
  } finally {
    await net.close();
  }
  print(ctx, opts.output, view);
  const ring = view.ring;
  if (ring) {
    ctx.log.info(`ring ${ring.hash} from ${ring.seed.url}: ${ring.nodes.length} node${ring.nodes.length === 1 ? '' : 's'}, write_copies ${ring.topology.writeCopies}`);
    if (!ring.verified) ctx.log.warn(`that topology hashes to ${ring.computedHash} here: metric owners computed by tsnode may differ from the store's`);
  } else {
    ctx.log.info('no listed node runs with a topology: these are the listed nodes as they are (features that need a ring, such as locate, will refuse)');
  }
  for (const p of view.coverage.problems) if (!/not in the list/.test(p)) ctx.log.warn(p);
  if (ctx.signal.aborted) return EXIT.interrupted;
  const bad = view.nodes.filter((r) => r.state !== 'ok' || (ring && (!r.inRing || r.topology !== 'same'))).length;
  return bad === 0 ? EXIT.ok : bad === view.nodes.length ? EXIT.failed : EXIT.partial;
}

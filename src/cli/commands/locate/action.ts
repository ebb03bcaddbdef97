import { DiscoveryError } from '../../../client/discovery.js';
import { locateMetric, type LocateResult } from '../../../client/cluster-view.js';
import { UUID_RE } from '../../../protocol/index.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { openTarget } from '../../node-source.js';
import { printable } from '../../render/printable.js';
import type { LocateOptions } from './options.js';
import { print } from './render.js';

export async function locateAction(opts: LocateOptions & { uuid: string; metric: string }, ctx: CliContext): Promise<ExitCode> {
  if (!UUID_RE.test(opts.uuid)) throw new UsageError(`uuid: ${JSON.stringify(opts.uuid)} is not a UUID`, 'the check UUID, e.g. 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f');
  if (opts.metric === '') throw new UsageError('metric: the metric name is empty');
  const run = await openTarget(opts, ctx, { command: 'tsnode locate' });
  const net = run.network;
  let result: LocateResult;
  try {
    result = await locateMetric(
      run.nodes.map((n) => net.client(n)),
      opts.uuid,
      opts.metric,
      { signal: net.signal },
    );
  } catch (err) {
    // Kept: the same error from a seed is the seed's (node-source.ts); here the listed nodes run no ring.
    if (err instanceof DiscoveryError) throw new UsageError(`locate needs a ring topology: ${err.message}`, err.hint);
    throw err;
  } finally {
    await net.close();
  }
  print(ctx, opts.output, result);
  const { check, ring } = result;
  const where = `ring ${ring.hash.slice(0, 12)} from ${ring.seed.url}, write_copies ${ring.topology.writeCopies}`;
  if (check.result === 'agrees') {
    ctx.log.info(`key ${printable(result.key)} (${where}); ${check.node} places it on the same nodes`);
    return EXIT.ok;
  }
  if (check.result === 'differs') {
    ctx.log.error(
      `${check.node} places ${printable(result.key)} on ${check.nodeOwners!.join(', ')}, not on ${result.owners.map((n) => n.id).join(', ')} as computed here from its topology`,
    );
    return EXIT.failed;
  }
  const why = check.result === 'unavailable' ? `${check.node} has no /locate/json to check against` : `checking with ${check.node} failed: ${printable(check.error ?? '')}`;
  if (ring.verified && check.result === 'unavailable') {
    ctx.log.info(`key ${printable(result.key)} (${where}); computed from the topology (${why}; its hash checks out)`);
    return EXIT.ok;
  }
  ctx.log.warn(`unconfirmed: ${why}${ring.verified ? '' : `, and the topology hashes to ${ring.computedHash} here, not ${ring.hash}`}`);
  return EXIT.failed;
}

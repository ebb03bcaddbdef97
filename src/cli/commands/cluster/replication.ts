/**
 * `tsnode cluster pause <node>` / `cluster resume <node>`: stop or restart replication towards one
 * node of a local ring, from every other node (each keeps journaling for it meanwhile), through
 * each node's `POST /replication/pause|resume/<peer id>`. Exit 0 when every other node confirmed,
 * 3 when some did, 1 when none did, 2 when the node or the cluster is unknown.
 */
import { readClusterState, type ClusterNode } from '../../local-cluster/state.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { plainNetwork } from '../../network.js';
import { printReplication, type ReplicationAnswer } from './render.js';
import type { ClusterReplicationFlags } from './options.js';

/** The cluster node a `<node>` argument names: its id, its URL, or its 1-based index. */
export function findClusterNode(nodes: readonly ClusterNode[], text: string): ClusterNode | undefined {
  const t = text.trim().toLowerCase().replace(/\/+$/, '');
  return nodes.find((n) => n.id?.toLowerCase() === t || n.url.toLowerCase() === t || String(n.index) === t);
}

export async function clusterReplicationAction(flags: ClusterReplicationFlags & { node: string; paused: boolean }, ctx: CliContext): Promise<ExitCode> {
  const verb = flags.paused ? 'pause' : 'resume';
  const state = readClusterState(flags.dir);
  if (!state) throw new UsageError(`no cluster recorded in ${flags.dir} (no cluster.json)`, 'start one with `tsnode cluster up`, or name its directory with --dir');
  if (!state.ring) throw new UsageError(`the cluster in ${flags.dir} is no ring (it runs without a topology): it does not replicate`);
  const target = findClusterNode(state.nodes, flags.node);
  if (!target?.id) {
    throw new UsageError(
      `<node>: ${JSON.stringify(flags.node)} is no node of the cluster in ${flags.dir}`,
      `name one by id, URL or number: ${state.nodes.map((n) => `${n.index} ${n.url} ${n.id ?? ''}`.trim()).join('; ')}`,
    );
  }
  const others = state.nodes.filter((n) => n !== target);
  const net = plainNetwork({ connectTimeoutMs: 5_000, requestTimeoutMs: 30_000, retries: 1 }, ctx);
  let results: ReplicationAnswer[];
  try {
    results = await Promise.all(
      others.map(async (node) => {
        try {
          const peer = await net.client(node.url).setReplicationPaused(target.id!, flags.paused, { signal: net.signal });
          return {
            node,
            ok: peer.paused === flags.paused,
            error: peer.paused === flags.paused ? null : `the node says paused=${String(peer.paused)}`,
            pending: typeof peer.pending === 'number' ? peer.pending : null,
          };
        } catch (err) {
          return { node, ok: false, error: err instanceof Error ? err.message : String(err), pending: null };
        }
      }),
    );
  } finally {
    await net.close();
  }
  printReplication(ctx, flags.output, flags.paused, target, results);
  const ok = results.filter((r) => r.ok).length;
  ctx.log.info(
    `${verb}d replication towards ${target.url} (${target.id}) on ${ok} of ${others.length} nodes${flags.paused ? '; their journals keep it until `tsnode cluster resume`' : ''}`,
  );
  if (ctx.signal.aborted) return EXIT.interrupted;
  return ok === others.length ? EXIT.ok : ok === 0 ? EXIT.failed : EXIT.partial;
}

/**
 * `tsnode cluster restart [<node>]`, and `cluster up` on a directory whose recorded cluster does
 * not run whole: nodes started again with their recorded ports, data dirs, identities and flags.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { restartNodes, recordedCluster, type RestartResult } from '../../local-cluster/restart.js';
import { isOurNode } from '../../local-cluster/processes.js';
import { CLUSTER_FILE, readClusterState } from '../../local-cluster/state.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { whoAmI } from '../../journal.js';
import type { ClusterRestartFlags, ClusterUpFlags } from './options.js';
import { findClusterNode } from './replication.js';
import { printRestarted } from './render.js';

async function restartAndReport(
  ctx: CliContext,
  dir: string,
  output: ClusterRestartFlags['output'],
  opts: { only?: number[]; onlyStopped: boolean; graceMs?: number },
): Promise<RestartResult[]> {
  // A ClusterError carries its exit code (cli/local-cluster/state.ts): it escapes to reportError as it is.
  const results = await restartNodes(dir, {
    ...opts,
    env: ctx.env,
    signal: ctx.signal,
    by: whoAmI(ctx.env),
    onNode: (r) => ctx.log.info(`  node ${r.node.index} ${r.outcome}: ${r.node.url}  (pid ${r.node.pid}${r.oldPid && r.outcome === 'restarted' ? `, was ${r.oldPid}` : ''})`),
  });
  printRestarted(ctx, dir, output, results);
  return results;
}

/**
 * `cluster up` when `<dir>/cluster.json` records a cluster that does not run whole: its stopped
 * nodes are started as recorded (in the background, like the ones still running), and nothing
 * else changes. Undefined when there is no such cluster (cluster up starts one as usual).
 */
export async function upRecordedCluster(flags: ClusterUpFlags, ctx: CliContext): Promise<ExitCode | undefined> {
  const dir = resolve(ctx.cwd, flags.dir);
  if (!existsSync(join(dir, CLUSTER_FILE))) return undefined;
  const state = readClusterState(dir);
  if (!state) return undefined;
  const stopped = state.nodes.filter((n) => !isOurNode(n.pid, n.dataDir));
  // Every node runs: startCluster refuses a second cluster there, naming them.
  if (stopped.length === 0) return undefined;
  recordedCluster(dir);
  const count = flags.count ?? flags.nodes;
  if (count !== undefined && count !== state.nodes.length) {
    throw new UsageError(
      `--count ${count}: the cluster recorded in ${dir} has ${state.nodes.length} nodes; cluster up starts its stopped ones as recorded`,
      `to change its size: tsnode cluster down --dir ${dir}, then tsnode cluster up --count ${count} --dir ${dir}`,
    );
  }
  ctx.log.info(
    `${dir} records a cluster of ${state.nodes.length} node${state.nodes.length > 1 ? 's' : ''}; ${stopped.length} of them not running (node ${stopped.map((n) => n.index).join(', ')}): starting them on their recorded ports, with their data, identities and flags...`,
  );
  const results = await restartAndReport(ctx, dir, flags.output, { onlyStopped: true });
  const started = results.filter((r) => r.outcome === 'started').length;
  ctx.log.info(
    `started ${started} of ${results.length} node${results.length > 1 ? 's' : ''}; the cluster runs in the background (node list ${join(dir, 'nodes.txt')}; stop: tsnode cluster down --dir ${dir})`,
  );
  return EXIT.ok;
}

/** `cluster restart [<node>]`: stops and starts one node (by id, URL or number) or every node, one at a time. */
export async function clusterRestartAction(flags: ClusterRestartFlags & { node: string | undefined }, ctx: CliContext): Promise<ExitCode> {
  const dir = resolve(ctx.cwd, flags.dir);
  let only: number[] | undefined;
  if (flags.node !== undefined) {
    const state = recordedCluster(dir);
    const target = findClusterNode(state.nodes, flags.node);
    if (!target) {
      throw new UsageError(
        `<node>: ${JSON.stringify(flags.node)} is no node of the cluster in ${dir}`,
        `name one by id, URL or number: ${state.nodes.map((n) => `${n.index} ${n.url} ${n.id ?? ''}`.trim()).join('; ')}`,
      );
    }
    only = [target.index];
  }
  const results = await restartAndReport(ctx, dir, flags.output, { onlyStopped: false, graceMs: flags.grace, ...(only ? { only } : {}) });
  ctx.log.info(`restarted ${results.length} node${results.length === 1 ? '' : 's'} of ${dir} on their recorded ports; cluster down stops them`);
  return EXIT.ok;
}

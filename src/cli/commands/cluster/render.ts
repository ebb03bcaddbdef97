/**
 * `tsnode cluster up|down|restart|pause|resume`: each result on stdout, as a table, CSV or JSON.
 * What the nodes did while it ran (the lines on stderr) stays with the action that watched them.
 */
import type { RunningCluster } from '../../local-cluster/start.js';
import type { RestartResult } from '../../local-cluster/restart.js';
import type { ClusterNode } from '../../local-cluster/state.js';
import type { DownResult } from '../../local-cluster/stop.js';
import { STOP_OUTCOME } from '../../local-cluster/stop-text.js';
import type { CliContext } from '../../context.js';
import { renderCsv, renderJson, renderTable, tableWidth, type CellValue } from '../../render/table.js';
import { printable } from '../../render/printable.js';

type Output = 'table' | 'json' | 'csv';

/** One started cluster as the result of `cluster up`: stdout, in the chosen format. */
export function clusterJson(cluster: RunningCluster, profile: string | undefined): unknown {
  const st = cluster.state;
  return {
    dir: st.dir,
    nodes_file: cluster.nodesFile,
    topology_file: st.ring?.file ?? null,
    seed: st.nodes[0]?.url ?? null,
    ring: st.ring ? { hash: st.ring.hash, write_copies: st.ring.writeCopies } : null,
    detached: st.detached,
    profile: profile ?? null,
    nodes: st.nodes.map((n) => ({ index: n.index, url: n.url, port: n.port, pid: n.pid, id: n.id ?? null, data_dir: n.dataDir, log_file: n.logFile })),
  };
}

const CLUSTER_HEADERS = ['node', 'url', 'id', 'pid', 'data_dir'] as const;

/** `cluster up`: the nodes started. */
export function printCluster(ctx: CliContext, output: Output, cluster: RunningCluster, profile: string | undefined): void {
  if (output === 'json') return void ctx.stdout.write(renderJson(clusterJson(cluster, profile)));
  const rows: CellValue[][] = cluster.state.nodes.map((n) => [n.index, n.url, n.id ?? '', n.pid, n.dataDir]);
  if (output === 'csv') return void ctx.stdout.write(renderCsv(CLUSTER_HEADERS, rows, { terminal: Boolean(ctx.stdout.isTTY) }));
  ctx.stdout.write(renderTable(['node', 'url', 'id', 'pid', 'data dir'], rows, { colour: ctx.colour, width: tableWidth(ctx), align: ['right', undefined, undefined, 'right'] }));
}

/** `cluster down`: each recorded node and what stopping it did (no table when no cluster was recorded). */
export function printStopped(ctx: CliContext, output: Output, result: DownResult): void {
  if (output === 'json') {
    ctx.stdout.write(
      renderJson({ dir: result.dir, found: result.found, nodes: result.nodes.map((r) => ({ index: r.index, url: r.url, pid: r.pid, outcome: STOP_OUTCOME[r.outcome].json })) }),
    );
  } else if (output === 'csv') {
    ctx.stdout.write(
      renderCsv(
        ['node', 'url', 'pid', 'outcome'],
        result.nodes.map((r) => [r.index, r.url, r.pid, STOP_OUTCOME[r.outcome].json]),
      ),
    );
  } else if (result.found) {
    const rows: CellValue[][] = result.nodes.map((r) => [r.index, r.url, r.pid, STOP_OUTCOME[r.outcome].text]);
    ctx.stdout.write(renderTable(['node', 'url', 'pid', 'outcome'], rows, { colour: ctx.colour, width: tableWidth(ctx), align: ['right', undefined, 'right'] }));
  }
}

const RESTART_TEXT: Record<RestartResult['outcome'], string> = {
  started: 'started (was not running)',
  restarted: 'restarted',
  running: 'running (left alone)',
};

/** `cluster restart`, and `cluster up` on a recorded cluster: each node and what was done to it. */
export function printRestarted(ctx: CliContext, dir: string, output: Output, results: readonly RestartResult[]): void {
  if (output === 'json') {
    ctx.stdout.write(
      renderJson({
        dir,
        nodes: results.map(({ node: n, outcome, oldPid }) => ({ index: n.index, url: n.url, port: n.port, id: n.id ?? null, pid: n.pid, old_pid: oldPid || null, outcome })),
      }),
    );
    return;
  }
  if (output === 'csv') {
    ctx.stdout.write(
      renderCsv(
        ['node', 'url', 'id', 'pid', 'old_pid', 'outcome'],
        results.map(({ node: n, outcome, oldPid }) => [n.index, n.url, n.id ?? '', n.pid, oldPid || '', outcome]),
      ),
    );
    return;
  }
  const rows = results.map(({ node: n, outcome }) => [n.index, n.url, n.id ?? '', n.pid, RESTART_TEXT[outcome]]);
  ctx.stdout.write(renderTable(['node', 'url', 'id', 'pid', 'outcome'], rows, { colour: ctx.colour, width: tableWidth(ctx), align: ['right', undefined, undefined, 'right'] }));
}

/** What one other node said to `cluster pause|resume`. */
export interface ReplicationAnswer {
  node: ClusterNode;
  ok: boolean;
  error: string | null;
  pending: number | null;
}

/** `cluster pause|resume <node>`: every other node's answer. */
export function printReplication(ctx: CliContext, output: Output, paused: boolean, target: ClusterNode, results: readonly ReplicationAnswer[]): void {
  if (output === 'json') {
    ctx.stdout.write(
      renderJson({
        action: paused ? 'pause' : 'resume',
        target: { id: target.id, url: target.url },
        nodes: results.map((r) => ({ url: r.node.url, id: r.node.id ?? null, ok: r.ok, pending: r.pending, error: r.error })),
      }),
    );
  } else if (output === 'csv') {
    ctx.stdout.write(
      renderCsv(
        ['url', 'id', 'ok', 'pending', 'error'],
        results.map((r) => [r.node.url, r.node.id ?? '', String(r.ok), r.pending ?? '', r.error ?? '']),
      ),
    );
  } else {
    const rows = results.map((r) => [r.node.url, r.ok ? (paused ? 'paused' : 'resumed') : 'failed', r.pending ?? '-', printable(r.error ?? '')]);
    ctx.stdout.write(renderTable(['node', `replication to ${target.url}`, 'pending', 'note'], rows, { colour: ctx.colour, width: tableWidth(ctx) }));
  }
}

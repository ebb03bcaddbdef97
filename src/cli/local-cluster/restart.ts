/**
 * Starting recorded nodes again: `cluster restart [<node>]` (stop, then start, one node at a time)
 * and `cluster up` on a directory whose cluster runs in part (start only the nodes that do not run).
 * A node comes back with the arguments cluster.json recorded, so on its port, with its data dir and
 * its identity in the ring; cluster.json then records its new pid, so `cluster down` (and a
 * foreground `cluster up`'s Ctrl-C) stops it like any other.
 */
import { join, resolve } from 'node:path';
import { lockTargets, RunLockedError, type TargetLock } from '../../run/lock.js';
import { launchNode } from './launch.js';
import { isPortFree } from './ports.js';
import { isOurNode, stopProcess } from './processes.js';
import { CLUSTER_FILE, ClusterError, NODES_FILE, readClusterState, writeAtomic, type ClusterNode, type ClusterState } from './state.js';

/** What happened to one node: `started` (it was not running), `restarted` (stopped, then started), `running` (left alone). */
export interface RestartResult {
  node: ClusterNode;
  outcome: 'started' | 'restarted' | 'running';
  /** The pid it had before (0: none recorded). */
  oldPid: number;
}

export interface RestartOptions {
  /** Which nodes: indexes from 1 (all when absent). */
  only?: readonly number[];
  /** Leave running nodes alone (`cluster up`); otherwise they are stopped and started (`cluster restart`). */
  onlyStopped: boolean;
  graceMs?: number;
  startTimeoutMs?: number;
  /** The nodes' environment (the command's ctx.env). */
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** Who asks, for the lock file (`user@host`). */
  by: string;
  onNode?: (r: RestartResult) => void;
}

/**
 * One change to a cluster's processes at a time: `cluster restart`, `cluster up` on a running
 * cluster and `cluster down` take `<dir>/locks/` (the run core's lock files, naming the holder;
 * a holder that no longer runs is taken over).
 */
export function lockCluster(dir: string, command: string, by: string): TargetLock {
  try {
    return lockTargets(join(dir, 'locks'), [`cluster:${dir}`], { command, by });
  } catch (err) {
    // Kept: the cluster's lock is no run's target: it names the directory and says to try again.
    if (err instanceof RunLockedError) {
      throw new ClusterError('already_running', `another tsnode changes the cluster in ${dir}: ${err.message.replace(/^.*?: /, '')}`, 'wait for it to end, then try again');
    }
    throw err;
  }
}

/** Writes cluster.json and nodes.txt for `state` (atomically each). */
export function recordCluster(state: ClusterState): void {
  writeAtomic(
    join(state.dir, NODES_FILE),
    `# tsnode local cluster started ${state.startedAt}; stop it with: tsnode cluster down --dir ${state.dir}\n${state.nodes.map((n) => n.url).join('\n')}\n`,
  );
  writeAtomic(join(state.dir, CLUSTER_FILE), `${JSON.stringify(state, null, 2)}\n`);
}

/** The recorded cluster in `dir`; a usage error when there is none, or when it predates recorded arguments. */
export function recordedCluster(dir: string): ClusterState {
  const state = readClusterState(dir);
  if (!state) throw new ClusterError('bad_cluster_file', `no cluster recorded in ${dir} (no ${CLUSTER_FILE})`, 'start one with `tsnode cluster up --dir <dir>`');
  const old = state.nodes.filter((n) => !n.args);
  if (old.length) {
    throw new ClusterError(
      'bad_cluster_file',
      `${join(dir, CLUSTER_FILE)} does not record how node ${old.map((n) => n.index).join(', ')} was started (an older tsnode wrote it)`,
      `stop the cluster with \`tsnode cluster down --dir ${dir}\` and start it again with \`tsnode cluster up\``,
    );
  }
  return state;
}

/** A node that comes back must come back on its recorded port (the ring's topology names it). */
async function assertRecordedPortFree(host: string, node: ClusterNode): Promise<void> {
  if (node.port === 0 || (await isPortFree(host, node.port))) return;
  throw new ClusterError(
    'port_in_use',
    `node ${node.index}'s port ${node.port} on ${host} is in use by another process: node ${node.index} was not started`,
    `the ring's topology names that port, so the node can only come back there: stop what listens on it (e.g. \`lsof -i :${node.port}\`)`,
  );
}

/**
 * Starts the recorded nodes of `dir` that do not run (and, unless `onlyStopped`, stops and
 * starts the ones that do), one node at a time; each restarted node is detached (it outlives this
 * process) and recorded in cluster.json as soon as it is ready. Throws ClusterError when a node
 * does not come back (cluster.json then still records the others).
 */
export async function restartNodes(dirArg: string, opts: RestartOptions): Promise<RestartResult[]> {
  const dir = resolve(dirArg);
  const lock = lockCluster(dir, opts.onlyStopped ? 'cluster up' : 'cluster restart', opts.by);
  try {
    const state = recordedCluster(dir);
    const results: RestartResult[] = [];
    for (const node of state.nodes) {
      if (opts.only && !opts.only.includes(node.index)) continue;
      if (opts.signal?.aborted) throw new ClusterError('interrupted', 'interrupted while restarting the cluster');
      const running = isOurNode(node.pid, node.dataDir);
      if (running && opts.onlyStopped) {
        results.push({ node, outcome: 'running', oldPid: node.pid });
        continue;
      }
      const oldPid = node.pid;
      if (!running) await assertRecordedPortFree(state.host, node);
      if (running) {
        // Marked first: a foreground `cluster up` watching this node then knows its exit is asked for.
        node.restarting = true;
        recordCluster(state);
        await stopProcess(node.pid, { ...(opts.graceMs !== undefined ? { graceMs: opts.graceMs } : {}), isRunning: () => isOurNode(oldPid, node.dataDir) });
      }
      try {
        await launchNode(node, {
          detached: true,
          appendLog: true,
          env: opts.env,
          ...(opts.startTimeoutMs !== undefined ? { startTimeoutMs: opts.startTimeoutMs } : {}),
          ...(opts.signal ? { signal: opts.signal } : {}),
        });
      } finally {
        delete node.restarting;
        recordCluster(state);
      }
      const r: RestartResult = { node, outcome: running ? 'restarted' : 'started', oldPid };
      results.push(r);
      opts.onNode?.(r);
    }
    return results;
  } finally {
    lock.release();
  }
}

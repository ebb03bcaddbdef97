/**
 * Starts a local cluster of reference nodes as separate `tsnode serve` processes (stop.ts
 * stops one from its directory).
 *
 * UI-free: returns data and throws typed errors; `tsnode cluster`, `tsnode demo` and the tests
 * share it. It lives under cli/ rather than server/ because it manages *processes* through the
 * public command line (exactly what a user would run), not the server's internals: the server
 * stays a plain library, and this module never starts it in-process, so it cannot drift from
 * `tsnode serve`. (It reads a data dir's kept identity with the server's own reader, so a
 * restarted ring keeps its node ids.)
 */
import type { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { topologyHash, topologyToFile, type Topology } from '../../ring/index.js';
import { assertPortsFree, reservePorts } from './ports.js';
import { launchNode } from './launch.js';
import { isOurNode, stopProcess } from './processes.js';
import { localRing } from './ring.js';
import {
  CLUSTER_FILE,
  ClusterError,
  NODES_FILE,
  readClusterState,
  recordedNode,
  TOPOLOGY_FILE,
  writeAtomic,
  type ClusterNode,
  type ClusterRing,
  type ClusterState,
  type StopResult,
} from './state.js';

export { TSNODE_BIN } from './launch.js';

export interface StartOptions {
  count: number;
  /** First port; node i gets basePort + i. 0 = a free port for every node. */
  basePort: number;
  dir: string;
  host?: string;
  sweepPaceMs?: number;
  /** Every node reads bare integer start_ts/end_ts as .000 (`tsnode serve --lenient-timestamps`). */
  lenientTimestamps?: boolean;
  /** Nodes keep only what they are sent (`tsnode serve --no-replication`); by default a ring replicates. */
  noReplication?: boolean;
  /** Extra `tsnode serve` arguments for every node. */
  serveArgs?: string[];
  /** Extra `tsnode serve` arguments per node, by index from 1 (after serveArgs: they override them), for mixed rings. */
  nodeArgs?: ReadonlyMap<number, readonly string[]>;
  /** Leave the nodes running when this process exits (not waited for; recorded for `cluster down`). */
  detached?: boolean;
  /** How long one node may take to print its ready line. */
  startTimeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Start the nodes as one ring: each gets an identity (kept in its data dir across restarts),
   * `<dir>/topology.json` lists them all, and every node is started with it.
   */
  ring?: { writeCopies: number; weight?: number };
  /** Told as each node comes up (for progress). */
  onNodeReady?: (node: ClusterNode) => void;
  /** The nodes' environment (the command's ctx.env). */
  env: NodeJS.ProcessEnv;
}

export interface RunningCluster {
  state: ClusterState;
  nodesFile: string;
  /** Resolves when any node exits on its own (crash), with its index; never for a clean stop(). */
  unexpectedExit: Promise<{ node: ClusterNode; code: number | null; signal: NodeJS.Signals | null }>;
  /** Stops every node (in parallel) and removes cluster.json. Safe to call twice. */
  stop(opts?: { graceMs?: number }): Promise<StopResult[]>;
}

/** Whether `cluster restart` took this node over: it marked it, or recorded another process for it. */
function restartedElsewhere(dir: string, node: ClusterNode): boolean {
  const now = recordedNode(dir, node.index);
  return now !== undefined && (now.restarting === true || now.pid !== node.pid);
}

type LocalRing = { topology: Topology; state: ClusterRing; ports: number[] };
type StartedNode = { node: ClusterNode; exited: Promise<void>; child: ReturnType<typeof spawn> };

/** Refuses to start over a cluster that still has a node of ours running from `dir`. */
function refuseIfRunning(dir: string): void {
  const existing = existsSync(dir) ? readClusterState(dir) : undefined;
  if (!existing) return;
  const live = existing.nodes.filter((n) => isOurNode(n.pid, n.dataDir));
  if (live.length > 0) {
    throw new ClusterError(
      'already_running',
      `a cluster already runs from ${dir} (${live.length} node${live.length > 1 ? 's' : ''}: ${live.map((n) => `${n.url} pid ${n.pid}`).join(', ')})`,
      `use it (--nodes ${join(dir, NODES_FILE)}), or stop it first: tsnode cluster down --dir ${dir}`,
    );
  }
}

/** With a fixed --base-port: every port of the range exists and is free. */
async function checkBasePorts(opts: StartOptions, host: string): Promise<void> {
  if (opts.basePort === 0) return;
  const ports = Array.from({ length: opts.count }, (_, i) => opts.basePort + i);
  if (ports[ports.length - 1]! > 65535) {
    throw new ClusterError('port_in_use', `ports ${ports[0]}..${ports[ports.length - 1]} run past 65535`, 'pick a lower --base-port');
  }
  await assertPortsFree(host, ports);
}

/** For a ring: the nodes' ports and identities, and `<dir>/topology.json` written for them to share. */
async function prepareRing(opts: StartOptions, dir: string, host: string): Promise<LocalRing | undefined> {
  if (!opts.ring) return undefined;
  const ports = opts.basePort === 0 ? await reservePorts(host, opts.count) : Array.from({ length: opts.count }, (_, i) => opts.basePort + i);
  const topology = localRing({ dir, host, ports, writeCopies: opts.ring.writeCopies, ...(opts.ring.weight !== undefined ? { weight: opts.ring.weight } : {}) });
  const file = join(dir, TOPOLOGY_FILE);
  writeAtomic(file, `${JSON.stringify(topologyToFile(topology), null, 2)}\n`);
  return { topology, ports, state: { file, hash: topologyHash(topology), writeCopies: topology.writeCopies } };
}

/** Node `i` (from 0) before it starts: its data dir made, its port, identity and serve arguments. */
function newNode(opts: StartOptions, dir: string, host: string, ring: LocalRing | undefined, i: number): ClusterNode {
  const index = i + 1;
  const dataDir = join(dir, `node-${index}`);
  const logFile = join(dir, `node-${index}.log`);
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (err) {
    throw new ClusterError('node_start_failed', `node ${index}: cannot create its data dir ${dataDir}: ${(err as Error).message}`);
  }
  const port = ring ? ring.ports[i]! : opts.basePort === 0 ? 0 : opts.basePort + i;
  const id = ring?.topology.nodes[i]!.id;
  const args = serveArgs(opts, host, port, dataDir, ring, id);
  args.push(...(opts.serveArgs ?? []), ...(opts.nodeArgs?.get(index) ?? []));
  return { index, url: '', port, pid: 0, dataDir, logFile, ...(id ? { id } : {}), args };
}

/**
 * Safety net for a foreground cluster: if this process exits without stop() (a second Ctrl-C,
 * process.exit), still ask every node to stop. 'exit' handlers run synchronously; a signal is enough.
 */
function signalStillRunning(started: readonly StartedNode[]): void {
  for (const { node, child } of started) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    try {
      process.kill(node.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}

/** The `tsnode serve` arguments of one node (before the extra serveArgs and nodeArgs). */
function serveArgs(opts: StartOptions, host: string, port: number, dataDir: string, ring: LocalRing | undefined, id: string | undefined): string[] {
  const args = ['serve', '--host', host, '--port', String(port), '--data-dir', dataDir];
  if (ring) args.push('--node-id', id!, '--topology', ring.state.file);
  if (opts.sweepPaceMs !== undefined) args.push('--sweep-pace', String(opts.sweepPaceMs));
  if (opts.lenientTimestamps) args.push('--lenient-timestamps');
  if (opts.noReplication) args.push('--no-replication');
  return args;
}

/** Stops one started node, or the process `cluster restart` started in its place. */
async function stopStarted(dir: string, { node, exited, child }: StartedNode, grace: { graceMs?: number }): Promise<StopResult> {
  // A node `cluster restart` started again runs as another process: stop that one too.
  const now = recordedNode(dir, node.index);
  if (now && now.pid !== node.pid && isOurNode(now.pid, now.dataDir)) {
    return { index: node.index, url: now.url, pid: now.pid, outcome: await stopProcess(now.pid, { ...grace, isRunning: () => isOurNode(now.pid, now.dataDir) }) };
  }
  return {
    index: node.index,
    url: node.url,
    pid: node.pid,
    outcome: await stopProcess(node.pid, { ...grace, exited, isRunning: () => child.exitCode === null && child.signalCode === null }),
  };
}

/** Writes `nodes.txt` and `cluster.json` for a started cluster; returns the nodes file. */
function writeClusterFiles(dir: string, state: ClusterState): string {
  const nodesFile = join(dir, NODES_FILE);
  writeAtomic(nodesFile, `# tsnode local cluster started ${state.startedAt}; stop it with: tsnode cluster down --dir ${dir}\n${state.nodes.map((n) => n.url).join('\n')}\n`);
  writeAtomic(join(dir, CLUSTER_FILE), `${JSON.stringify(state, null, 2)}\n`);
  return nodesFile;
}

/**
 * Starts `count` nodes, each `tsnode serve` in its own process with its own data dir under `dir`,
 * writes `dir/nodes.txt` and `dir/cluster.json`. If any node fails to start, the ones already
 * started are stopped before the error is thrown: never a half-started cluster.
 */
export async function startCluster(opts: StartOptions): Promise<RunningCluster> {
  const host = opts.host ?? '127.0.0.1';
  const dir = resolve(opts.dir);
  const detached = opts.detached ?? false;
  refuseIfRunning(dir);
  await checkBasePorts(opts, host);
  mkdirSync(dir, { recursive: true });
  const ring = await prepareRing(opts, dir, host);
  const started: StartedNode[] = [];
  let stopping = false;
  let reportExit: (e: { node: ClusterNode; code: number | null; signal: NodeJS.Signals | null }) => void = () => {};
  const unexpectedExit = new Promise<{ node: ClusterNode; code: number | null; signal: NodeJS.Signals | null }>((r) => (reportExit = r));

  const onExit = (): void => signalStillRunning(started);
  if (!detached) process.on('exit', onExit);

  const stopAll = async (graceMs?: number): Promise<StopResult[]> => {
    stopping = true;
    process.off('exit', onExit);
    const grace = graceMs !== undefined ? { graceMs } : {};
    const results = await Promise.all(started.map((entry) => stopStarted(dir, entry, grace)));
    rmSync(join(dir, CLUSTER_FILE), { force: true });
    return results;
  };

  try {
    for (let i = 0; i < opts.count; i++) {
      if (opts.signal?.aborted) throw new ClusterError('interrupted', 'interrupted while starting the cluster');
      const node = newNode(opts, dir, host, ring, i);
      const url = await launchNode(node, {
        detached,
        env: opts.env,
        ...(opts.startTimeoutMs !== undefined ? { startTimeoutMs: opts.startTimeoutMs } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
        onSpawn: (child, exited) => {
          started.push({ node, exited, child });
          child.once('exit', (code, signal) => {
            // `cluster restart` marks a node (or records its new pid) before it stops the old process.
            if (!stopping && !restartedElsewhere(dir, node)) reportExit({ node, code, signal });
          });
        },
      });
      node.url = url;
      node.port = Number(new URL(url).port);
      opts.onNodeReady?.(node);
    }
  } catch (err) {
    await stopAll(2000);
    throw err;
  }

  const state: ClusterState = {
    version: 1,
    dir,
    host,
    startedAt: new Date().toISOString(),
    managerPid: process.pid,
    detached,
    nodes: started.map((s) => s.node),
    ...(ring ? { ring: ring.state } : {}),
  };
  const nodesFile = writeClusterFiles(dir, state);
  let stopped: Promise<StopResult[]> | undefined;
  return {
    state,
    nodesFile,
    unexpectedExit,
    stop: (o = {}) => (stopped ??= stopAll(o.graceMs)),
  };
}

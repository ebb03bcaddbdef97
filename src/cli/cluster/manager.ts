/**
 * Starts and stops a local cluster of reference nodes as separate `tsnode serve` processes.
 *
 * UI-free: returns data and throws typed errors; `tsnode cluster`, `tsnode demo` and the tests
 * share it. It lives under cli/ rather than server/ because it manages *processes* through the
 * public command line (exactly what a user would run), not the server's internals: the server
 * stays a plain library, and this module never starts it in-process, so it cannot drift from
 * `tsnode serve`. (It reads a data dir's kept identity with the server's own reader, so a
 * restarted ring keeps its node ids.)
 */
import { spawn, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkTopology, topologyHash, topologyToFile, TopologyError, type Topology } from '../../ring/index.js';
import { readStoredNodeId } from '../../server/identity.js';

/** The CLI entry point; the same relative path from src/ (tests) and dist/ (built). */
export const TSNODE_BIN = fileURLToPath(new URL('../../../bin/tsnode.js', import.meta.url));

export const CLUSTER_FILE = 'cluster.json';
export const NODES_FILE = 'nodes.txt';
export const TOPOLOGY_FILE = 'topology.json';
/** Ring slots per node in a local ring: enough for an even spread over a handful of nodes. */
export const LOCAL_RING_WEIGHT = 64;

export interface ClusterNode {
  /** 1-based, as shown to users. */
  index: number;
  url: string;
  port: number;
  pid: number;
  dataDir: string;
  logFile: string;
  /** The node's identity in the ring (when the cluster is a ring). */
  id?: string;
}

/** The ring a cluster was started as: every node runs with `file`. */
export interface ClusterRing {
  file: string;
  hash: string;
  writeCopies: number;
}

export interface ClusterState {
  version: 1;
  dir: string;
  host: string;
  startedAt: string;
  /** The process that started the cluster; `detached` clusters outlive it. */
  managerPid: number;
  detached: boolean;
  nodes: ClusterNode[];
  ring?: ClusterRing;
}

export interface StartOptions {
  count: number;
  /** First port; node i gets basePort + i. 0 = a free port for every node. */
  basePort: number;
  dir: string;
  host?: string;
  sweepPaceMs?: number;
  /** Every node reads bare integer start_ts/end_ts as .000 (`tsnode serve --lenient-timestamps`). */
  lenientTimestamps?: boolean;
  /** Extra `tsnode serve` arguments for every node. */
  serveArgs?: string[];
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
  env?: NodeJS.ProcessEnv;
}

export interface StopResult {
  index: number;
  url: string;
  pid: number;
  /** `stopped` (SIGTERM was enough), `killed` (needed SIGKILL), `gone` (was not running: stale pid). */
  outcome: 'stopped' | 'killed' | 'gone';
}

export class ClusterError extends Error {
  readonly hint: string | undefined;
  readonly code: 'port_in_use' | 'node_start_failed' | 'already_running' | 'bad_cluster_file' | 'interrupted' | 'bad_ring';
  constructor(code: ClusterError['code'], message: string, hint?: string) {
    super(message);
    this.name = 'ClusterError';
    this.code = code;
    this.hint = hint;
  }
}

/** True if nothing listens on host:port (we could bind it). */
export function isPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once('error', () => resolveFree(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolveFree(true)));
  });
}

/** Checks every port before anything starts; throws naming the busy ones. */
export async function assertPortsFree(host: string, ports: readonly number[]): Promise<void> {
  const busy: number[] = [];
  for (const port of ports) if (!(await isPortFree(host, port))) busy.push(port);
  if (busy.length > 0) {
    const list = busy.join(', ');
    throw new ClusterError(
      'port_in_use',
      `port${busy.length > 1 ? 's' : ''} ${list} on ${host} ${busy.length > 1 ? 'are' : 'is'} already in use; no node was started`,
      `stop what listens there (e.g. \`lsof -i :${busy[0]}\`), or pick other ports with --base-port, or --base-port 0 for free ones`,
    );
  }
}

/**
 * Free ports for `count` nodes, all held at once while picked (so none is handed out twice) and
 * released together: a ring's topology must name each node's port before the node starts.
 */
export async function reservePorts(host: string, count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolveServer, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen({ host, port: 0, exclusive: true }, () => resolveServer(server));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  return ports;
}

/** The address other nodes and clients use for a node listening on `host` (a wildcard is reached on loopback). */
export function reachableAddress(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host.replace(/^\[(.*)\]$/, '$1');
}

/** The ring topology of a local cluster: one node per port, identities kept from earlier runs. */
export function localRing(opts: { dir: string; host: string; ports: readonly number[]; writeCopies: number; weight?: number }): Topology {
  const address = reachableAddress(opts.host);
  const nodes = opts.ports.map((port, i) => {
    const dataDir = join(opts.dir, `node-${i + 1}`);
    let id: string | undefined;
    try {
      id = readStoredNodeId(dataDir);
    } catch (err) {
      throw new ClusterError('node_start_failed', `node ${i + 1}: ${(err as Error).message}`);
    }
    return { id: id ?? randomUUID(), address, port, apiport: port, weight: opts.weight ?? LOCAL_RING_WEIGHT };
  });
  try {
    return checkTopology({ writeCopies: opts.writeCopies, nodes });
  } catch (err) {
    if (err instanceof TopologyError) throw new ClusterError('bad_ring', err.message);
    throw err;
  }
}

/** Whether `pid` is a live process that is one of our nodes (not a reused pid). */
export function isOurNode(pid: number, dataDir: string): boolean {
  // ESRCH: gone. EPERM: alive but not ours to signal, so not a node this user started.
  if (!alive(pid)) return false;
  const cmdline = commandLineOf(pid);
  // If the command line cannot be read, trust the pid only while it is alive (best effort).
  if (cmdline === undefined) return true;
  return cmdline.includes('serve') && cmdline.includes(dataDir);
}

function commandLineOf(pid: number): string | undefined {
  const proc = `/proc/${pid}/cmdline`;
  try {
    if (existsSync('/proc/self/cmdline')) return readFileSync(proc, 'utf8').split('\0').join(' ');
  } catch {
    return ''; // gone between the signal check and now (or a zombie): not a running node
  }
  try {
    return execFileSync('ps', ['-p', String(pid), '-o', 'command='], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Stops one process: SIGTERM, wait up to `graceMs`, then SIGKILL. `exited` (for our own children)
 * resolves on exit, which is more exact than polling a pid a zombie may still hold.
 */
export async function stopProcess(pid: number, opts: { graceMs?: number; exited?: Promise<void>; isRunning?: () => boolean } = {}): Promise<'stopped' | 'killed' | 'gone'> {
  const running = opts.isRunning ?? (() => alive(pid));
  if (!running()) return 'gone';
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return 'gone';
  }
  const graceMs = opts.graceMs ?? 5000;
  const waitGone = async (ms: number): Promise<boolean> => {
    const deadline = Date.now() + ms;
    let done = false;
    void opts.exited?.then(() => (done = true));
    while (Date.now() < deadline) {
      if (done || !running()) return true;
      await sleep(25);
    }
    return done || !running();
  };
  if (await waitGone(graceMs)) return 'stopped';
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return 'stopped';
  }
  await waitGone(5000);
  return 'killed';
}

export function readClusterState(dir: string): ClusterState | undefined {
  const file = join(dir, CLUSTER_FILE);
  if (!existsSync(file)) return undefined;
  let state: ClusterState;
  try {
    state = JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
  } catch (err) {
    throw new ClusterError('bad_cluster_file', `${file} is not valid JSON: ${(err as Error).message}`, `remove it if no cluster runs from ${dir}`);
  }
  if (state.version !== 1 || !Array.isArray(state.nodes) || state.nodes.some((n) => !Number.isInteger(n.pid) || typeof n.dataDir !== 'string')) {
    throw new ClusterError('bad_cluster_file', `${file} is not a tsnode cluster file`, `remove it if no cluster runs from ${dir}`);
  }
  return state;
}

function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

export interface RunningCluster {
  state: ClusterState;
  nodesFile: string;
  /** Resolves when any node exits on its own (crash), with its index; never for a clean stop(). */
  unexpectedExit: Promise<{ node: ClusterNode; code: number | null; signal: NodeJS.Signals | null }>;
  /** Stops every node (in parallel) and removes cluster.json. Safe to call twice. */
  stop(opts?: { graceMs?: number }): Promise<StopResult[]>;
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
  const existing = existsSync(dir) ? readClusterState(dir) : undefined;
  if (existing) {
    const live = existing.nodes.filter((n) => isOurNode(n.pid, n.dataDir));
    if (live.length > 0) {
      throw new ClusterError(
        'already_running',
        `a cluster already runs from ${dir} (${live.length} node${live.length > 1 ? 's' : ''}: ${live.map((n) => `${n.url} pid ${n.pid}`).join(', ')})`,
        `use it (--nodes ${join(dir, NODES_FILE)}), or stop it first: tsnode cluster down --dir ${dir}`,
      );
    }
  }
  if (opts.basePort !== 0) {
    const ports = Array.from({ length: opts.count }, (_, i) => opts.basePort + i);
    if (ports[ports.length - 1]! > 65535) {
      throw new ClusterError('port_in_use', `ports ${ports[0]}..${ports[ports.length - 1]} run past 65535`, 'pick a lower --base-port');
    }
    await assertPortsFree(host, ports);
  }
  mkdirSync(dir, { recursive: true });
  let ring: { topology: Topology; state: ClusterRing; ports: number[] } | undefined;
  if (opts.ring) {
    const ports = opts.basePort === 0 ? await reservePorts(host, opts.count) : Array.from({ length: opts.count }, (_, i) => opts.basePort + i);
    const topology = localRing({ dir, host, ports, writeCopies: opts.ring.writeCopies, ...(opts.ring.weight !== undefined ? { weight: opts.ring.weight } : {}) });
    const file = join(dir, TOPOLOGY_FILE);
    writeAtomic(file, `${JSON.stringify(topologyToFile(topology), null, 2)}\n`);
    ring = { topology, ports, state: { file, hash: topologyHash(topology), writeCopies: topology.writeCopies } };
  }
  const started: Array<{ node: ClusterNode; exited: Promise<void>; child: ReturnType<typeof spawn> }> = [];
  let stopping = false;
  let reportExit: (e: { node: ClusterNode; code: number | null; signal: NodeJS.Signals | null }) => void = () => {};
  const unexpectedExit = new Promise<{ node: ClusterNode; code: number | null; signal: NodeJS.Signals | null }>((r) => (reportExit = r));

  // Safety net for a foreground cluster: if this process exits without stop() (a second Ctrl-C,
  // process.exit), still ask every node to stop. 'exit' handlers run synchronously; a signal is enough.
  const onExit = (): void => {
    for (const { node, child } of started) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      try {
        process.kill(node.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
  };
  if (!detached) process.on('exit', onExit);

  const stopAll = async (graceMs?: number): Promise<StopResult[]> => {
    stopping = true;
    process.off('exit', onExit);
    const results = await Promise.all(
      started.map(async ({ node, exited, child }) => ({
        index: node.index,
        url: node.url,
        pid: node.pid,
        outcome: await stopProcess(node.pid, {
          ...(graceMs !== undefined ? { graceMs } : {}),
          exited,
          isRunning: () => child.exitCode === null && child.signalCode === null,
        }),
      })),
    );
    rmSync(join(dir, CLUSTER_FILE), { force: true });
    return results;
  };

  try {
    for (let i = 0; i < opts.count; i++) {
      if (opts.signal?.aborted) throw new ClusterError('interrupted', 'interrupted while starting the cluster');
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
      const args = [TSNODE_BIN, 'serve', '--host', host, '--port', String(port), '--data-dir', dataDir];
      if (ring) args.push('--node-id', id!, '--topology', ring.state.file);
      if (opts.sweepPaceMs !== undefined) args.push('--sweep-pace', String(opts.sweepPaceMs));
      if (opts.lenientTimestamps) args.push('--lenient-timestamps');
      args.push(...(opts.serveArgs ?? []));
      const logFd = openSync(logFile, 'w');
      const child = spawn(process.execPath, args, {
        stdio: ['ignore', logFd, logFd],
        // Always its own process group: a Ctrl-C in the terminal reaches only the manager, which
        // then stops every node in order and can say what it stopped (instead of nodes dying
        // under it and looking like crashes). If the manager itself is killed, cluster.json still
        // lets `tsnode cluster down` find them.
        detached: true,
        env: { ...(opts.env ?? process.env), FORCE_COLOR: '0' },
      });
      closeSync(logFd);
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      if (detached) child.unref();
      const pid = child.pid;
      if (pid === undefined) {
        await new Promise((r) => child.once('error', r));
        throw new ClusterError('node_start_failed', `node ${index} could not be started (${process.execPath} ${args.join(' ')})`);
      }
      const node: ClusterNode = { index, url: '', port, pid, dataDir, logFile, ...(id ? { id } : {}) };
      started.push({ node, exited, child });
      child.once('exit', (code, signal) => {
        if (!stopping) reportExit({ node, code, signal });
      });
      const url = await waitForReady(child, logFile, { timeoutMs: opts.startTimeoutMs ?? 15_000, ...(opts.signal ? { signal: opts.signal } : {}) }).catch((err: unknown) => {
        const tail = readTail(logFile);
        if (err instanceof ClusterError) throw err;
        throw new ClusterError(
          'node_start_failed',
          `node ${index} (port ${port === 0 ? 'any' : port}) did not start: ${(err as Error).message}${tail ? `\n  its log (${logFile}):\n${indent(tail)}` : ''}`,
          port !== 0 && /EADDRINUSE|in use/i.test(tail) ? `port ${port} was taken after the check; try again or pick another --base-port` : undefined,
        );
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
  const nodesFile = join(dir, NODES_FILE);
  writeAtomic(nodesFile, `# tsnode local cluster started ${state.startedAt}; stop it with: tsnode cluster down --dir ${dir}\n${state.nodes.map((n) => n.url).join('\n')}\n`);
  writeAtomic(join(dir, CLUSTER_FILE), `${JSON.stringify(state, null, 2)}\n`);
  let stopped: Promise<StopResult[]> | undefined;
  return {
    state,
    nodesFile,
    unexpectedExit,
    stop: (o = {}) => (stopped ??= stopAll(o.graceMs)),
  };
}

/** Polls the node's log for its ready line, failing fast if the process exits first. */
async function waitForReady(child: ReturnType<typeof spawn>, logFile: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<string> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    let text = '';
    try {
      text = readFileSync(logFile, 'utf8');
    } catch {
      // not created yet
    }
    const m = /listening on (https?:\/\/\S+)/.exec(text);
    if (m) return m[1]!;
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`it exited (${child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode}) before it was ready`);
    }
    if (opts.signal?.aborted) throw new ClusterError('interrupted', 'interrupted while starting the cluster');
    if (Date.now() > deadline) throw new Error(`no ready line within ${opts.timeoutMs} ms`);
    await sleep(20);
  }
}

function readTail(file: string, lines = 8): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

const indent = (s: string): string =>
  s
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');

export interface DownResult {
  dir: string;
  /** No cluster.json: nothing to do (idempotent). */
  found: boolean;
  nodes: StopResult[];
}

/** Stops the cluster recorded in `dir/cluster.json` (detached or not); idempotent; stale pids are reported as `gone`. */
export async function stopClusterDir(dirArg: string, opts: { graceMs?: number } = {}): Promise<DownResult> {
  const dir = resolve(dirArg);
  const state = readClusterState(dir);
  if (!state) return { dir, found: false, nodes: [] };
  // Removed first, so a foreground `cluster up` watching these nodes knows their exit was asked for.
  rmSync(join(dir, CLUSTER_FILE), { force: true });
  const nodes = await Promise.all(
    state.nodes.map(async (n): Promise<StopResult> => {
      const ours = (): boolean => isOurNode(n.pid, n.dataDir);
      const outcome = ours() ? await stopProcess(n.pid, { ...(opts.graceMs !== undefined ? { graceMs: opts.graceMs } : {}), isRunning: ours }) : 'gone';
      return { index: n.index, url: n.url, pid: n.pid, outcome };
    }),
  );
  rmSync(join(dir, CLUSTER_FILE), { force: true });
  return { dir, found: true, nodes };
}

/**
 * A local cluster's files under its directory: `cluster.json` (the nodes' pids, ports and data
 * dirs, what `tsnode cluster down` reads), `nodes.txt` (the node list for other commands) and
 * `topology.json` (a ring's topology), and the error every part of the manager throws.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { EXIT, type ExitCode } from '../exit-codes.js';

export const CLUSTER_FILE = 'cluster.json';
export const NODES_FILE = 'nodes.txt';
export const TOPOLOGY_FILE = 'topology.json';

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
  /** Its `tsnode serve ...` arguments (after the bin), so `cluster restart` starts it exactly as before. */
  args?: string[];
  /** Set while `cluster restart` stops and starts it: its exit is asked for, not a crash. */
  restarting?: boolean;
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

export interface StopResult {
  index: number;
  url: string;
  pid: number;
  /** `stopped` (SIGTERM was enough), `killed` (needed SIGKILL), `gone` (was not running: stale pid). */
  outcome: 'stopped' | 'killed' | 'gone';
}

type ClusterErrorCode = 'port_in_use' | 'node_start_failed' | 'already_running' | 'bad_cluster_file' | 'interrupted' | 'bad_ring';

/** What a cluster refusal or failure means for the exit: the cluster's own setup is a usage error (2). */
const CLUSTER_EXIT: Readonly<Record<ClusterErrorCode, ExitCode>> = {
  port_in_use: EXIT.usage,
  already_running: EXIT.usage,
  bad_cluster_file: EXIT.usage,
  bad_ring: EXIT.usage,
  interrupted: EXIT.interrupted,
  node_start_failed: EXIT.failed,
};

/** The local cluster's refusals and failures (cluster up/down, the demo), with their exit codes. */
export class ClusterError extends UsageError {
  declare readonly code: ClusterErrorCode;
  constructor(code: ClusterErrorCode, message: string, hint?: string) {
    super(message, hint, CLUSTER_EXIT[code], code);
    this.name = 'ClusterError';
  }
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
  if (
    state.version !== 1 ||
    !Array.isArray(state.nodes) ||
    state.nodes.some(
      (n) => !Number.isInteger(n.pid) || typeof n.dataDir !== 'string' || (n.args !== undefined && (!Array.isArray(n.args) || n.args.some((a) => typeof a !== 'string'))),
    )
  ) {
    throw new ClusterError('bad_cluster_file', `${file} is not a tsnode cluster file`, `remove it if no cluster runs from ${dir}`);
  }
  return state;
}

/** The recorded node `index`, or undefined (no cluster.json, or one that cannot be read). */
export function recordedNode(dir: string, index: number): ClusterNode | undefined {
  try {
    return readClusterState(dir)?.nodes.find((n) => n.index === index);
  } catch {
    return undefined;
  }
}

export function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

/** `tsnode cluster down`: stops the nodes a cluster directory records, whoever started them. */
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isOurNode, stopProcess } from './processes.js';
import type { TargetLock } from '../../run/lock.js';
import { lockCluster } from './restart.js';
import { CLUSTER_FILE, ClusterError, readClusterState, type StopResult } from './state.js';

export interface DownResult {
  dir: string;
  /** No cluster.json: nothing to do (idempotent). */
  found: boolean;
  nodes: StopResult[];
}

/** Stops the cluster recorded in `dir/cluster.json` (detached or not); idempotent; stale pids are reported as `gone`. */
export async function stopClusterDir(dirArg: string, opts: { graceMs?: number; by?: string } = {}): Promise<DownResult> {
  const dir = resolve(dirArg);
  if (!readClusterState(dir)) return { dir, found: false, nodes: [] };
  // After a `cluster restart` in progress: it records the pid it starts, which must be stopped too.
  const lock = await waitForClusterLock(dir, opts.by ?? 'unknown');
  try {
    return await stopRecorded(dir, opts);
  } finally {
    lock.release();
  }
}

/** The cluster's lock, waited for (a restart of one node takes seconds); ClusterError after a minute. */
async function waitForClusterLock(dir: string, by: string): Promise<TargetLock> {
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      return lockCluster(dir, 'cluster down', by);
    } catch (err) {
      // Kept: a held lock is waited for (tried again), not translated.
      if (!(err instanceof ClusterError) || Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function stopRecorded(dir: string, opts: { graceMs?: number }): Promise<DownResult> {
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

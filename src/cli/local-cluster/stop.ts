/** `tsnode cluster down`: stops the nodes a cluster directory records, whoever started them. */
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isOurNode, stopProcess } from './processes.js';
import { CLUSTER_FILE, readClusterState, type StopResult } from './state.js';

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

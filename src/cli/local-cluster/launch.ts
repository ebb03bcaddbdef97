/**
 * One node process of a local cluster: `node bin/tsnode.js <its recorded serve arguments>`, its
 * output to its log file, waited for until it prints its ready line. `cluster up` starts every node
 * this way, and `cluster restart` (or `cluster up` on a cluster with stopped nodes) starts a node
 * again with exactly the arguments cluster.json recorded: same port, data dir and identity.
 */
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../package-root.js';
import { indent, readTail, waitForReady } from './processes.js';
import { ClusterError, type ClusterNode } from './state.js';

/** The CLI entry point, from src/ (tests), dist/ (built) and the CLI bundle alike. */
export const TSNODE_BIN = join(PACKAGE_ROOT, 'bin', 'tsnode.js');

export interface LaunchOptions {
  /** Leave the node running when this process exits (not waited for). */
  detached: boolean;
  /** The node's environment: the command's ctx.env (nothing below main.ts reads process.env). */
  env: NodeJS.ProcessEnv;
  startTimeoutMs?: number;
  signal?: AbortSignal;
  /** Keep the log's earlier lines (a restart: the crash that came before stays readable). */
  appendLog?: boolean;
  /** Told once the process exists, before it is ready (so a caller can stop it if it never gets there). */
  onSpawn?: (child: ReturnType<typeof spawn>, exited: Promise<void>) => void;
}

/**
 * Starts `node` with its recorded `args`; sets its pid, URL and port; resolves with the URL once
 * the node is ready. Throws ClusterError `node_start_failed` (with its log's tail) otherwise.
 */
export async function launchNode(node: ClusterNode, opts: LaunchOptions): Promise<string> {
  const args = node.args ?? [];
  const logFd = openSync(node.logFile, opts.appendLog ? 'a' : 'w');
  if (opts.appendLog) writeSync(logFd, `--- restarted by tsnode cluster at ${new Date().toISOString()} ---\n`);
  const fromByte = fstatSync(logFd).size;
  const child = spawn(process.execPath, [TSNODE_BIN, ...args], {
    stdio: ['ignore', logFd, logFd],
    // Always its own process group: a Ctrl-C in the terminal reaches only the manager, which
    // then stops every node in order and can say what it stopped (instead of nodes dying
    // under it and looking like crashes). If the manager itself is killed, cluster.json still
    // lets `tsnode cluster down` find them.
    detached: true,
    env: { ...opts.env, FORCE_COLOR: '0' },
  });
  closeSync(logFd);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  if (opts.detached) child.unref();
  if (child.pid === undefined) {
    await new Promise((r) => child.once('error', r));
    throw new ClusterError('node_start_failed', `node ${node.index} could not be started (${process.execPath} ${TSNODE_BIN} ${args.join(' ')})`);
  }
  node.pid = child.pid;
  opts.onSpawn?.(child, exited);
  const port = node.port;
  const url = await waitForReady(child, node.logFile, { timeoutMs: opts.startTimeoutMs ?? 15_000, fromByte, ...(opts.signal ? { signal: opts.signal } : {}) }).catch(
    (err: unknown) => {
      const tail = readTail(node.logFile);
      // Kept: any other failure to start is quoted with the node's log tail, which only this place reads.
      if (err instanceof ClusterError) throw err;
      throw new ClusterError(
        'node_start_failed',
        `node ${node.index} (port ${port === 0 ? 'any' : port}) did not start: ${(err as Error).message}${tail ? `\n  its log (${node.logFile}):\n${indent(tail)}` : ''}`,
        port !== 0 && /EADDRINUSE|in use/i.test(tail) ? `port ${port} was taken after the check; try again or pick another --base-port` : undefined,
      );
    },
  );
  node.url = url;
  node.port = Number(new URL(url).port);
  return url;
}

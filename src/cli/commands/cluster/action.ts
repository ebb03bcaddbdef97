import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CLUSTER_FILE, ClusterError, startCluster, stopClusterDir, type StopResult } from '../../cluster/manager.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { painter } from '../../runtime.js';
import { parseDuration } from '../../time.js';
import type { ClusterDownFlags, ClusterUpFlags } from './command.js';

export function parseIntFlag(text: string, field: string, min: number, max: number): number {
  const t = text.trim();
  if (!/^\d+$/.test(t) || Number(t) < min || Number(t) > max) {
    throw new UsageError(`${field}: ${JSON.stringify(text)} is not a whole number from ${min} to ${max}`);
  }
  return Number(t);
}

/** Turns the manager's typed errors into the CLI's: a message, a hint, and an exit code. */
export function clusterErrorToUsage(err: unknown): unknown {
  if (!(err instanceof ClusterError)) return err;
  const code = err.code === 'port_in_use' || err.code === 'already_running' || err.code === 'bad_cluster_file' || err.code === 'bad_ring' ? EXIT.usage : err.code === 'interrupted' ? EXIT.interrupted : EXIT.failed;
  return new UsageError(err.message, err.hint, code);
}

/** `--write-copies`: 1 to the node count; by default 2 (1 for a single node). */
export function parseWriteCopies(text: string | undefined, count: number): number {
  if (text === undefined) return Math.min(2, count);
  const n = parseIntFlag(text, '--write-copies', 1, 255);
  if (n > count) {
    throw new UsageError(`--write-copies: ${n} copies need at least ${n} nodes, and --nodes is ${count}`, 'each copy of a metric lives on a different node: raise --nodes or lower --write-copies');
  }
  return n;
}

export function describeStop(r: StopResult): string {
  const what = r.outcome === 'stopped' ? 'stopped' : r.outcome === 'killed' ? 'killed (did not stop after SIGTERM)' : 'was not running';
  return `node ${r.index} ${r.url} (pid ${r.pid}) ${what}`;
}

export async function clusterUpAction(flags: ClusterUpFlags, ctx: CliContext): Promise<ExitCode> {
  const count = parseIntFlag(flags.nodes, '--nodes', 1, 64);
  const basePort = parseIntFlag(flags.basePort, '--base-port', 0, 65535);
  const sweepPaceMs = flags.sweepPace === undefined ? undefined : parseIntFlag(flags.sweepPace, '--sweep-pace', 0, 60_000);
  const writeCopies = parseWriteCopies(flags.writeCopies, count);
  const paint = painter(ctx.colourErr);
  // SIGTERM (e.g. from a process supervisor) must stop the nodes too, like Ctrl-C.
  const stop = new AbortController();
  const onTerm = (): void => stop.abort(new Error('terminated'));
  const onAbort = (): void => stop.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  if (!flags.detach) process.once('SIGTERM', onTerm);
  try {
    ctx.log.info(`starting ${count} node${count > 1 ? 's' : ''} in ${flags.dir}${basePort ? ` on ports ${basePort}-${basePort + count - 1}` : ' on free ports'}...`);
    let cluster;
    try {
      cluster = await startCluster({
        count,
        basePort,
        dir: flags.dir,
        host: flags.host,
        detached: flags.detach,
        signal: stop.signal,
        ring: { writeCopies },
        ...(sweepPaceMs !== undefined ? { sweepPaceMs } : {}),
        ...(flags.lenientTimestamps ? { lenientTimestamps: true } : {}),
        onNodeReady: (n) => ctx.log.info(`  node ${n.index} ready: ${n.url}  (pid ${n.pid}, data ${n.dataDir})`),
      });
    } catch (err) {
      throw clusterErrorToUsage(err);
    }
    for (const n of cluster.state.nodes) ctx.stdout.write(`${n.url}\n`);
    const nodesFile = cluster.nodesFile;
    const seed = cluster.state.nodes[0]!.url;
    if (cluster.state.ring) {
      const r = cluster.state.ring;
      ctx.log.info(`ring of ${count} node${count > 1 ? 's' : ''}, write_copies ${r.writeCopies}, topology ${r.hash} (${r.file})`);
      ctx.log.info(`seed: ${seed}   (discover the ring: tsnode nodes --seed ${seed})`);
    }
    if (flags.detach) {
      ctx.log.info(paint.green(`cluster running in the background; node list in ${nodesFile}`));
      ctx.log.info(`  try:   tsnode status --nodes ${nodesFile}`);
      ctx.log.info(`  stop:  tsnode cluster down --dir ${cluster.state.dir}`);
      return EXIT.ok;
    }
    ctx.log.info(paint.green(`cluster up; node list in ${nodesFile}. Press Ctrl-C to stop every node.`));
    ctx.log.info(`  try:   tsnode status --nodes ${nodesFile}`);
    const crash = await Promise.race([
      cluster.unexpectedExit,
      new Promise<undefined>((r) => (stop.signal.aborted ? r(undefined) : stop.signal.addEventListener('abort', () => r(undefined), { once: true }))),
    ]);
    // `tsnode cluster down` from another terminal removes cluster.json before it stops the nodes.
    const downElsewhere = crash !== undefined && !existsSync(join(cluster.state.dir, CLUSTER_FILE));
    if (downElsewhere) {
      ctx.log.info('the cluster was stopped with `tsnode cluster down`; stopping what is left...');
    } else if (crash) {
      ctx.log.error(`node ${crash.node.index} ${crash.node.url} exited on its own (${crash.code !== null ? `code ${crash.code}` : crash.signal}); stopping the others. Its log: ${crash.node.logFile}`);
    } else {
      ctx.log.info('stopping every node... (a second Ctrl-C exits at once; the nodes are still sent SIGTERM)');
    }
    const results = await cluster.stop();
    for (const r of results) if (!(downElsewhere && r.outcome === 'gone')) ctx.log.info(`  ${describeStop(r)}`);
    ctx.log.info(`cluster stopped; data kept in ${cluster.state.dir} (${join(cluster.state.dir, 'node-*')})`);
    return crash && !downElsewhere ? EXIT.failed : EXIT.ok;
  } finally {
    process.off('SIGTERM', onTerm);
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

export async function clusterDownAction(flags: ClusterDownFlags, ctx: CliContext): Promise<ExitCode> {
  const graceMs = parseDuration(flags.grace, '--grace');
  let result;
  try {
    result = await stopClusterDir(flags.dir, { graceMs });
  } catch (err) {
    throw clusterErrorToUsage(err);
  }
  if (!result.found) {
    ctx.log.info(`no cluster recorded in ${result.dir} (no cluster.json): nothing to stop`);
    return EXIT.ok;
  }
  for (const r of result.nodes) ctx.log.info(describeStop(r));
  const stopped = result.nodes.filter((r) => r.outcome !== 'gone').length;
  ctx.log.info(`stopped ${stopped} of ${result.nodes.length} node${result.nodes.length === 1 ? '' : 's'} from ${result.dir}; data kept`);
  return EXIT.ok;
}

import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startCluster, type RunningCluster } from '../../local-cluster/start.js';
import { CLUSTER_FILE } from '../../local-cluster/state.js';
import { parseNodeFlags, shardServeArgs } from '../../local-cluster/shard-args.js';
import { stopClusterDir } from '../../local-cluster/stop.js';
import { homeOf, loadConfig } from '../../config/load.js';
import { configPath } from '../../config/paths.js';
import { checkProfileName, setProfileText, withConfigLock, writeConfigFile } from '../../config/write.js';
import type { CliContext } from '../../context.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { whoAmI } from '../../journal.js';
import { painter } from '../../render/painter.js';
import { DEFAULT_NODE_COUNT, type ClusterDownFlags, type ClusterUpFlags } from './options.js';
import { nodeCount, writeCopiesFor } from '../../local-cluster/node-count.js';
import { describeStop } from '../../local-cluster/stop-text.js';
import { printCluster, printStopped } from './render.js';

/**
 * `cluster up --profile <name>`: the config file is read and the name checked before any node
 * starts (a bad config is exit 2 with nothing started); the profile is written once the nodes run.
 */
function prepareProfile(ctx: CliContext): { name: string; write(nodesFile: string): void } | undefined {
  const name = ctx.profile;
  if (name === undefined) return undefined;
  checkProfileName(name);
  loadConfig({ env: ctx.env, cwd: ctx.cwd });
  return {
    name,
    write: (nodesFile) => {
      // Read again, under the config's lock: another command may have changed the file while the nodes started.
      const { config, before } = withConfigLock(configPath({ env: ctx.env, home: homeOf(ctx.env), cwd: ctx.cwd }), () => {
        const { config } = loadConfig({ env: ctx.env, cwd: ctx.cwd });
        const before = config.profiles.get(name);
        writeConfigFile(config.path, setProfileText(config, name, { nodesFile }));
        return { config, before };
      });
      ctx.log.info(`${before ? 'updated' : 'created'} profile ${name} in ${config.shown}: nodes_file ${nodesFile}`);
      const kept = before ? (['header_prefix', 'cacert', 'cert', 'key', 'headers'] as const).filter((k) => before.lines[k] !== undefined) : [];
      if (kept.length)
        ctx.log.warn(`profile ${name} keeps its ${kept.join(', ')}: they now apply to this local cluster too (tsnode profile set ${name} --unset <key> removes one)`);
    },
  };
}

/** `--rollups` and `--histogram-rollups`, handed to every node's `tsnode serve` as given. */
export function spanServeArgs(flags: Pick<ClusterUpFlags, 'rollups' | 'histogramRollups'>): string[] {
  return [...(flags.rollups ? ['--rollups', flags.rollups.join(',')] : []), ...(flags.histogramRollups ? ['--histogram-rollups', flags.histogramRollups.join(',')] : [])];
}

/** `--tls-cert`/`--tls-key` (as absolute paths) and `--require-header`, handed to every node; each node checks them. */
export function accessServeArgs(flags: Pick<ClusterUpFlags, 'tlsCert' | 'tlsKey' | 'requireHeader'>, cwd: string): string[] {
  return [
    ...(flags.tlsCert !== undefined ? ['--tls-cert', resolve(cwd, flags.tlsCert)] : []),
    ...(flags.tlsKey !== undefined ? ['--tls-key', resolve(cwd, flags.tlsKey)] : []),
    ...flags.requireHeader.flatMap((h) => ['--require-header', h]),
  ];
}

/** The shard and retention flags for every node, and the per-node ones (--node-flags). */
function shardArgsOf(flags: ClusterUpFlags, count: number): { serveArgs: string[]; nodeArgs: Map<number, string[]> } {
  const { shards, histogramShards, rawShard, retention, retentionInterval } = flags;
  return {
    serveArgs: shardServeArgs({ shards, histogramShards, rawShard, retention, retentionInterval, noSweepApi: !flags.sweepApi }),
    nodeArgs: parseNodeFlags(flags.nodeFlags, count),
  };
}

/** A cluster in the foreground: until Ctrl-C (or SIGTERM), `cluster down` elsewhere or a node exiting on its own; then every node stopped. */
async function foreground(cluster: RunningCluster, stop: AbortSignal, ctx: CliContext): Promise<ExitCode> {
  const crash = await Promise.race([
    cluster.unexpectedExit,
    new Promise<undefined>((r) => (stop.aborted ? r(undefined) : stop.addEventListener('abort', () => r(undefined), { once: true }))),
  ]);
  // `tsnode cluster down` from another terminal removes cluster.json before it stops the nodes.
  const downElsewhere = crash !== undefined && !existsSync(join(cluster.state.dir, CLUSTER_FILE));
  if (downElsewhere) {
    ctx.log.info('the cluster was stopped with `tsnode cluster down`; stopping what is left...');
  } else if (crash) {
    ctx.log.error(
      `node ${crash.node.index} ${crash.node.url} exited on its own (${crash.code !== null ? `code ${crash.code}` : crash.signal}); stopping the others. Its log: ${crash.node.logFile}`,
    );
  } else {
    ctx.log.info('stopping every node... (a second Ctrl-C exits at once; the nodes are still sent SIGTERM)');
  }
  const results = await cluster.stop();
  for (const r of results) if (!(downElsewhere && r.outcome === 'gone')) ctx.log.info(`  ${describeStop(r)}`);
  ctx.log.info(`cluster stopped; data kept in ${cluster.state.dir} (${join(cluster.state.dir, 'node-*')})`);
  return crash && !downElsewhere ? EXIT.failed : EXIT.ok;
}

export async function clusterUpAction(flags: ClusterUpFlags, ctx: CliContext): Promise<ExitCode> {
  // A recorded cluster that does not run whole: its stopped nodes come back as recorded.
  const restarted = await import('./restart.js').then((m) => m.upRecordedCluster(flags, ctx));
  if (restarted !== undefined) return restarted;
  const count = nodeCount(flags, ctx, 'cluster up', DEFAULT_NODE_COUNT);
  // Checked before anything starts: a bad --node-flags is a usage error, not a node that fails.
  const shardArgs = shardArgsOf(flags, count);
  const basePort = flags.basePort;
  const writeCopies = writeCopiesFor(flags.writeCopies, count);
  const profile = prepareProfile(ctx);
  const paint = painter(ctx.colourErr);
  // SIGTERM (e.g. from a process supervisor) stops the nodes too, like Ctrl-C: both abort ctx.signal
  // (main.ts). With --detach the nodes outlive this process, so only a start in progress stops.
  const stop = new AbortController();
  const onAbort = (): void => stop.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    ctx.log.info(`starting ${count} node${count > 1 ? 's' : ''} in ${flags.dir}${basePort ? ` on ports ${basePort}-${basePort + count - 1}` : ' on free ports'}...`);
    // A ClusterError carries its exit code (2 for the cluster's own setup): reportError says it.
    const cluster = await startCluster({
      count,
      basePort,
      dir: flags.dir,
      host: flags.host,
      detached: flags.detach,
      signal: stop.signal,
      env: ctx.env,
      ring: { writeCopies },
      ...(flags.sweepPace !== undefined ? { sweepPaceMs: flags.sweepPace } : {}),
      ...(flags.lenientTimestamps ? { lenientTimestamps: true } : {}),
      ...(!flags.replication ? { noReplication: true } : {}),
      ...shardArgs,
      serveArgs: [...shardArgs.serveArgs, ...spanServeArgs(flags), ...accessServeArgs(flags, ctx.cwd)],
      onNodeReady: (n) => ctx.log.info(`  node ${n.index} ready: ${n.url}  (pid ${n.pid}, data ${n.dataDir})`),
    });
    const nodesFile = cluster.nodesFile;
    if (profile) {
      try {
        profile.write(nodesFile);
      } catch (err) {
        // Asked for a registered cluster and could not register it: no cluster either, rather than one nobody can name.
        await cluster.stop({ graceMs: 3000 });
        ctx.log.info(`stopped the ${count} node${count > 1 ? 's' : ''} again: the cluster could not be registered as profile ${profile.name}`);
        throw err;
      }
    }
    printCluster(ctx, flags.output, cluster, profile?.name);
    const seed = cluster.state.nodes[0]!.url;
    if (cluster.state.ring) {
      const r = cluster.state.ring;
      ctx.log.info(`ring of ${count} node${count > 1 ? 's' : ''}, write_copies ${r.writeCopies}, topology ${r.hash} (${r.file})`);
      ctx.log.info(`seed: ${seed}   (discover the ring: tsnode nodes --seed ${seed})`);
    }
    const tryIt = profile ? `tsnode status --profile ${profile.name}` : `tsnode status --nodes ${nodesFile}`;
    if (flags.detach) {
      ctx.log.info(paint.green(`cluster running in the background; node list in ${nodesFile}`));
      ctx.log.info(`  try:   ${tryIt}`);
      ctx.log.info(`  stop:  tsnode cluster down --dir ${cluster.state.dir}`);
      return EXIT.ok;
    }
    ctx.log.info(paint.green(`cluster up; node list in ${nodesFile}. Press Ctrl-C to stop every node.`));
    ctx.log.info(`  try:   ${tryIt}`);
    return await foreground(cluster, stop.signal, ctx);
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

export async function clusterDownAction(flags: ClusterDownFlags, ctx: CliContext): Promise<ExitCode> {
  const result = await stopClusterDir(flags.dir, { graceMs: flags.grace, by: whoAmI(ctx.env) });
  printStopped(ctx, flags.output, result);
  if (!result.found) {
    ctx.log.info(`no cluster recorded in ${result.dir} (no cluster.json): nothing to stop`);
    return EXIT.ok;
  }
  const stopped = result.nodes.filter((r) => r.outcome !== 'gone').length;
  ctx.log.info(`stopped ${stopped} of ${result.nodes.length} node${result.nodes.length === 1 ? '' : 's'} from ${result.dir}; data kept`);
  return EXIT.ok;
}

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { isLoopback, parseRequiredHeader, parseServeFlags, type ServerConfig } from '../../../server/config.js';
import type { NodeIdentity } from '../../../server/identity.js';
import { startServer, type RunningNode } from '../../../server/server.js';
import { loadTopologyFile } from '../../../server/topology-file.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import type { ServeOptions } from './options.js';

/** One stderr line about the node's ring, and a warning when the topology sends clients elsewhere. */
function describeRing(node: RunningNode, ctx: CliContext): void {
  const identity: NodeIdentity = node.identity;
  if (!identity.ring) return;
  const t = identity.ring.topology;
  const me = t.nodes.find((n) => n.id.toLowerCase() === identity.id)!;
  ctx.log.info(`ring: topology ${identity.current} (${t.nodes.length} node${t.nodes.length === 1 ? '' : 's'}, write_copies ${t.writeCopies}); this node has weight ${me.weight}`);
  const wildcard = node.host === '0.0.0.0' || node.host === '::';
  if (me.apiport !== node.port || (!wildcard && me.address.toLowerCase() !== node.host.toLowerCase() && !(isLoopback(me.address) && isLoopback(node.host)))) {
    ctx.log.warn(`the topology puts this node's API at ${me.address}:${me.apiport}, but it listens on ${node.url}: clients that discover the ring will look for it there`);
  }
}

/** `--tls-cert`/`--tls-key` (both or neither, read here) and `--require-header`. */
function accessSettings(opts: ServeOptions, ctx: CliContext): Pick<ServerConfig, 'tls' | 'requireHeaders'> {
  if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined)) {
    throw new UsageError(`${opts.tlsCert === undefined ? '--tls-key' : '--tls-cert'} given alone`, 'HTTPS needs both: --tls-cert <cert.pem> --tls-key <key.pem>');
  }
  const read = (flagName: string, file: string): Buffer => {
    try {
      return readFileSync(resolve(ctx.cwd, file));
    } catch (err) {
      throw new UsageError(`${flagName}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 'give a PEM file this user can read');
    }
  };
  const out: Pick<ServerConfig, 'tls' | 'requireHeaders'> = {};
  if (opts.tlsCert !== undefined && opts.tlsKey !== undefined) out.tls = { cert: read('--tls-cert', opts.tlsCert), key: read('--tls-key', opts.tlsKey) };
  if (opts.requireHeader.length) out.requireHeaders = opts.requireHeader.map(parseRequiredHeader);
  return out;
}

export async function serveAction(opts: ServeOptions, ctx: CliContext): Promise<ExitCode> {
  // The node's own rules (a data dir or memory, spans that are multiples of the smallest, a node id)
  // stay with the server; the values the flag table parsed (port, sizes, durations) go straight in.
  const config = parseServeFlags(
    {
      host: opts.host,
      ...(opts.dataDir !== undefined ? { dataDir: opts.dataDir } : {}),
      memory: opts.memory,
      ...(opts.rollups !== undefined ? { rollups: opts.rollups.join(',') } : {}),
      ...(opts.histogramRollups !== undefined ? { histogramRollups: opts.histogramRollups.join(',') } : {}),
      ...(opts.nodeId !== undefined ? { nodeId: opts.nodeId } : {}),
      lenientTimestamps: opts.lenientTimestamps,
      salvageLog: opts.salvageLog,
      replication: opts.replication,
      ...(opts.journalDir !== undefined ? { journalDir: opts.journalDir } : {}),
      ...(opts.shards !== undefined ? { shards: opts.shards } : {}),
      ...(opts.histogramShards !== undefined ? { histogramShards: opts.histogramShards } : {}),
      ...(opts.rawShard !== undefined ? { rawShard: opts.rawShard } : {}),
      ...(opts.retention !== undefined ? { retention: opts.retention } : {}),
    },
    ctx.cwd,
  );
  if (opts.port !== undefined) config.port = opts.port;
  if (opts.sweepPace !== undefined) config.sweepPaceMs = opts.sweepPace;
  if (opts.maxBody !== undefined) config.maxBodyBytes = opts.maxBody;
  if (opts.maxBuckets !== undefined) config.maxBuckets = opts.maxBuckets;
  if (opts.diskReserve !== undefined) config.diskReserveBytes = opts.diskReserve;
  if (opts.cacheSize !== undefined) config.cacheBytes = opts.cacheSize;
  if (opts.replayBatch !== undefined) config.replayBatchRecords = opts.replayBatch;
  if (opts.replayConcurrency !== undefined) config.replayConcurrency = opts.replayConcurrency;
  if (opts.account !== undefined) config.account = opts.account;
  if (opts.flushRecords !== undefined) config.flushRecords = opts.flushRecords;
  if (opts.flushPause !== undefined) config.flushPauseMs = opts.flushPause;
  if (opts.retentionInterval !== undefined) config.retentionIntervalMs = opts.retentionInterval;
  if (!opts.sweepApi) config.noSweepApi = true;
  if (opts.topology !== undefined) {
    config.topology = loadTopologyFile(resolve(ctx.cwd, opts.topology), opts.topology);
    config.topologySource = opts.topology;
  }
  Object.assign(config, accessSettings(opts, ctx));
  if (!isLoopback(config.host) && !config.requireHeaders?.length) {
    ctx.log.warn(`listening on ${config.host}, reachable from other machines: this node has no authentication, anyone who can reach it can write and delete data`);
  }
  const node = await startServer(config, {
    onInternalError: (err) => ctx.log.error(`internal: ${err instanceof Error ? (ctx.verbose ? err.stack : err.message) : String(err)}`),
    onNotice: (message) => ctx.log.warn(message),
    onFlush: opts.traceFlush ? (e) => ctx.log.info(`flush ${JSON.stringify(e)}`) : undefined,
  });
  // Handlers go in before the ready line: whoever reads that line may signal us at once.
  const stopped = new Promise<void>((resolve) => {
    // SIGINT and SIGTERM both abort ctx.signal (main.ts).
    const stop = (): void => {
      ctx.signal.removeEventListener('abort', stop);
      resolve();
    };
    if (ctx.signal.aborted) stop();
    else ctx.signal.addEventListener('abort', stop);
  });
  if (config.lenientTimestamps) ctx.log.info('--lenient-timestamps: a bare integer start_ts/end_ts is read as <seconds>.000');
  ctx.stdout.write(
    `tsnode node listening on ${node.url} (data: ${config.dataDir ?? 'memory'}, node id ${node.identity.id}${node.identity.origin === 'memory' ? ', new for this process' : ''})\n`,
  );
  describeRing(node, ctx);
  if (config.retention) {
    const rules = [...[...config.retention.nnt].map(([p, s]) => `nnt:${p}=${s}s`), ...[...config.retention.histogram].map(([p, s]) => `histogram:${p}=${s}s`)];
    if (config.retention.raw !== null) rules.push(`raw=${config.retention.raw}s`);
    ctx.log.info(`node-managed retention: ${rules.join(', ')}; shards lying entirely past it are removed now and every ${(config.retentionIntervalMs ?? 60_000) / 1000} s`);
  }
  if (config.noSweepApi) ctx.log.info('--no-sweep-api: /sweep_delete answers 404, as the store does from version 0.19.23 on');
  await stopped;
  ctx.log.info('stopping: finishing in-flight requests');
  await node.close();
  ctx.log.info('stopped');
  return EXIT.ok;
}

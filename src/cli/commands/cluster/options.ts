/** `tsnode cluster`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { flag, type FlagValues } from '../../flags.js';
import { deprecatedNodeCount } from '../../local-cluster/node-count.js';

export const DEFAULT_CLUSTER_DIR = './tsnode-cluster';
export const DEFAULT_NODE_COUNT = 3;
export const MAX_CLUSTER_NODES = 64;

export function clusterUpFlags() {
  return {
    count: flag.count('--count <n>', `how many nodes (default: ${DEFAULT_NODE_COUNT})`, { min: 1, max: MAX_CLUSTER_NODES, complete: { kind: 'none' } }),
    nodes: deprecatedNodeCount(MAX_CLUSTER_NODES),
    basePort: flag.count('--base-port <port>', 'port of the first node; the others count up from it; 0 = free ports', { default: '8112', max: 65535, complete: { kind: 'none' } }),
    dir: flag.string('--dir <dir>', 'where data dirs, logs, nodes.txt and cluster.json go', { default: DEFAULT_CLUSTER_DIR, complete: { kind: 'files' } }),
    host: flag.string('--host <host>', 'address the nodes listen on', { default: '127.0.0.1', complete: { kind: 'none' } }),
    sweepPace: flag.duration('--sweep-pace <ms>', 'pause between units of sweep work on each node (makes progress visible); a bare number is milliseconds', {
      bareUnit: 'ms',
      min: 0,
      max: 60_000,
      complete: { kind: 'none' },
    }),
    lenientTimestamps: flag.boolean('--lenient-timestamps', 'every node also reads a bare integer start_ts/end_ts as .000 (for clients such as gosnowth)'),
    replication: flag.boolean('--no-replication', 'nodes keep only what they are sent: no journals to the other owners, no proxied reads (default: the ring replicates)'),
    rollups: flag.spanList('--rollups <spans>', "every node's numeric rollup periods (tsnode serve --rollups): 60,300 or 1m,5m", { complete: { kind: 'none' } }),
    histogramRollups: flag.spanList('--histogram-rollups <spans>', "every node's histogram periods (tsnode serve --histogram-rollups)", { complete: { kind: 'none' } }),
    tlsCert: flag.string('--tls-cert <file>', 'every node serves HTTPS with this certificate (tsnode serve --tls-cert); needs --tls-key', { complete: { kind: 'files' } }),
    tlsKey: flag.string('--tls-key <file>', 'the private key of --tls-cert', { complete: { kind: 'files' } }),
    requireHeader: flag.repeatable('--require-header <line>', 'every node refuses (401) requests without this header and value (tsnode serve --require-header), repeatable', {
      complete: { kind: 'none' },
    }),
    detach: flag.boolean('--detach', 'leave the nodes running in the background (stop with `tsnode cluster down`)'),
    writeCopies: flag.count('--write-copies <n>', 'copies of each metric the ring keeps, on that many different nodes (default: 2, or 1 for a single node)', {
      min: 1,
      max: 255,
      complete: { kind: 'none' },
    }),
    // Passed through to every node's `tsnode serve` (local-cluster/shard-args.ts).
    shards: flag.string('--shards <sizes>', "every node's numeric shard sizes, e.g. 60=1d,300=5d (see tsnode serve)", { complete: { kind: 'none' } }),
    histogramShards: flag.string('--histogram-shards <sizes>', "every node's histogram shard sizes (see tsnode serve)", { complete: { kind: 'none' } }),
    rawShard: flag.string('--raw-shard <size>', "every node's raw shard size (see tsnode serve)", { complete: { kind: 'none' } }),
    retention: flag.string('--retention <rules>', 'node-managed retention on every node, e.g. nnt:60=52w,nnt:300=104w (see tsnode serve)', { complete: { kind: 'none' } }),
    retentionInterval: flag.string('--retention-interval <duration>', 'how often the nodes check --retention (see tsnode serve)', { complete: { kind: 'none' } }),
    sweepApi: flag.boolean('--no-sweep-api', 'every node answers /sweep_delete with 404, as the store does from 0.19.23 on'),
    nodeFlags: flag.repeatable(
      '--node-flags <node:flags>',
      'extra serve flags for one node, for a mixed ring: "3:--no-sweep-api --retention nnt:60=52w" (repeatable; only the shard and retention flags above)',
      { complete: { kind: 'none' } },
    ),
    output: flag.output(),
  };
}
export type ClusterUpFlags = FlagValues<ReturnType<typeof clusterUpFlags>>;

export function clusterDownFlags() {
  return {
    dir: flag.string('--dir <dir>', 'the directory given to `cluster up`', { default: DEFAULT_CLUSTER_DIR, complete: { kind: 'files' } }),
    grace: flag.duration('--grace <duration>', 'how long to wait after SIGTERM before SIGKILL', { default: '5s', max: 3_600_000 }),
    output: flag.output(),
  };
}
export type ClusterDownFlags = FlagValues<ReturnType<typeof clusterDownFlags>>;

export function clusterRestartFlags() {
  return {
    dir: flag.string('--dir <dir>', 'the directory given to `cluster up`', { default: DEFAULT_CLUSTER_DIR, complete: { kind: 'files' } }),
    grace: flag.duration('--grace <duration>', 'how long to wait after SIGTERM before SIGKILL', { default: '5s', max: 3_600_000 }),
    output: flag.output(),
  };
}
export type ClusterRestartFlags = FlagValues<ReturnType<typeof clusterRestartFlags>>;

export function clusterReplicationFlags() {
  return {
    dir: flag.string('--dir <dir>', 'the directory given to `cluster up`', { default: DEFAULT_CLUSTER_DIR, complete: { kind: 'files' } }),
    output: flag.output(),
  };
}
export type ClusterReplicationFlags = FlagValues<ReturnType<typeof clusterReplicationFlags>>;

/** `tsnode serve`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { flag, type FlagValues } from '../../flags.js';

// Kept long: serve's flag table, one entry per flag; split, the table would no longer be one list.
export function serveFlags() {
  return {
    host: flag.string('--host <address>', 'address to listen on (a non-loopback address exposes a node without authentication)', {
      default: '127.0.0.1',
      complete: { kind: 'none' },
    }),
    port: flag.count('--port <port>', 'port to listen on; 0 picks a free port (default: 8112)', { max: 65535, complete: { kind: 'none' } }),
    dataDir: flag.string('--data-dir <dir>', 'directory of the SQLite database, created if missing (default: ./tsnode-data)', { complete: { kind: 'files' } }),
    memory: flag.boolean('--memory', 'keep everything in memory (gone when the node stops)'),
    rollups: flag.spanList('--rollups <spans>', 'numeric rollup periods, each a multiple of the smallest: 60,300 or 1m,5m (default: 60,300,1800,10800,86400)', {
      complete: { kind: 'none' },
    }),
    histogramRollups: flag.spanList('--histogram-rollups <spans>', 'histogram periods (default: 60,300,1800,10800,86400)', { complete: { kind: 'none' } }),
    sweepPace: flag.duration('--sweep-pace <ms>', 'pause after each check/metric a sweep handles, so a running sweep can be watched; a bare number is milliseconds (default: 0)', {
      bareUnit: 'ms',
      min: 0,
      max: 3_600_000,
      complete: { kind: 'none' },
    }),
    maxBody: flag.size('--max-body <size>', 'largest request body: bytes or a size like 64MiB (= 64M), 512KiB, 10MB (decimal) (default: 64MiB)', { complete: { kind: 'none' } }),
    maxBuckets: flag.count('--max-buckets <n>', 'largest number of buckets one rollup read may return (default: 1000000)', { min: 1, complete: { kind: 'none' } }),
    nodeId: flag.string('--node-id <uuid>', "the node's identity in a ring (default: the one kept in the data dir, else a new one; --memory: new per process)", {
      complete: { kind: 'none' },
    }),
    topology: flag.string(
      '--topology <file>',
      'the ring this node belongs to: JSON {"write_copies", "nodes": [{"id", "address", "port", "apiport", "weight"}]} or the store\'s topology XML',
      {
        complete: { kind: 'files' },
      },
    ),
    lenientTimestamps: flag.boolean(
      '--lenient-timestamps',
      'also read a bare integer start_ts/end_ts (1529509020) as .000, as the production Go client sends it (default: strict <s>.<mmm>)',
    ),
    salvageLog: flag.boolean('--salvage-log', 'start although the ingest log is damaged: apply its intact writes, give up the unreadable ones (copy the data dir first)'),
    diskReserve: flag.size('--disk-reserve <size>', "room kept back on the data dir's disk so a full disk can still be swept and restarted; 0 for none (default: 16MiB)", {
      min: 0,
      complete: { kind: 'none' },
    }),
    cacheSize: flag.size(
      '--cache-size <size>',
      "SQLite's page cache for the node's database, a fixed cost whatever the series count; more can speed up reads and flushes of a large data set (default: 8MiB)",
      {
        min: 64 * 1024,
        complete: { kind: 'none' },
      },
    ),
    replication: flag.boolean(
      '--no-replication',
      "on a ring, keep only what this node is sent: no journals to the metric's other owners, no proxied reads (default: a ring node replicates)",
    ),
    journalDir: flag.string('--journal-dir <dir>', 'where the per-peer replication journals live (default: <data dir>/replication)', { complete: { kind: 'files' } }),
    replayBatch: flag.count('--replay-batch <n>', 'records per batch a replayer sends to a peer (default: 20000; at most 8 MiB)', { min: 1, complete: { kind: 'none' } }),
    replayConcurrency: flag.count('--replay-concurrency <n>', 'replayed batches in flight at once, across all peers (default: 4)', { min: 1, complete: { kind: 'none' } }),
    shards: flag.string(
      '--shards <sizes>',
      'numeric rollup shard sizes, <period>=<size>, rounded up to whole multiples of 127 periods as the store does (default: 60=1d,300=5d,1800=30d,10800=180d; others 127 periods)',
      {
        complete: { kind: 'none' },
      },
    ),
    histogramShards: flag.string('--histogram-shards <sizes>', 'histogram shard sizes, <period>=<size> (default: 60=7d,300=30d,1800=12w,10800=52w,86400=260w)', {
      complete: { kind: 'none' },
    }),
    rawShard: flag.string('--raw-shard <size>', 'raw shard size, numeric and histogram (default: 1w)', { complete: { kind: 'none' } }),
    retention: flag.string(
      '--retention <rules>',
      'node-managed retention: remove every shard lying entirely past its age, e.g. nnt:60=52w,nnt:300=104w,histogram:60=4w,raw=52w (default: none, the node removes nothing by itself)',
      { complete: { kind: 'none' } },
    ),
    retentionInterval: flag.duration('--retention-interval <duration>', 'how often --retention is checked (default: 1m)', { min: 1000, complete: { kind: 'none' } }),
    sweepApi: flag.boolean('--no-sweep-api', 'answer /sweep_delete with 404, as the store does from version 0.19.23 on (pair it with --retention)'),
    account: flag.count('--account <id>', 'the account of everything this node stores; tag queries (find, delete) naming another account match nothing (default: 1)', {
      min: 0,
      complete: { kind: 'none' },
    }),
    tlsCert: flag.string('--tls-cert <file>', 'serve HTTPS with this certificate (PEM, chain first); needs --tls-key', { complete: { kind: 'files' } }),
    tlsKey: flag.string('--tls-key <file>', 'the private key of --tls-cert (PEM)', { complete: { kind: 'files' } }),
    requireHeader: flag.repeatable(
      '--require-header <line>',
      "refuse (401) every request without this header and exact value, repeatable: 'Authorization: Bearer <token>' (as a proxy in front of production would)",
      { complete: { kind: 'none' } },
    ),
    // Test knobs: frequent, slow, visible flushes (test/reliability/).
    flushRecords: flag.count('--flush-records <n>', 'logged records that start a flush', { min: 1, hidden: true }),
    flushPause: flag.duration('--flush-pause <ms>', 'a pause before each series a flush applies', { bareUnit: 'ms', min: 0, max: 3_600_000, hidden: true }),
    traceFlush: flag.boolean('--trace-flush', 'log every flush', { hidden: true }),
  };
}
export type ServeOptions = FlagValues<ReturnType<typeof serveFlags>>;

/**
 * The reference node's configuration: raw `tsnode serve` flag strings in, a validated
 * ServerConfig out. Pure; errors name the flag, the value and what was expected.
 */
import { ConfigError } from './errors.js';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { DEFAULT_MAX_BUCKETS, DEFAULT_PORT, DEFAULT_ROLLUPS, UUID_RE } from '../protocol/index.js';
import { DURATION_FORMS, readDuration, readSize, SIZE_FORMS } from '../protocol/units.js';
import type { Topology } from '../ring/index.js';

export interface ServerConfig {
  host: string;
  /** 0 = any free port. */
  port: number;
  /** Absolute data directory, or null for an in-memory store. */
  dataDir: string | null;
  /** Numeric rollup periods in seconds, ascending; each a multiple of the first (the smallest). */
  rollups: number[];
  /** Histogram periods in seconds, ascending. */
  histogramRollups: number[];
  /** Pause after each check/metric a sweep handles (ms), so a running sweep can be observed. */
  sweepPaceMs: number;
  maxBodyBytes: number;
  /** Largest number of buckets one rollup read may return. */
  maxBuckets: number;
  /**
   * Read a bare integer start_ts/end_ts as `.000` (the production Go client sends them so);
   * off by default: the contract requires exactly three fraction digits.
   */
  lenientTimestamps: boolean;
  /** Whole-request deadline (node:http requestTimeout). */
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  /** The node's clock, epoch ms (injectable for tests). */
  now: () => number;
  /** `--node-id`: the node's identity (UUID); null: the one kept in the data dir, else a new one. */
  nodeId?: string | null;
  /** `--topology`: the ring this node belongs to; null: a node on its own. */
  topology?: Topology | null;
  /** Where the topology came from (the file), for messages. */
  topologySource?: string;
  /** Apply the intact frames of a damaged ingest log instead of refusing to start. */
  salvageLog: boolean;
  /** `--account`: the account of everything this node stores; tag queries of another account match nothing. */
  account: number;
  /** Bytes kept back on the data dir's disk for sweeps and a restart when it fills up (0: none). */
  diskReserveBytes: number;
  /** `--cache-size`: the SQLite page cache, bytes (default 8 MiB, see storage/schema.ts). */
  cacheBytes?: number;
  /** Logged records that start a flush (tests make flushes frequent with a small one). */
  flushRecords?: number;
  /** A pause before each series a flush applies, ms (tests make flushes last long enough to kill one in). */
  flushPauseMs?: number;
  /** Replicate writes to the other owners of a ring (default true; false: `--no-replication`, each node keeps what it is sent). */
  replicate?: boolean;
  /** `--journal-dir`: where the per-peer replication journals live (default `<data dir>/replication`). */
  journalDir?: string | null;
  /** `--replay-batch`: records per replayed batch (default 5000). */
  replayBatchRecords?: number;
  /** `--replay-concurrency`: replayed batches in flight at once, across all peers (default 4). */
  replayConcurrency?: number;
  /** How often the node asks its peers for their gossip (ms, default 1000). */
  gossipIntervalMs?: number;
  /** Time shard sizes asked for (shards.ts rounds them as the store does); absent: the store's sample config. */
  shards?: { nnt?: Map<number, number>; histogram?: Map<number, number>; raw?: number };
  /** `--retention`: node-managed retention; absent: the node removes nothing by itself. */
  retention?: RetentionConfig | null;
  /** How often the retention is checked (ms; default 60,000). */
  retentionIntervalMs?: number;
  /** `--no-sweep-api`: answer /sweep_delete as a store from 0.19.23 on does (404). */
  noSweepApi?: boolean;
  /** `--tls-cert`/`--tls-key`: serve HTTPS with this certificate chain and key (PEM text, already read). */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /**
   * `--require-header 'Name: value'`: every request must carry each of these headers with exactly
   * this value (a bearer token, as production sits behind a proxy that checks one); else 401.
   */
  requireHeaders?: Array<{ name: string; value: string }>;
}

export const DEFAULT_MAX_BODY = 64 * 1024 * 1024;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_DATA_DIR = './tsnode-data';
export const DEFAULT_DISK_RESERVE = 16 * 1024 * 1024;
/** The account of a node started without `--account`. */
export const DEFAULT_ACCOUNT = 1;

/** The flags as commander hands them over (strings; booleans for switches). */
export interface ServeFlags {
  host?: string;
  port?: string;
  dataDir?: string;
  memory?: boolean;
  rollups?: string;
  histogramRollups?: string;
  sweepPace?: string;
  maxBody?: string;
  maxBuckets?: string;
  nodeId?: string;
  /** Path of the topology file; read by loadTopologyFile (this module stays free of file reads). */
  topology?: string;
  lenientTimestamps?: boolean;
  salvageLog?: boolean;
  diskReserve?: string;
  /** `--no-replication` sets this false. */
  replication?: boolean;
  journalDir?: string;
  replayBatch?: string;
  replayConcurrency?: string;
  /** Hidden test knobs (see ServerConfig). */
  flushRecords?: string;
  flushPause?: string;
  shards?: string;
  histogramShards?: string;
  rawShard?: string;
  retention?: string;
}

export function parsePort(text: string, field = '--port'): number {
  const t = text.trim();
  if (!/^\d{1,5}$/.test(t) || Number(t) > 65535) {
    throw new ConfigError(field, text, 'a port number from 0 to 65535 (0 = any free port)', 'is not a port number');
  }
  return Number(t);
}

export function parseHost(text: string, field = '--host'): string {
  const t = text.trim();
  const bare = t.startsWith('[') && t.endsWith(']') ? t.slice(1, -1) : t;
  if (isIP(bare) || /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(bare)) return bare;
  throw new ConfigError(field, text, 'an IP address or host name, e.g. 127.0.0.1, 0.0.0.0, ::1, localhost', 'is not an address');
}

/** Whether an address only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/** `--rollups 60,300`: positive whole seconds, deduplicated, ascending. */
export function parsePeriods(text: string, field: string, opts: { multiplesOfSmallest: boolean }): number[] {
  const items = text.split(',').map((s) => s.trim());
  const out = new Set<number>();
  for (const item of items) {
    if (!/^\d{1,9}$/.test(item) || Number(item) === 0) {
      throw new ConfigError(field, item === '' ? text : item, 'a comma list of positive whole numbers of seconds, e.g. 60,300,1800', 'is not a period in seconds');
    }
    out.add(Number(item));
  }
  const periods = [...out].sort((a, b) => a - b);
  const smallest = periods[0]!;
  if (opts.multiplesOfSmallest) {
    for (const p of periods) {
      if (p % smallest !== 0) {
        throw new ConfigError(
          field,
          text,
          `every period a whole multiple of the smallest (${smallest})`,
          `has ${p}, which is not a multiple of the smallest period ${smallest} (larger spans are built from whole smallest-span records)`,
        );
      }
    }
  }
  return periods;
}

/** `--max-body`: plain bytes or a size like 64MiB, 512KiB, 10MB (decimal) or 1G (binary). */
export function parseSize(text: string, field = '--max-body'): number {
  const r = readSize(text);
  if (!r.ok) throw new ConfigError(field, text, SIZE_FORMS, r.problem.includes('too large') ? 'is out of range' : 'is not a size');
  if (r.value < 1) throw new ConfigError(field, text, 'a size of at least 1 byte', 'is out of range');
  return r.value;
}

export function parseNonNegativeInt(text: string, field: string, expected: string): number {
  const t = text.trim();
  if (!/^\d{1,9}$/.test(t)) throw new ConfigError(field, text, expected, 'is not a whole number >= 0');
  return Number(t);
}

/** Validates `tsnode serve` flags into a config. `cwd` resolves a relative --data-dir. */
export function parseServeFlags(flags: ServeFlags, cwd: string): ServerConfig {
  if (flags.memory && flags.dataDir !== undefined) {
    throw new ConfigError('--memory', 'true', 'either --memory or --data-dir, not both', 'cannot be combined with --data-dir');
  }
  const dataDir = flags.memory ? null : resolve(cwd, flags.dataDir ?? DEFAULT_DATA_DIR);
  if (dataDir !== null && flags.dataDir !== undefined && flags.dataDir.trim() === '') {
    throw new ConfigError('--data-dir', flags.dataDir, 'a directory path', 'is empty');
  }
  const maxBuckets = flags.maxBuckets === undefined ? DEFAULT_MAX_BUCKETS : parseNonNegativeInt(flags.maxBuckets, '--max-buckets', 'a whole number >= 1');
  if (maxBuckets < 1) throw new ConfigError('--max-buckets', String(flags.maxBuckets), 'a whole number >= 1', 'must be at least 1');
  const config: ServerConfig = {
    host: parseHost(flags.host ?? DEFAULT_HOST),
    port: flags.port === undefined ? DEFAULT_PORT : parsePort(flags.port),
    dataDir,
    rollups: parsePeriods(flags.rollups ?? DEFAULT_ROLLUPS.join(','), '--rollups', { multiplesOfSmallest: true }),
    histogramRollups: parsePeriods(flags.histogramRollups ?? DEFAULT_ROLLUPS.join(','), '--histogram-rollups', { multiplesOfSmallest: false }),
    sweepPaceMs: flags.sweepPace === undefined ? 0 : parseNonNegativeInt(flags.sweepPace, '--sweep-pace', 'milliseconds, a whole number >= 0'),
    maxBodyBytes: flags.maxBody === undefined ? DEFAULT_MAX_BODY : parseSize(flags.maxBody),
    maxBuckets,
    lenientTimestamps: flags.lenientTimestamps === true,
    requestTimeoutMs: 120_000,
    headersTimeoutMs: 20_000,
    now: () => Date.now(),
    nodeId: flags.nodeId === undefined ? null : parseNodeId(flags.nodeId),
    salvageLog: flags.salvageLog === true,
    account: DEFAULT_ACCOUNT,
    diskReserveBytes: flags.diskReserve === undefined ? DEFAULT_DISK_RESERVE : flags.diskReserve.trim() === '0' ? 0 : parseSize(flags.diskReserve, '--disk-reserve'),
    ...replicationFlags(flags, cwd),
    ...(flags.flushRecords === undefined ? {} : { flushRecords: Math.max(1, parseNonNegativeInt(flags.flushRecords, '--flush-records', 'a whole number >= 1')) }),
    ...(flags.flushPause === undefined ? {} : { flushPauseMs: parseNonNegativeInt(flags.flushPause, '--flush-pause', 'milliseconds, a whole number >= 0') }),
  };
  return { ...config, ...parseShardFlags(flags, config.rollups, config.histogramRollups) };
}

/** `--shards`, `--histogram-shards`, `--raw-shard`, `--retention`, against the node's periods. */
function parseShardFlags(flags: ServeFlags, rollups: number[], histogramRollups: number[]): Pick<ServerConfig, 'shards' | 'retention'> {
  const shards: NonNullable<ServerConfig['shards']> = {};
  if (flags.shards !== undefined) shards.nnt = parsePeriodSizes(flags.shards, '--shards', rollups);
  if (flags.histogramShards !== undefined) shards.histogram = parsePeriodSizes(flags.histogramShards, '--histogram-shards', histogramRollups);
  if (flags.rawShard !== undefined) shards.raw = parseAgeSeconds(flags.rawShard, '--raw-shard');
  return { shards, retention: flags.retention === undefined ? null : parseRetention(flags.retention, rollups, histogramRollups) };
}

/** `--no-replication`, `--journal-dir`, `--replay-batch`, `--replay-concurrency`. */
function replicationFlags(flags: ServeFlags, cwd: string): Partial<ServerConfig> {
  const out: Partial<ServerConfig> = {};
  if (flags.replication === false) out.replicate = false;
  if (flags.journalDir !== undefined) {
    if (flags.journalDir.trim() === '') throw new ConfigError('--journal-dir', flags.journalDir, 'a directory path', 'is empty');
    out.journalDir = resolve(cwd, flags.journalDir);
  }
  const positive = (text: string, field: string): number => {
    const n = parseNonNegativeInt(text, field, 'a whole number >= 1');
    if (n < 1) throw new ConfigError(field, text, 'a whole number >= 1', 'must be at least 1');
    return n;
  };
  if (flags.replayBatch !== undefined) out.replayBatchRecords = positive(flags.replayBatch, '--replay-batch');
  if (flags.replayConcurrency !== undefined) out.replayConcurrency = positive(flags.replayConcurrency, '--replay-concurrency');
  return out;
}

/** `--node-id`: a UUID, as the store's node identities are; kept lower case. */
export function parseNodeId(text: string, field = '--node-id'): string {
  const t = text.trim();
  if (!UUID_RE.test(t)) throw new ConfigError(field, text, 'a UUID like 1f846f26-0cfd-4df5-b4f1-e0930604e577', 'is not a node identity');
  return t.toLowerCase();
}

/** A complete config with defaults, for in-process servers (tests, library use). */
export function serverConfig(overrides: Partial<ServerConfig> = {}): ServerConfig {
  return {
    host: DEFAULT_HOST,
    port: 0,
    dataDir: null,
    rollups: [...DEFAULT_ROLLUPS],
    histogramRollups: [...DEFAULT_ROLLUPS],
    sweepPaceMs: 0,
    maxBodyBytes: DEFAULT_MAX_BODY,
    maxBuckets: DEFAULT_MAX_BUCKETS,
    lenientTimestamps: false,
    requestTimeoutMs: 120_000,
    headersTimeoutMs: 20_000,
    now: () => Date.now(),
    salvageLog: false,
    diskReserveBytes: DEFAULT_DISK_RESERVE,
    account: DEFAULT_ACCOUNT,
    ...overrides,
  };
}

// ---------------------------------------------------------------------------------------------
// Time shards and node-managed retention (shards.ts, retention-keeper.ts)

const AGE_FORMS = `whole seconds (3600) or ${DURATION_FORMS}`;

/** `1d`, `52w`, `1y`, `3600`: a time span in whole seconds (the store's shard sizes and retentions), in the one duration grammar. */
export function parseAgeSeconds(text: string, field: string): number {
  const r = readDuration(text, { bareUnit: 's', noun: 'time span' });
  if (!r.ok) throw new ConfigError(field, text, AGE_FORMS, 'is not a time span');
  if (r.value < 1000 || r.value % 1000 !== 0 || r.rounded) throw new ConfigError(field, text, AGE_FORMS, 'must be a whole number of seconds, at least 1');
  return r.value / 1000;
}

/** `60=1d,300=5d`: a size per period, for `--shards` and `--histogram-shards`; every period must be one of the node's. */
export function parsePeriodSizes(text: string, field: string, periods: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const item of text.split(',').map((s) => s.trim())) {
    const m = /^(\d{1,9})=(.+)$/.exec(item);
    if (!m) throw new ConfigError(field, item === '' ? text : item, `a comma list of <period>=<size>, e.g. 60=1d,300=5d (${AGE_FORMS})`, 'is not <period>=<size>');
    const period = Number(m[1]);
    if (!periods.includes(period)) {
      throw new ConfigError(
        field,
        item,
        `a period of this node (${periods.join(', ')})`,
        `names period ${period}, which is not one of this node's periods (${periods.join(', ')})`,
      );
    }
    if (out.has(period)) throw new ConfigError(field, item, 'each period once', `names period ${period} twice`);
    out.set(period, parseAgeSeconds(m[2]!, `${field} ${period}`));
  }
  return out;
}

/** Configured retention, seconds: per numeric and histogram period, and raw (null: none, raw shards stay). */
export interface RetentionConfig {
  nnt: Map<number, number>;
  histogram: Map<number, number>;
  raw: number | null;
}

/**
 * `--retention nnt:60=52w,nnt:300=104w,histogram:60=4w,raw=2w`. The smallest numeric span's
 * rollup and the raw records are one copy on this node (see shard-index.ts): a raw rule and an
 * nnt rule for the smallest period remove the same rows, so when both are given they must agree.
 */
export function parseRetention(text: string, rollups: readonly number[], histogramRollups: readonly number[], field = '--retention'): RetentionConfig {
  const out: RetentionConfig = { nnt: new Map(), histogram: new Map(), raw: null };
  const forms = 'a comma list of nnt:<period>=<age>, histogram:<period>=<age> and raw=<age>, e.g. nnt:60=52w,nnt:300=104w,raw=1w';
  for (const item of text.split(',').map((s) => s.trim())) {
    const raw = /^raw=(.+)$/i.exec(item);
    if (raw) {
      if (out.raw !== null) throw new ConfigError(field, item, 'one raw rule', 'gives raw twice');
      out.raw = parseAgeSeconds(raw[1]!, `${field} raw`);
      continue;
    }
    const m = /^(nnt|histogram):(\d{1,9})=(.+)$/i.exec(item);
    if (!m) throw new ConfigError(field, item === '' ? text : item, forms, 'is not a retention rule');
    const kind = m[1]!.toLowerCase() as 'nnt' | 'histogram';
    const period = Number(m[2]);
    const periods = kind === 'nnt' ? rollups : histogramRollups;
    if (!periods.includes(period)) {
      throw new ConfigError(
        field,
        item,
        `a ${kind} period of this node (${periods.join(', ')})`,
        `names ${kind} period ${period}, which this node does not keep (${periods.join(', ')})`,
      );
    }
    if (out[kind].has(period)) throw new ConfigError(field, item, 'each period once', `gives ${kind}:${period} twice`);
    out[kind].set(period, parseAgeSeconds(m[3]!, `${field} ${kind}:${period}`));
  }
  const smallest = rollups[0]!;
  const nntSmallest = out.nnt.get(smallest);
  if (out.raw !== null && nntSmallest !== undefined && out.raw !== nntSmallest) {
    throw new ConfigError(
      field,
      text,
      `raw=${nntSmallest} or no raw rule`,
      `gives raw ${out.raw}s and nnt:${smallest} ${nntSmallest}s: this node keeps its ${smallest} s rollup in its raw records (one copy), so the two rules remove the same data and must agree`,
    );
  }
  // One rule for the shared rows: /state reports what the node removes.
  const shared = out.raw ?? nntSmallest;
  if (shared !== undefined) {
    out.raw = shared;
    out.nnt.set(smallest, shared);
  }
  return out;
}

/** `--require-header 'Name: value'`: the header name (a token) and its exact value. */
export function parseRequiredHeader(text: string): { name: string; value: string } {
  const i = text.indexOf(':');
  const name = i < 0 ? '' : text.slice(0, i).trim();
  const value = i < 0 ? '' : text.slice(i + 1).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || value === '') {
    throw new ConfigError('--require-header', text.replace(/:.*/, ': ...'), "'Name: value', e.g. 'Authorization: Bearer <token>'", 'is not a header line with a name and a value');
  }
  return { name: name.toLowerCase(), value };
}

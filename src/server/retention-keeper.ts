/**
 * Node-managed retention, the store's model from version 0.19.23 on: every shard lying entirely
 * past its retention (its end at or before now minus the retention) is removed whole, at start
 * and then every interval. Shards straddling the cut-off stay until they lie past it entirely.
 */
import type { RetentionConfig } from './config.js';
import type { ShardKind, ShardSpan } from './shards.js';
import type { Store } from './store.js';

/** One shard a check removed. */
export interface RemovedShard {
  kind: ShardKind;
  /** The period (0 for raw). */
  period: number;
  shard: ShardSpan;
  /** The retention it lay past, seconds. */
  retention: number;
  /** Rows deleted with it. */
  rows: number;
}

export interface RetentionKeeperOptions {
  /** The clock, epoch ms (the node's, injectable in tests). */
  now: () => number;
  intervalMs: number;
  /** Told of each shard removed (the node logs it). */
  onRemoved: (removed: RemovedShard) => void;
  /** A check that failed (the next one tries again). */
  onError: (err: unknown) => void;
}

/** The rules of a config as (kind, period, age) triples; raw last (its rows may be gone with the smallest period's). */
function rulesOf(retention: RetentionConfig): Array<{ kind: ShardKind; period: number; age: number }> {
  return [
    ...[...retention.nnt].map(([period, age]) => ({ kind: 'nnt' as const, period, age })),
    ...[...retention.histogram].map(([period, age]) => ({ kind: 'histogram' as const, period, age })),
    ...(retention.raw === null ? [] : [{ kind: 'raw' as const, period: 0, age: retention.raw }]),
  ];
}

/**
 * `{nnt: {"60": 31449600}, histogram: {}, raw: null, histogram_raw: null}`: the configured retention as
 * /state reports it (seconds). The raw histograms are the smallest histogram period's rows, so
 * their retention is that period's rule.
 */
export function retentionJson(
  retention: RetentionConfig,
  smallestHistogram: number | undefined,
): { nnt: Record<string, number>; histogram: Record<string, number>; raw: number | null; histogram_raw: number | null } {
  const histogramRaw = smallestHistogram === undefined ? null : (retention.histogram.get(smallestHistogram) ?? null);
  return { nnt: Object.fromEntries(retention.nnt), histogram: Object.fromEntries(retention.histogram), raw: retention.raw, histogram_raw: histogramRaw };
}

export class RetentionKeeper {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly retention: RetentionConfig,
    private readonly o: RetentionKeeperOptions,
  ) {}

  /** Removes every shard past its retention now; returns what it removed. */
  check(): RemovedShard[] {
    const nowSec = Math.floor(this.o.now() / 1000);
    const removed: RemovedShard[] = [];
    for (const { kind, period, age } of rulesOf(this.retention)) {
      for (const shard of this.store.listShards(kind, period)) {
        if (shard.end > nowSec - age) break;
        const r = { kind, period, shard, retention: age, rows: this.store.removeShard(kind, period, shard) };
        removed.push(r);
        this.o.onRemoved(r);
      }
    }
    return removed;
  }

  /** A check now, then one every interval (the timer never keeps the process alive). */
  start(): void {
    this.checkQuietly();
    this.timer = setInterval(() => this.checkQuietly(), this.o.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private checkQuietly(): void {
    try {
      this.check();
    } catch (err) {
      this.o.onError(err);
    }
  }
}

/** `nnt 60 s shard [1699961040, 1700052480) (2023-11-14T11:24:00Z to ...)`: a removed shard in words, for the log. */
export function describeRemoved(r: RemovedShard): string {
  const what = r.kind === 'raw' ? 'raw shard' : `${r.kind} ${r.period} s shard`;
  const iso = (t: number): string => new Date(t * 1000).toISOString().replace('.000Z', 'Z');
  return `retention: removed ${what} [${r.shard.start}, ${r.shard.end}) (${iso(r.shard.start)} to ${iso(r.shard.end)}, ${r.rows} row(s)): it lies entirely past its retention of ${r.retention} s`;
}

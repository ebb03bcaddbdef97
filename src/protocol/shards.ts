/**
 * The store's shard inventories and the `/state` members about storage, as the client reads them
 * (circonus/product-docs, static/yaml/administration.yaml and irondb/api/maintenance.md):
 * - `GET /list_nntbs_shards`: `[{period, shard: [{block_floor, block_ceiling, mode}]}]`; the
 *   OpenAPI spec spells the end `block:ceiling`, the API page `block_ceiling`: both are read;
 * - `GET /raw/list_shards`, `GET /histogram_raw/list_shards`, `GET /histogram/{period}/list_shards`:
 *   `[{start, end}]` in epoch seconds;
 * - `GET /state`: `nntbs.rollup_<period>.fs` `{id, totalMB, freeMB}`, and `retention` (a tsnode
 *   extension: a reference node's configured retention, seconds per span).
 * Loose: members not read here are ignored.
 */
import type { z } from 'zod';
import type { nntShardListSchema, stateStorageSchema } from './schemas.js';

/** Who removes a node's old data: tsnode's sweeps, or the node itself (the store since 0.19.23). */
export type ManagedBy = 'sweep' | 'node';

/** One shard: epoch seconds, start inclusive, end exclusive. */
export interface ShardRange {
  start: number;
  end: number;
}

/** A list the node gave, or why there is none. */
export type ShardList = { shards: readonly ShardRange[] } | { problem: string };

/** One node's shard inventories. */
export interface NodeInventory {
  node: string;
  /** `GET /list_nntbs_shards`: numeric rollup shards by period. */
  nnt: { byPeriod: ReadonlyMap<number, readonly ShardRange[]> } | { problem: string };
  /** `GET /histogram/{period}/list_shards`, per period asked. */
  histogram: ReadonlyMap<number, ShardList>;
  /** `GET /raw/list_shards`. */
  raw: ShardList;
  /** `GET /histogram_raw/list_shards`. */
  histogramRaw: ShardList;
}

/**
 * A node's configured retention (`/state` `retention`): seconds per span; `raw` null when raw
 * shards are kept. Spans absent are kept forever.
 */
export interface NodeRetentionConfig {
  nnt: Readonly<Record<string, number>>;
  histogram: Readonly<Record<string, number>>;
  raw: number | null;
  /** The raw histograms' retention (`histogram_raw`); null or absent when they are kept or the node does not say. */
  histogramRaw?: number | null;
}

export const NNT_SHARDS_SHAPE = 'a JSON array of {period, shard: [{block_floor, block_ceiling, mode}]}';
export const START_END_SHARDS_SHAPE = 'a JSON array of {start, end} (epoch seconds)';

const isAmount = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isSecond = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * `/list_nntbs_shards` read without zod, for the plain shape (500 shards a period x 100 nodes is
 * 250,000 objects): null when anything does not fit, so the schema can say what.
 */
export function scanNntShards(json: unknown): Map<number, ShardRange[]> | null {
  if (!Array.isArray(json)) return null;
  const out = new Map<number, ShardRange[]>();
  for (const p of json as unknown[]) {
    if (!p || typeof p !== 'object') return null;
    const { period, shard } = p as { period?: unknown; shard?: unknown };
    if (typeof period !== 'number' || !Number.isSafeInteger(period) || period <= 0 || !Array.isArray(shard)) return null;
    const list = out.get(period) ?? [];
    for (const s of shard as unknown[]) {
      if (!s || typeof s !== 'object') return null;
      const o = s as Record<string, unknown>;
      const end = o.block_ceiling ?? o['block:ceiling'];
      if (!isSecond(o.block_floor) || !isSecond(end) || (o.mode !== undefined && typeof o.mode !== 'string')) return null;
      list.push({ start: o.block_floor, end });
    }
    out.set(period, list);
  }
  return out;
}

/** `[{start, end}]` read without zod; null when anything does not fit. */
export function scanStartEndShards(json: unknown): ShardRange[] | null {
  if (!Array.isArray(json)) return null;
  const out: ShardRange[] = [];
  for (const s of json as unknown[]) {
    if (!s || typeof s !== 'object') return null;
    const { start, end } = s as { start?: unknown; end?: unknown };
    if (!isSecond(start) || !isSecond(end)) return null;
    out.push({ start, end });
  }
  return out;
}

/** `/list_nntbs_shards` as shards per period. */
export function nntShardsByPeriod(wire: z.infer<typeof nntShardListSchema>): Map<number, ShardRange[]> {
  const out = new Map<number, ShardRange[]>();
  for (const p of wire) {
    const list = out.get(p.period) ?? [];
    for (const s of p.shard) list.push({ start: s.block_floor, end: (s.block_ceiling ?? s['block:ceiling'])! });
    out.set(p.period, list);
  }
  return out;
}

/** A rollup's file system as `/state` reports it (`nntbs.rollup_<period>.fs`). */
export interface RollupFs {
  id: string | null;
  totalMB: number;
  freeMB: number;
}

/** Per period, the `fs` `/state` reports under `nntbs.rollup_<period>`; entries without a readable fs are left out. */
export function rollupFsOf(nntbs: Record<string, unknown> | undefined): Map<number, RollupFs> {
  const out = new Map<number, RollupFs>();
  for (const [key, value] of Object.entries(nntbs ?? {})) {
    const m = /^rollup_(\d+)$/.exec(key);
    if (!m || !value || typeof value !== 'object') continue;
    const fs = (value as { fs?: unknown }).fs;
    if (!fs || typeof fs !== 'object' || Array.isArray(fs)) continue;
    const { id, totalMB, freeMB } = fs as Record<string, unknown>;
    if ((id !== undefined && typeof id !== 'string') || !isAmount(totalMB) || !isAmount(freeMB)) continue;
    out.set(Number(m[1]), { id: id ?? null, totalMB, freeMB });
  }
  return out;
}

/** `/state` `retention` as a NodeRetentionConfig; null when the node does not report one. */
export function retentionConfigOf(state: z.infer<typeof stateStorageSchema>): NodeRetentionConfig | null {
  const r = state.retention;
  if (!r) return null;
  return { nnt: r.nnt ?? {}, histogram: r.histogram ?? {}, raw: r.raw ?? null, ...(r.histogram_raw !== undefined ? { histogramRaw: r.histogram_raw } : {}) };
}

/**
 * Wire shapes of the cluster endpoints as the client reads them: `GET /state`, `GET /stats.json`
 * and `GET /locate/json/<uuid>/<metric>` (circonus/irondb-docs api/state, locate-json; the
 * stats tree as gosnowth reads it). Loose: a production node reports far more than these
 * members, and only what is read here is checked.
 */
import { z } from 'zod';

const spans = z.array(z.number().int().positive());

/** `GET /state`: the members tsnode uses. `current`/`next` are a topology hash or "-". */
export const nodeStateSchema = z.looseObject({
  identity: z.string().min(1),
  current: z.string().optional(),
  next: z.string().optional(),
  base_rollup: z.number().int().positive().optional(),
  rollups: spans.optional(),
  nnt: z.looseObject({ rollups: spans.optional() }).optional(),
  histogram: z.looseObject({ rollups: spans.optional() }).optional(),
  features: z.record(z.string(), z.unknown()).optional(),
  version: z.string().optional(),
  application: z.string().optional(),
});
export type WireNodeState = z.infer<typeof nodeStateSchema>;

/** A libmtev stats leaf: `{"_type": "s", "_value": "..."}`. */
const leaf = z.looseObject({ _type: z.string().optional(), _value: z.unknown() });

/** `GET /stats.json`: the tree's leaves the production client reads. */
export const nodeStatsSchema = z.looseObject({
  identity: leaf.optional(),
  semver: leaf.optional(),
  version: leaf.optional(),
  application: leaf.optional(),
  topology: z.looseObject({ current: leaf.optional(), next: leaf.optional() }).optional(),
});
export type WireNodeStats = z.infer<typeof nodeStatsSchema>;

/** `GET /locate/json/<uuid>/<metric>`: the key and the owner nodes, primary first. */
export const locateSchema = z.looseObject({
  key: z.string(),
  location: z.array(z.looseObject({ id: z.string(), address: z.string().optional(), port: z.number().optional(), apiport: z.number().optional(), weight: z.number().optional() })),
});
export type WireLocate = z.infer<typeof locateSchema>;

/** The hash a node reports when it has no topology (or no rebalance in progress, for `next`). */
export const NO_TOPOLOGY = '-';

/** `GET /replication/json` (tsnode's own): per peer, the journal not yet delivered; records received. */
export const replicationStatusSchema = z.looseObject({
  peers: z.array(
    z.looseObject({
      id: z.string(),
      url: z.string(),
      pending: z.number().int().nonnegative(),
      bytes: z.number().nonnegative(),
      oldest_offset: z.number().nullable(),
      lag_seconds: z.number().nonnegative(),
      paused: z.boolean(),
      last_error: z.string().nullable(),
      dead_letters: z.number().int().nonnegative(),
    }),
  ),
  received: z.looseObject({ clients: z.number(), peers: z.number() }),
});
export type ReplicationStatus = z.infer<typeof replicationStatusSchema>;

const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isAmount = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The same check as replicationStatusSchema, by hand: a sweep's lag checks read this answer from
 * every node of the ring, each listing every peer (n² entries), twice per run.
 */
export function isReplicationStatus(json: unknown): json is ReplicationStatus {
  if (!isObject(json) || !Array.isArray(json.peers) || !isObject(json.received)) return false;
  if (typeof json.received.clients !== 'number' || typeof json.received.peers !== 'number') return false;
  for (const p of json.peers as unknown[]) {
    if (!isObject(p) || typeof p.id !== 'string' || typeof p.url !== 'string' || typeof p.paused !== 'boolean') return false;
    if (!isCount(p.pending) || !isAmount(p.bytes) || !isAmount(p.lag_seconds) || !isCount(p.dead_letters)) return false;
    if (p.oldest_offset !== null && (typeof p.oldest_offset !== 'number' || Number.isNaN(p.oldest_offset))) return false;
    if (p.last_error !== null && typeof p.last_error !== 'string') return false;
  }
  return true;
}

/**
 * `GET /gossip/json` (circonus/irondb-docs api/gossip-json): one entry per node, the answering
 * node's own first. `latency` maps a peer's id to how many seconds that peer is behind this node
 * (strings with decimals, as the store sends them; numbers accepted too).
 */
export const gossipSchema = z.array(
  z.looseObject({
    id: z.string(),
    latency: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  }),
);
export type WireGossip = z.infer<typeof gossipSchema>;

/**
 * Wire shapes of the cluster endpoints as the client reads them: `GET /state`, `GET /stats.json`
 * and `GET /locate/json/<uuid>/<metric>` (circonus/irondb-docs api/state, locate-json; the
 * stats tree as gosnowth reads it). Loose: a production node reports far more than these
 * members, and only what is read here is checked.
 */
import type { z } from 'zod';
import type { gossipSchema, locateSchema, nodeStateSchema, nodeStatsSchema, replicationStatusSchema } from './schemas.js';
import { isJsonObject } from './json-object.js';
/** `GET /state`: the members tsnode uses (nodeStateSchema, schemas.ts). */
export type WireNodeState = z.infer<typeof nodeStateSchema>;

/** `GET /stats.json`: the leaves the production client reads (nodeStatsSchema). */
export type WireNodeStats = z.infer<typeof nodeStatsSchema>;

/** `GET /locate/json/<uuid>/<metric>` (locateSchema). */
export type WireLocate = z.infer<typeof locateSchema>;

/** The hash a node reports when it has no topology (or no rebalance in progress, for `next`). */
export const NO_TOPOLOGY = '-';

/** `GET /replication/json` (replicationStatusSchema). */
export type ReplicationStatus = z.infer<typeof replicationStatusSchema>;

const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isAmount = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/**
 * The same check as replicationStatusSchema, by hand: a sweep's lag checks read this answer from
 * every node of the ring, each listing every peer (n² entries), twice per run.
 */
export function isReplicationStatus(json: unknown): json is ReplicationStatus {
  if (!isJsonObject(json) || !Array.isArray(json.peers) || !isJsonObject(json.received)) return false;
  if (typeof json.received.clients !== 'number' || typeof json.received.peers !== 'number') return false;
  for (const p of json.peers as unknown[]) {
    if (!isJsonObject(p) || typeof p.id !== 'string' || typeof p.url !== 'string' || typeof p.paused !== 'boolean') return false;
    if (!isCount(p.pending) || !isAmount(p.bytes) || !isAmount(p.lag_seconds) || !isCount(p.dead_letters)) return false;
    if (p.oldest_offset !== null && (typeof p.oldest_offset !== 'number' || Number.isNaN(p.oldest_offset))) return false;
    if (p.last_error !== null && typeof p.last_error !== 'string') return false;
  }
  return true;
}

const isSpanList = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === 'number' && Number.isInteger(x) && x > 0);
const optional = (v: unknown, check: (v: unknown) => boolean): boolean => v === undefined || check(v);
const isString = (v: unknown): boolean => typeof v === 'string';
const withRollups = (v: unknown): boolean => isJsonObject(v) && optional(v.rollups, isSpanList);

/**
 * The same check as nodeStateSchema, by hand: every command that finds its nodes (`--nodes`, a
 * seed, a profile) asks each for `/state` first, and loading zod for that costs a short `read` or
 * `write` more than the answer does.
 */
export function isWireNodeState(json: unknown): json is WireNodeState {
  if (!isJsonObject(json) || typeof json.identity !== 'string' || json.identity.length === 0) return false;
  if (!optional(json.current, isString) || !optional(json.next, isString) || !optional(json.version, isString) || !optional(json.application, isString)) return false;
  if (!optional(json.base_rollup, (v) => typeof v === 'number' && Number.isInteger(v) && v > 0) || !optional(json.rollups, isSpanList)) return false;
  return optional(json.nnt, withRollups) && optional(json.histogram, withRollups) && optional(json.features, isJsonObject);
}

/** `GET /gossip/json` (gossipSchema). */
export type WireGossip = z.infer<typeof gossipSchema>;

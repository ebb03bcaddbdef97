/**
 * The zod schemas of the node's answers, in one module of their own so that loading the protocol
 * (protocol/index.ts) does not load zod: a client loads this when an answer needs checking by
 * schema (client/answer-schemas.ts), so a `read` whose answers pass the hand checks never pays
 * zod's start-up (bench/read.bench.mjs). The types these give live beside their endpoints.
 */
import { z } from 'zod';
import { ROLLUP_MEMBERS, type RollupMember } from './types.js';

/**
 * `GET /sweep_delete` on the wire: every attribute is a string (`"running":"true"`).
 * Unknown attributes from newer nodes are kept, not rejected.
 */
const wireTypeStatusSchema = z.record(z.string(), z.string()).refine((o) => o.running === 'true' || o.running === 'false', {
  message: 'running must be the string "true" or "false"',
});
export const wireSweepStatusSchema = z.looseObject({
  nnt: wireTypeStatusSchema,
  text: wireTypeStatusSchema,
  histogram: wireTypeStatusSchema,
});

/** `[[seconds, number|null], ...]` and the `type=all` rows. */
const value = z.number().nullable();
export const rollupRowsSchema = z.array(z.tuple([z.number(), value]));
const allObject = z.looseObject(Object.fromEntries(ROLLUP_MEMBERS.map((m) => [m, value.optional()])) as Record<RollupMember, z.ZodOptional<typeof value>>);
export const rollupAllRowsSchema = z.array(z.tuple([z.number(), allObject.nullable()]));

/** Shard lists (shards.ts). */
const seconds = z.number().int().nonnegative();

const nntShard = z
  .looseObject({ block_floor: seconds, block_ceiling: seconds.optional(), 'block:ceiling': seconds.optional(), mode: z.string().optional() })
  .refine((s) => s.block_ceiling !== undefined || s['block:ceiling'] !== undefined, { message: 'a shard needs block_ceiling (or block:ceiling)' });

export const nntShardListSchema = z.array(z.looseObject({ period: z.number().int().positive(), shard: z.array(nntShard) }));
export const startEndShardListSchema = z.array(z.looseObject({ start: seconds, end: seconds }));

const spanSeconds = z.record(z.string().regex(/^\d+$/), seconds);

/** The `/state` members read for retention: the rollups' file systems and the configured retention. */
export const stateStorageSchema = z.looseObject({
  nntbs: z.record(z.string(), z.unknown()).optional(),
  retention: z
    .looseObject({ nnt: spanSeconds.optional(), histogram: spanSeconds.optional(), raw: seconds.nullable().optional(), histogram_raw: seconds.nullable().optional() })
    .nullable()
    .optional(),
});

/** One metric of a tag-query delete answer. `payload`: the reference node puts the check uuid there. */
export const deleteResultRowSchema = z.looseObject({
  metric_name: z.string(),
  delete_result: z.string(),
  payload: z.unknown().optional(),
});
export const deleteAnswerSchema = z.array(deleteResultRowSchema);

/** One metric of a find answer. `type`: `numeric`, `text`, `histogram`, or a comma list of them. */
export const foundMetricSchema = z.looseObject({
  uuid: z.string(),
  metric_name: z.string(),
  category: z.string().optional(),
  type: z.string().optional(),
  account_id: z.number().optional(),
});
export const findAnswerSchema = z.array(foundMetricSchema);
export const findCountSchema = z.looseObject({ count: z.number().int().nonnegative(), estimate: z.boolean().optional() });
/** `DELETE /full/canonical/<uuid>/<metric>`: only `succeeded` is success. */
export const canonicalDeleteSchema = z.looseObject({ status: z.literal('succeeded') });

/** Cluster endpoints (cluster.ts). */
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

/** `GET /locate/json/<uuid>/<metric>`: the key and the owner nodes, primary first. */
export const locateSchema = z.looseObject({
  key: z.string(),
  location: z.array(z.looseObject({ id: z.string(), address: z.string().optional(), port: z.number().optional(), apiport: z.number().optional(), weight: z.number().optional() })),
});

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

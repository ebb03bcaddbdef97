/**
 * How large an answer to each request may be. A node (or whatever answers at its address) that
 * sends more is cut off with code `too_large` instead of growing the client's memory without
 * end. The caps are sized from the largest answer a correct node can give to that request.
 */
import type { RollupQuery } from '../protocol/index.js';

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * Sweep status (and cancel): three small objects of strings. The longest legitimate one carries
 * two `<uuid>-<metric>` names; 256 KiB holds metric names of tens of KiB each many times over.
 */
export const STATUS_ANSWER_BYTES = 256 * KiB;

/**
 * `/gossip/json`: an entry per node, each with a latency per peer (about 60 bytes each). A
 * thousand-node ring is a million latencies, about 60 MiB: 64 MiB holds it.
 */
export const GOSSIP_ANSWER_BYTES = 64 * MiB;

/** A write acknowledgement: `{"records": N}` or an empty body; an error object naming a record. */
export const WRITE_ANSWER_BYTES = 256 * KiB;

/** Text and histogram read-backs (reference-node extensions, used by tests and the demo). */
export const READ_BACK_ANSWER_BYTES = 256 * MiB;

/**
 * One row of a rollup answer at its longest: `[1700000000.125,-1.2345678901234567e-300]` is 45
 * bytes, a `type=all` row with eleven such members about 520, and a node may pretty-print (an
 * indented row of `all` is under 640 bytes). The allowance is generous on purpose: it only has
 * to stop an answer that is not a rollup of this range at all.
 */
const ROLLUP_ROW_BYTES = 96;
const ROLLUP_ALL_ROW_BYTES = 640;
/** Room for whatever surrounds the rows (whitespace, a header-less wrapper): fixed. */
const ROLLUP_SLACK_BYTES = 1 * MiB;

/** Buckets a correct node returns for this read: every bucket from the floored start to the (exclusive) end. */
export function rollupBuckets(q: Pick<RollupQuery, 'startMs' | 'endMs' | 'spanMs'>): number {
  if (!(q.spanMs > 0) || !(q.endMs > q.startMs)) return 1;
  return Math.floor((q.endMs - 1) / q.spanMs) - Math.floor(q.startMs / q.spanMs) + 1;
}

/**
 * The largest answer accepted for a rollup read: its buckets at the longest row, plus slack.
 * A year of 60 s buckets (525,600 rows) may take 49 MiB, of `type=all` 322 MiB; a day of 60 s
 * buckets 1.1 MiB.
 */
export function rollupAnswerBytes(q: Pick<RollupQuery, 'startMs' | 'endMs' | 'spanMs' | 'type'>): number {
  const perRow = q.type === 'all' ? ROLLUP_ALL_ROW_BYTES : ROLLUP_ROW_BYTES;
  return ROLLUP_SLACK_BYTES + rollupBuckets(q) * perRow;
}

/**
 * A tag-query answer (find, or a delete's per-metric list): at most `limit` rows (the advisory
 * limit the client sends), each a metric name of under 4,095 characters (JSON-escaped at worst six
 * bytes each) with a few short fields, plus slack. A count is a small object.
 */
export function tagAnswerBytes(limit: number): number {
  return 1 * MiB + limit * (4096 * 6 + 256);
}

/**
 * A shard inventory (`/list_nntbs_shards`, `/raw/list_shards`, ...): about 90 bytes a shard when
 * pretty-printed. 16 MiB holds 180,000 shards: a day-sized shard per period for 490 years.
 */
export const INVENTORY_ANSWER_BYTES = 16 * MiB;

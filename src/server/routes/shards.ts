/**
 * The shard inventories, in the store's shapes (product-docs static/yaml/administration.yaml):
 * `GET /list_nntbs_shards`, `GET /raw/list_shards`, `GET /histogram_raw/list_shards` and
 * `GET /histogram/<period>/list_shards`. Only shards that hold data are listed; every one is
 * `online` (the reference node has no shard maintenance modes).
 */
import { ProtocolError } from '../../protocol/index.js';
import { decodePathPart, sendJson } from '../http.js';
import type { ShardSpan } from '../shards.js';
import type { Handler } from './context.js';

const startEnd = (shards: ShardSpan[]): Array<{ start: number; end: number }> => shards.map(({ start, end }) => ({ start, end }));

/** `[{period, shard: [{block_floor, "block:ceiling", mode}]}]`, one entry per numeric period (the key is spelled as the store's spec spells it). */
export const listNntbsShards: Handler = (_req, res, _target, node) => {
  const body = node.store.rollups.map((period) => ({
    period,
    shard: node.store.listShards('nnt', period).map((s) => ({ block_floor: s.start, 'block:ceiling': s.end, mode: 'online' })),
  }));
  sendJson(res, 200, JSON.stringify(body));
};

/** `[{start, end}]`: the raw numeric shards. */
export const listRawShards: Handler = (_req, res, _target, node) => {
  sendJson(res, 200, JSON.stringify(startEnd(node.store.listShards('raw', 0))));
};

/**
 * `[{start, end}]`: the raw histogram shards, `--raw-shard` sized (the store's histogram_ingest
 * granularity) over the histograms of the smallest histogram period, which are kept as received.
 */
export const listHistogramRawShards: Handler = (_req, res, _target, node) => {
  sendJson(res, 200, JSON.stringify(startEnd(node.store.listShards('histogram_raw', 0))));
};

/** `[{start, end}]`: the histogram shards of one period. */
export const listHistogramShards: Handler = (_req, res, target, node) => {
  const text = decodePathPart(target.segments[1]!, 'period');
  const period = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
  if (!node.store.histogramRollups.includes(period)) {
    throw new ProtocolError(404, 'not_found', `period: ${JSON.stringify(text)} is not a histogram period of this node (allowed: ${node.store.histogramRollups.join(', ')})`, {
      field: 'period',
      value: text,
      allowed: [...node.store.histogramRollups],
    });
  }
  sendJson(res, 200, JSON.stringify(startEnd(node.store.listShards('histogram', period))));
};

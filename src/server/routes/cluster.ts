/**
 * The node's cluster endpoints, shaped as the store answers them (circonus/irondb-docs api/state,
 * topology-json, topology-xml, gossip-json, locate-json) and as its production client reads them
 * (gosnowth: /stats.json first, then /topology/xml/<hash>; /gossip/json to judge liveness):
 *
 * - `GET /state`: identity, topology hashes, rollup spans, features, version.
 * - `GET /stats.json`: the same facts as a libmtev stats tree (`{"_type": "s", "_value": ...}` leaves).
 * - `GET /topology/json/<hash>`, `GET /topology/xml/<hash>` (and without a hash: the current one).
 * - `GET /gossip/json`: this node's own gossip entry (the reference node does not gossip).
 * - `GET /locate/json/<uuid>/<metric>`, `GET /locate/xml/<uuid>/<metric>`: the metric's owners on the ring.
 * - `GET /toporing/json/<hash>`: the ring's slots; `GET /capa.json`: the node's features.
 *
 * Field names and types follow the store's OpenAPI specs (circonus/product-docs,
 * static/yaml/administration.yaml and developer.yaml); test/compat/spec-shapes.test.ts holds them to it.
 *
 * Numbers the store reports as strings (gossip times, feature flags) are strings here too: the
 * production client decodes them as strings and fails on anything else.
 */
import type { ServerResponse } from 'node:http';
import { ProtocolError } from '../../protocol/index.js';
import { metricKey, ringSlots, topologyToNodeArray, topologyToXml, type Ring, type RingNode } from '../../ring/index.js';
import { fileSystemSpace, type FileSystemSpace } from '../fs-space.js';
import { decodePathPart, sendJson } from '../http.js';
import { NODE_VERSION } from '../identity.js';
import { retentionJson } from '../retention-keeper.js';
import type { Handler, NodeContext } from './context.js';
import { metricParam, uuidParam } from './rollup.js';

export const APPLICATION = 'tsnode';

/** Features as the store lists them: every value the string "1". */
const FEATURES = { 'nnt:store': '1', 'text:store': '1', 'histogram:store': '1', 'nnt:second_order': '1', features: '1' } as const;

/**
 * `rollup_<period>` entries of `/state` (administration.yaml StateResponse): each span's file
 * system, the data dir's, when the node keeps one (a --memory node has no file system to report).
 */
function perRollup(periods: readonly number[], fs: FileSystemSpace | undefined): Record<string, { fs: FileSystemSpace }> {
  return fs ? Object.fromEntries(periods.map((p) => [`rollup_${p}`, { fs }])) : {};
}

/** GET /state */
export const nodeState: Handler = (_req, res, _target, node) => {
  const { id, current } = node.identity;
  const rollups = node.store.rollups;
  const histogramRollups = node.store.histogramRollups;
  const fs = fileSystemSpace(node.config.dataDir);
  const body = {
    identity: id,
    current,
    next: '-',
    base_rollup: rollups[0],
    rollups,
    nnt: { rollups },
    nntbs: { rollups, ...perRollup(rollups, fs) },
    text: fs ? { fs } : {},
    histogram: { rollups: histogramRollups, ...perRollup(histogramRollups, fs) },
    // tsnode extension: the node-managed retention (`serve --retention`), in seconds.
    ...(node.config.retention ? { retention: retentionJson(node.config.retention, histogramRollups[0]) } : {}),
    features: FEATURES,
    version: `${APPLICATION} ${NODE_VERSION}`,
    application: APPLICATION,
    ...peerLag(node),
  };
  sendJson(res, 200, JSON.stringify(body));
};

/**
 * `/state` max_peer_lag / avg_peer_lag (seconds): how far this node's own data is behind its
 * peers, as the peers report it in their gossip (their journal's lag towards this node). 0 on a
 * node without peers, and while no peer has been heard from (replication/gossip.ts).
 */
function peerLag(node: NodeContext): { max_peer_lag: number; avg_peer_lag: number } {
  const lag = node.replication?.ownLag();
  return { max_peer_lag: lag?.max ?? 0, avg_peer_lag: lag?.avg ?? 0 };
}

/** GET /capa.json (administration.yaml CapaResponse): the node's features; no libmtev, no modules. */
export const capaJson: Handler = (_req, res, _target, node) => {
  const body = { mtev_version: `none (${APPLICATION} ${NODE_VERSION})`, features: FEATURES, current_time: Math.floor(node.config.now()), modules: {} };
  sendJson(res, 200, JSON.stringify(body));
};

const leaf = (value: string): { _type: 's'; _value: string } => ({ _type: 's', _value: value });

/** GET /stats.json: the leaves gosnowth reads (identity, semver, topology.current/next) and a few more. */
export const nodeStats: Handler = (_req, res, _target, node) => {
  const { id, current } = node.identity;
  const body = {
    application: leaf(APPLICATION),
    identity: leaf(id),
    version: leaf(`${APPLICATION} ${NODE_VERSION}`),
    semver: leaf(NODE_VERSION),
    topology: { current: leaf(current), next: leaf('-') },
  };
  sendJson(res, 200, JSON.stringify(body));
};

/** The topology the path names (or the current one when it names none); 404 JSON otherwise. */
function requestedRing(node: NodeContext, rawHash: string | undefined, path: string): NonNullable<NodeContext['identity']['ring']> {
  const ring = node.identity.ring;
  if (!ring) {
    throw new ProtocolError(404, 'not_found', `this node runs without a topology (it was started without --topology), so it has no ${path}`, {
      current: '-',
      hint: 'start the node with `tsnode serve --topology <file>` (tsnode cluster up does)',
    });
  }
  if (rawHash === undefined) return ring;
  const hash = decodePathPart(rawHash, 'hash').toLowerCase();
  if (hash !== ring.hash) {
    throw new ProtocolError(404, 'not_found', `no topology ${JSON.stringify(hash.slice(0, 80))} on this node; its current topology is ${ring.hash}`, {
      field: 'hash',
      current: ring.hash,
    });
  }
  return ring;
}

/** GET /topology/json[/<hash>] */
export const topologyJson: Handler = (_req, res, target, node) => {
  const ring = requestedRing(node, target.segments[2], '/topology/json');
  sendJson(res, 200, JSON.stringify(topologyToNodeArray(ring.topology)));
};

function sendXml(res: ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'text/xml; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(body);
}

/** GET /topology/xml[/<hash>] */
export const topologyXml: Handler = (_req, res, target, node) => {
  const ring = requestedRing(node, target.segments[2], '/topology/xml');
  sendXml(res, topologyToXml(ring.topology));
};

/**
 * GET /gossip/json: this node's own entry (its `latency` map: how far each peer is behind in
 * receiving this node's journal, seconds as strings), then, on a replicating node, an entry per peer
 * heard from, as that peer last described itself, its `gossip_age` the time since. The production
 * client looks for the entry of the node it asks, with a `gossip_age` of at most 10 seconds.
 */
export const gossipJson: Handler = (_req, res, _target, node) => {
  const { id, current } = node.identity;
  const nowMs = node.config.now();
  const entry = {
    id,
    gossip_time: (nowMs / 1000).toFixed(6),
    gossip_age: '0.000000',
    topo_current: current,
    topo_next: '-',
    topo_state: 'n/a',
    latency: node.replication?.latencyMap() ?? {},
  };
  const entries: object[] = [entry];
  // A replicating node lists its peers as it last heard them (replication/gossip.ts); one never heard
  // from has gossip_time 0 (its age: the whole epoch), as a store node shows a peer it never heard.
  for (const peer of node.replication?.peers.keys() ?? []) {
    const heard = node.replication!.gossip.heard.get(peer) ?? { gossipTime: '0.000000', heardAt: 0, latency: new Map<string, number>() };
    entries.push({
      id: peer,
      gossip_time: heard.gossipTime,
      gossip_age: (Math.max(0, nowMs - heard.heardAt) / 1000).toFixed(6),
      topo_current: current,
      topo_next: '-',
      topo_state: 'n/a',
      latency: Object.fromEntries([...heard.latency].map(([k, v]) => [k, String(v)])),
    });
  }
  sendJson(res, 200, JSON.stringify(entries));
};

/** The metric of a `/locate/<form>/<uuid>/<metric>` path and its owners, primary first. */
function located(target: Parameters<Handler>[2], node: NodeContext, path: string): { uuid: string; metric: string; ring: Ring; owners: RingNode[] } {
  const [, , rawUuid, ...rawMetric] = target.segments;
  const uuid = uuidParam(rawUuid!);
  const metric = metricParam(rawMetric);
  const ring = requestedRing(node, undefined, path);
  return { uuid, metric, ring, owners: ring.ownersOf(uuid, metric) };
}

/** GET /locate/json/<uuid>/<metric> */
export const locateJson: Handler = (_req, res, target, node) => {
  const { uuid, metric, ring, owners } = located(target, node, '/locate/json');
  // Primary first, as placement orders them; each node object as /topology/json shows it.
  const byId = new Map(topologyToNodeArray(ring.topology).map((n) => [n.id, n]));
  const location = owners.map((owner) => byId.get(owner.id)!);
  sendJson(res, 200, JSON.stringify({ key: metricKey(uuid, metric), location }));
};

/**
 * GET /locate/xml/<uuid>/<metric> (api/locate-xml.md; gosnowth's LocateMetricRemote): the
 * owners, primary first, in the topology's XML form (`<nodes n=".." write_copies="..">`).
 */
export const locateXml: Handler = (_req, res, target, node) => {
  const { ring, owners } = located(target, node, '/locate/xml');
  sendXml(res, topologyToXml({ writeCopies: ring.topology.writeCopies, nodes: owners }));
};

/** GET /toporing/json/<hash> (administration.yaml TopoRingDataResponse): every slot, in ring order. */
export const topoRingJson: Handler = (_req, res, target, node) => {
  const ring = requestedRing(node, target.segments[2], '/toporing/json');
  sendJson(res, 200, JSON.stringify(ringSlots(ring.topology)));
};

/**
 * Replication lag on a replicating ring, per node: how far behind its data is (`/state`
 * `max_peer_lag`) and which peers still hold journaled data for it (their `/replication/json`,
 * the reference node's; a node without it: its `/gossip/json`, whose own entry's `latency` says
 * how many seconds it is behind each peer, as the store's docs define it).
 * A sweep reads it before (a node with data in flight towards it is refused unless the caller
 * allows that much lag) and after (a node whose sweep finished while data was still on its way, or
 * whose own status counts records below the cut-off that arrived since, ends `late_data`).
 * Nothing here prints; a node that reports nothing is `checked: false`, never "no lag".
 */
import { fanOut } from './fan-out.js';
import type { CallOptions, NodeClient } from './node-client.js';
import { peerLagOf } from './discovery.js';
import { NodeHttpError } from './errors.js';
import type { DataType, SweepStatus } from '../protocol/index.js';
import type { WireGossip } from '../protocol/cluster.js';

/** A peer whose journal still holds records for a node. */
export interface LagFrom {
  /** The peer's URL (as the run reaches it). */
  node: string;
  id: string;
  pending: number;
  lagSeconds: number;
  paused: boolean;
  /** `gossip`: read from the node's `/gossip/json` (seconds behind that peer; no record count). */
  via?: 'replication' | 'gossip';
}

export interface NodeLag {
  node: string;
  /** Its identity (`/state`), null when it did not answer. */
  id: string | null;
  /** How far its data is behind (the largest of its own `max_peer_lag` and its peers' journal ages); null when nothing reports it. */
  lagSeconds: number | null;
  /** Records its peers' journals still hold for it. */
  pending: number;
  from: LagFrom[];
  /** Whether anything reported this node's lag (its own `/state`, or a peer's `/replication/json`). */
  checked: boolean;
  /** Why its own lag could not be read. */
  error?: string;
}

export interface LagReport {
  nodes: NodeLag[];
  /** Whether any node reported lag at all (false: a store that does not report it; nothing was checked). */
  checked: boolean;
}

/** Whether data is on its way to the node: pending in a peer's journal, or a lag above zero. */
export function hasLag(n: NodeLag): boolean {
  return n.pending > 0 || (n.lagSeconds ?? 0) > 0;
}

/** `12.5s behind: 120 records pending at http://b (replication paused)`, or `no lag`. */
export function describeLag(n: NodeLag): string {
  if (!n.checked) return 'lag not reported';
  if (!hasLag(n)) return 'no lag';
  const parts = n.from.map((f) =>
    f.via === 'gossip'
      ? `data from ${f.node} (${f.lagSeconds.toFixed(1)}s, its gossip)`
      : `${f.pending} record${f.pending === 1 ? '' : 's'} pending at ${f.node}${f.paused ? ' (replication paused)' : ''}`,
  );
  return `${(n.lagSeconds ?? 0).toFixed(1)}s behind${parts.length ? `: ${parts.join(', ')}` : ''}`;
}

/**
 * One node's own lag as its `/state` reports it (`max_peer_lag`, seconds), else as its own
 * `/gossip/json` entry does (the largest of its latencies): null when it answers neither, or
 * reports no such field (unknown is never 0).
 */
export async function readOwnLag(c: NodeClient, call: CallOptions = {}): Promise<number | null> {
  try {
    const state = await c.nodeState(call);
    const own = peerLagOf(state);
    if (own !== null) return own;
    const latency = ownLatency(await c.gossip(call), state.identity.toLowerCase());
    return latency && latency.size ? Math.max(...latency.values()) : null;
  } catch {
    return null;
  }
}

/**
 * Reads every node's lag: each node's `/state` and `/replication/json` (a 404 there is a node that
 * does not replicate, or the store: then its `/gossip/json` is read), in parallel. `clients` should
 * be the whole ring: a peer left out cannot say what it still holds.
 */
export async function readReplicationLag(clients: readonly NodeClient[], opts: { concurrency?: number; call?: CallOptions } = {}): Promise<LagReport> {
  const call: CallOptions = { ...opts.call, probe: true };
  const answers = await fanOut(
    clients,
    async (c) => {
      // A 404: a node that does not replicate (or a store without the endpoint).
      const replication = c.replicationStatus(call).catch((err: unknown) => {
        if (err instanceof NodeHttpError && err.status === 404) return null;
        throw err;
      });
      const [state, journals] = await Promise.all([c.nodeState(call), replication]);
      const id = state.identity.toLowerCase();
      // Without the journals, the node's own gossip entry: a store that answers none is not checked by it.
      const gossip =
        journals === null
          ? await c.gossip(call).then(
              (g) => ownLatency(g, id),
              () => null,
            )
          : null;
      return { id, own: peerLagOf(state), replication: journals, gossip };
    },
    { concurrency: opts.concurrency ?? 32 },
  );
  const nodes: NodeLag[] = answers.map((a) =>
    a.ok
      ? { node: a.node, id: a.value.id, lagSeconds: a.value.own, pending: 0, from: [], checked: a.value.own !== null }
      : { node: a.node, id: null, lagSeconds: null, pending: 0, from: [], checked: false, error: a.error.message },
  );
  const byId = new Map(nodes.filter((n) => n.id !== null).map((n) => [n.id!, n]));
  for (const a of answers) {
    if (!a.ok) continue;
    if (a.value.gossip) addGossipLag(byId.get(a.value.id)!, a.value.gossip, byId);
    if (a.value.replication === null) continue;
    for (const peer of a.value.replication.peers) {
      const target = byId.get(peer.id.toLowerCase());
      if (!target) continue;
      target.checked = true;
      if (peer.pending === 0 && peer.lag_seconds === 0) continue;
      target.from.push({ node: a.node, id: a.value.id, pending: peer.pending, lagSeconds: peer.lag_seconds, paused: peer.paused ?? false, via: 'replication' });
      target.pending += peer.pending;
      target.lagSeconds = Math.max(target.lagSeconds ?? 0, peer.lag_seconds);
    }
  }
  for (const n of nodes) if (n.checked) n.lagSeconds ??= 0;
  return { nodes, checked: nodes.some((n) => n.checked) };
}

/** The node's own gossip entry's latencies (peer id -> seconds it is behind that peer); null when it has no entry of its own. */
function ownLatency(gossip: WireGossip, id: string): Map<string, number> | null {
  const own = gossip.find((e) => e.id.toLowerCase() === id);
  if (!own) return null;
  const latency = new Map<string, number>();
  for (const [peer, raw] of Object.entries(own.latency ?? {})) {
    const seconds = typeof raw === 'number' ? raw : raw.trim() === '' ? NaN : Number(raw);
    if (Number.isFinite(seconds) && seconds >= 0) latency.set(peer.toLowerCase(), seconds);
  }
  return latency;
}

/** A node's lag from its gossip: checked once it names any peer; each peer it is behind, by URL when that peer is in the run. */
function addGossipLag(node: NodeLag, latency: ReadonlyMap<string, number>, byId: ReadonlyMap<string, NodeLag>): void {
  if (latency.size === 0) return;
  node.checked = true;
  for (const [peer, seconds] of latency) {
    if (seconds === 0) continue;
    node.from.push({ node: byId.get(peer)?.node ?? peer, id: peer, pending: 0, lagSeconds: seconds, paused: false, via: 'gossip' });
    node.lagSeconds = Math.max(node.lagSeconds ?? 0, seconds);
  }
}

/** Records below the cut-off that reached a node after its sweep of these types began, as its status counts them (0 when it does not say). */
export function lateRecords(status: SweepStatus | undefined, types: readonly DataType[]): { records: number; oldest: number | null } {
  let records = 0;
  let oldest: number | null = null;
  for (const t of types) {
    const last = status?.[t]?.last;
    if (!last?.lateRecords) continue;
    records += last.lateRecords;
    if (last.lateOldest !== undefined) oldest = oldest === null ? last.lateOldest : Math.min(oldest, last.lateOldest);
  }
  return { records, oldest };
}

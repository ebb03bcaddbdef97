/**
 * A ring node's replication: a journal and a replayer per peer, what the node hears through gossip,
 * and the counters `GET /replication/json` shows. The write routes ask it where each record goes
 * (routeRecords) and journal the other owners' share before they acknowledge (see routes/write.ts).
 */
import { join } from 'node:path';
import type { Ring, RingNode } from '../../ring/index.js';
import { Gossip } from './gossip.js';
import { PeerJournal } from './journal.js';
import type { JournalEntry } from './payload.js';
import { Replayer, Slots } from './replayer.js';

export interface ReplicationConfig {
  selfId: string;
  ring: Ring;
  /** One sub-directory per peer, named by its id. */
  journalDir: string;
  /** Records per replayed batch (at most). */
  batchRecords: number;
  /** Batches in flight at once, across all peers. */
  concurrency: number;
  /** Bytes per replayed batch (at most; the peers' body limit). */
  maxBatchBytes: number;
  gossipIntervalMs: number;
  now: () => number;
  onNotice: (message: string) => void;
}

/** One peer as `GET /replication/json` shows it (a fixed contract: scripts read these keys). */
export interface PeerReplication {
  id: string;
  url: string;
  pending: number;
  bytes: number;
  oldest_offset: number | null;
  lag_seconds: number;
  paused: boolean;
  last_error: string | null;
  dead_letters: number;
}

export interface ReplicationJson {
  peers: PeerReplication[];
  received: { clients: number; peers: number };
}

interface Peer {
  node: RingNode;
  url: string;
  replayer: Replayer;
}

/** The URL a ring node's API answers at. */
export function nodeUrl(node: Pick<RingNode, 'address' | 'apiport'>): string {
  return `http://${node.address.includes(':') ? `[${node.address}]` : node.address}:${node.apiport}`;
}

/** Where the records of one write go: the indexes this node keeps, and those each peer gets. */
export interface RecordRoutes {
  local: number[];
  peers: Map<string, number[]>;
}

export class Replication {
  readonly peers = new Map<string, Peer>();
  readonly received = { clients: 0, peers: 0 };
  readonly gossip: Gossip;

  constructor(private readonly cfg: ReplicationConfig) {
    const slots = new Slots(cfg.concurrency);
    for (const node of cfg.ring.topology.nodes) {
      const id = node.id.toLowerCase();
      if (id === cfg.selfId) continue;
      const url = nodeUrl(node);
      const journal = new PeerJournal(join(cfg.journalDir, id), cfg.onNotice);
      const replayer = new Replayer(journal, { selfId: cfg.selfId, peerUrl: url, batchRecords: cfg.batchRecords, maxBatchBytes: cfg.maxBatchBytes, slots, onNotice: cfg.onNotice });
      this.peers.set(id, { node, url, replayer });
    }
    this.gossip = new Gossip(
      [...this.peers.entries()].map(([id, p]) => ({ id, url: p.url })),
      cfg.gossipIntervalMs,
      cfg.now,
    );
  }

  get selfId(): string {
    return this.cfg.selfId;
  }

  start(): void {
    for (const p of this.peers.values()) p.replayer.start();
    this.gossip.start();
  }

  async close(): Promise<void> {
    this.gossip.stop();
    await Promise.all([...this.peers.values()].map((p) => p.replayer.stop()));
    for (const p of this.peers.values()) p.replayer.journal.close();
  }

  /** The owners of a metric, primary first. */
  owners(uuid: string, metric: string): RingNode[] {
    return this.cfg.ring.ownersOf(uuid, metric);
  }

  /**
   * Sorts the records of one write by owner: `seriesOf(i)` names record i's series (records of one
   * series must share its key, so owners are computed once per series).
   */
  routeRecords(count: number, seriesOf: (i: number) => { key: number | string; uuid: string; metric: string }): RecordRoutes {
    const routes: RecordRoutes = { local: [], peers: new Map() };
    const bySeries = new Map<number | string, { local: boolean; peers: string[] }>();
    for (let i = 0; i < count; i++) {
      const s = seriesOf(i);
      let where = bySeries.get(s.key);
      if (!where) {
        const ids = this.owners(s.uuid, s.metric).map((n) => n.id.toLowerCase());
        where = { local: ids.includes(this.cfg.selfId), peers: ids.filter((id) => id !== this.cfg.selfId) };
        bySeries.set(s.key, where);
      }
      if (where.local) routes.local.push(i);
      for (const id of where.peers) {
        let list = routes.peers.get(id);
        if (!list) routes.peers.set(id, (list = []));
        list.push(i);
      }
    }
    return routes;
  }

  /** Journals an entry for a peer; returns once it survives a crash of this process. */
  journal(peerId: string, entry: JournalEntry): void {
    const peer = this.peers.get(peerId);
    if (!peer) throw new Error(`no peer ${peerId} in the topology`);
    peer.replayer.journal.append(entry);
    peer.replayer.wake();
  }

  /** Pauses or resumes replay towards a peer; false when it is no peer of this node. */
  setPaused(peerId: string, paused: boolean): boolean {
    const peer = this.peers.get(peerId.toLowerCase());
    if (!peer) return false;
    peer.replayer.paused = paused;
    if (!paused) peer.replayer.wake();
    return true;
  }

  /** Seconds since the oldest entry still to deliver to the peer was journaled (0 when none). */
  journalLag(peerId: string): number {
    const oldest = this.peers.get(peerId)?.replayer.journal.oldest;
    return oldest ? Math.max(0, (this.cfg.now() - oldest.journaledAt) / 1000) : 0;
  }

  status(): ReplicationJson {
    const peers: PeerReplication[] = [];
    for (const [id, p] of this.peers) {
      const j = p.replayer.journal;
      peers.push({
        id,
        url: p.url,
        pending: j.records,
        bytes: j.bytes,
        oldest_offset: j.oldest?.oldestOffset ?? null,
        lag_seconds: round3(this.journalLag(id)),
        paused: p.replayer.paused,
        last_error: p.replayer.lastError,
        dead_letters: j.deadLetters,
      });
    }
    return { peers, received: { ...this.received } };
  }

  /** This node's gossip latency map: each peer's lag in receiving this node's journal (seconds, as strings). */
  latencyMap(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const id of this.peers.keys()) out[id] = String(round3(this.journalLag(id)));
    return out;
  }

  /**
   * How far this node's own data is behind its peers: what each peer heard from reports about
   * this node (its latency entry for us). Peers never heard from are left out; null when none was.
   */
  ownLag(): { max: number; avg: number; peers: number } | null {
    const lags: number[] = [];
    for (const h of this.gossip.heard.values()) {
      const lag = h.latency.get(this.cfg.selfId);
      if (lag !== undefined) lags.push(lag);
    }
    if (lags.length === 0) return null;
    return { max: Math.max(...lags), avg: round3(lags.reduce((s, x) => s + x, 0) / lags.length), peers: lags.length };
  }

  /** How far a node is behind in receiving data (the worst any journal known here says); 0 for none known. */
  lagOf(nodeId: string): number {
    let lag = nodeId === this.cfg.selfId ? 0 : this.journalLag(nodeId);
    for (const [from, h] of this.gossip.heard) if (from !== nodeId) lag = Math.max(lag, h.latency.get(nodeId) ?? 0);
    if (nodeId === this.cfg.selfId) lag = Math.max(lag, this.ownLag()?.max ?? 0);
    return lag;
  }

  /** A peer's URL, or undefined. */
  urlOf(nodeId: string): string | undefined {
    return this.peers.get(nodeId)?.url;
  }
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

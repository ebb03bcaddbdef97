/**
 * A ring node's replication: a journal and a replayer per peer, what the node hears through gossip,
 * and the counters `GET /replication/json` shows. The write routes ask it where each record goes
 * (routeRecords) and journal the other owners' share before they acknowledge (see routes/write.ts).
 */
import { join } from 'node:path';
import type { Ring, RingNode } from '../../ring/index.js';
import { Gossip } from './gossip.js';
import { PeerJournal } from './journal.js';
import { PAUSED_FILE, readPaused, writePaused } from './pause-state.js';
import type { EntryHead } from './payload.js';
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

/** Some of a write's records: all of them, or these indexes (ascending). */
export type Selection = 'all' | number[];

/** Where the records of one write go: those this node keeps, those each peer gets, and how many this node does not own. */
export interface RecordRoutes {
  local: Selection;
  peers: Map<string, Selection>;
  misdirected: number;
}

/** Where a metric's records go from this node. One object per distinct set of owners, so routes compare by identity. */
interface Placement {
  local: boolean;
  peers: readonly string[];
}

/** Metrics whose placement is remembered (the oldest is forgotten first): placement hashes, and a write mostly repeats recent metrics. */
const PLACEMENT_CACHE = 65_536;

export class Replication {
  readonly peers = new Map<string, Peer>();
  readonly received = { clients: 0, peers: 0 };
  readonly gossip: Gossip;
  /** Placements by check UUID, then metric name (no key to build per lookup); `placed` counts them. */
  private readonly placements = new Map<string, Map<string, Placement>>();
  private placed = 0;
  private readonly placementKinds = new Map<string, Placement>();
  /** When every node owns every metric (write_copies >= nodes), the one placement there is. */
  private readonly everywhere: Placement | null;

  constructor(private readonly cfg: ReplicationConfig) {
    const slots = new Slots(cfg.concurrency);
    for (const node of cfg.ring.topology.nodes) {
      const id = node.id.toLowerCase();
      if (id === cfg.selfId) continue;
      const url = nodeUrl(node);
      const journal = new PeerJournal(join(cfg.journalDir, id), cfg.onNotice);
      const replayer = new Replayer(journal, { selfId: cfg.selfId, peerUrl: url, batchRecords: cfg.batchRecords, maxBatchBytes: cfg.maxBatchBytes, slots, onNotice: cfg.onNotice });
      const pause = readPaused(journal.dir);
      if (pause) {
        replayer.paused = true;
        cfg.onNotice(
          `replication to ${url} (${id}) stays paused${pause.since ? ` since ${pause.since}` : ''}, as recorded in ${join(journal.dir, PAUSED_FILE)}: \`tsnode cluster resume\` resumes it`,
        );
      }
      this.peers.set(id, { node, url, replayer });
    }
    this.everywhere = cfg.ring.topology.writeCopies >= cfg.ring.topology.nodes.length ? { local: true, peers: [...this.peers.keys()] } : null;
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

  /** Where a metric's records go from this node (remembered for the last PLACEMENT_CACHE metrics or so). */
  placementOf(uuid: string, metric: string): Placement {
    if (this.everywhere) return this.everywhere;
    let byMetric = this.placements.get(uuid);
    let p = byMetric?.get(metric);
    if (p) return p;
    // Sorted: the owners' order (which is primary) does not change where the records go.
    const ids = this.owners(uuid, metric)
      .map((n) => n.id.toLowerCase())
      .sort();
    const kind = ids.join(' ');
    p = this.placementKinds.get(kind);
    if (!p) this.placementKinds.set(kind, (p = { local: ids.includes(this.cfg.selfId), peers: ids.filter((id) => id !== this.cfg.selfId) }));
    if (this.placed >= PLACEMENT_CACHE) {
      // Forget the check placed first (all its metrics at once: it is bounded, not exact).
      const [oldest, its] = this.placements.entries().next().value!;
      this.placements.delete(oldest);
      this.placed -= its.size;
      if (oldest === uuid) byMetric = undefined;
    }
    if (!byMetric) this.placements.set(uuid, (byMetric = new Map<string, Placement>()));
    byMetric.set(metric, p);
    this.placed++;
    return p;
  }

  private placesOf(series: { id: readonly string[]; metric: readonly string[] }): Placement[] {
    return series.id.map((id, k) => this.placementOf(id, series.metric[k]!));
  }

  /**
   * Sorts the records of one write by owner: record i is of series `seriesOf(i)`, an index into
   * `series()`. When every series goes to the same owners (mostly so: on a ring of W nodes and W
   * copies always), every selection is 'all' and no record is looked at; when every node owns every
   * metric, not even the series are asked for.
   */
  routeRecords(count: number, series: () => { id: readonly string[]; metric: readonly string[] }, seriesOf: (i: number) => number): RecordRoutes {
    const places = this.everywhere ? [this.everywhere] : this.placesOf(series());
    const first = places[0];
    if (!first || places.every((p) => p === first)) {
      const peers = new Map<string, Selection>();
      for (const id of first?.peers ?? []) peers.set(id, 'all');
      return { local: !first || first.local ? 'all' : [], peers, misdirected: first && !first.local ? count : 0 };
    }
    const routes: RecordRoutes = { local: [], peers: new Map(), misdirected: 0 };
    const local = routes.local as number[];
    for (let i = 0; i < count; i++) {
      const where = places[seriesOf(i)]!;
      if (where.local) local.push(i);
      else routes.misdirected++;
      for (const id of where.peers) {
        let list = routes.peers.get(id) as number[] | undefined;
        if (!list) routes.peers.set(id, (list = []));
        list.push(i);
      }
    }
    return routes;
  }

  /** Journals an entry for a peer (its records the JSON pieces `json`); returns once it survives a crash of this process. */
  journal(peerId: string, head: EntryHead, json: readonly Uint8Array[]): void {
    const peer = this.peers.get(peerId);
    if (!peer) throw new Error(`no peer ${peerId} in the topology`);
    peer.replayer.journal.append(head, json);
    peer.replayer.wake();
  }

  /**
   * Pauses or resumes replay towards a peer, recorded durably first (a restart keeps it); false
   * when it is no peer of this node. Throws, changing nothing, when it cannot be recorded.
   */
  setPaused(peerId: string, paused: boolean): boolean {
    const peer = this.peers.get(peerId.toLowerCase());
    if (!peer) return false;
    writePaused(peer.replayer.journal.dir, paused, new Date(this.cfg.now()));
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

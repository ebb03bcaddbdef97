/**
 * What this node hears from its peers: every second it asks each peer for its `/gossip/json` and
 * keeps the peer's own entry (when it was heard from, and its `latency` map: how far behind each
 * node is in receiving that peer's journal). From these the node knows how far its own data is
 * behind (`/state` max_peer_lag / avg_peer_lag: what the peers report about it) and which owner of
 * a metric is the most up to date (the proxy's choice).
 */
import { callPeer } from './peer-call.js';

export interface HeardPeer {
  /** When this node last had an answer (epoch ms). */
  heardAt: number;
  /** The peer's own gossip_time, as it sent it. */
  gossipTime: string;
  /** The peer's latency map: node id -> seconds behind in receiving the peer's journal. */
  latency: Map<string, number>;
}

export class Gossip {
  readonly heard = new Map<string, HeardPeer>();
  private timer: NodeJS.Timeout | null = null;
  private inFlight = false;

  constructor(
    private readonly peers: ReadonlyArray<{ id: string; url: string }>,
    private readonly intervalMs: number,
    private readonly now: () => number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.round(), this.intervalMs);
    this.timer.unref();
    void this.round();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Asks every peer once (skipped while the last round is still out). */
  async round(): Promise<void> {
    if (this.inFlight) return;
    this.inFlight = true;
    try {
      await Promise.all(this.peers.map((p) => this.ask(p)));
    } finally {
      this.inFlight = false;
    }
  }

  private async ask(peer: { id: string; url: string }): Promise<void> {
    try {
      const answer = await callPeer({ method: 'GET', url: `${peer.url}/gossip/json`, timeoutMs: Math.max(500, this.intervalMs), maxAnswerBytes: 1024 * 1024 });
      if (answer.status !== 200) return;
      const entries = JSON.parse(answer.body.toString('utf8')) as unknown;
      if (!Array.isArray(entries)) return;
      const own = entries.find((e): e is Record<string, unknown> => typeof e === 'object' && e !== null && (e as { id?: unknown }).id === peer.id);
      if (!own) return;
      const latency = new Map<string, number>();
      if (typeof own.latency === 'object' && own.latency !== null) {
        for (const [id, v] of Object.entries(own.latency as Record<string, unknown>)) {
          const n = Number(v);
          if (Number.isFinite(n) && n >= 0) latency.set(id, n);
        }
      }
      this.heard.set(peer.id, { heardAt: this.now(), gossipTime: typeof own.gossip_time === 'string' ? own.gossip_time : '0', latency });
    } catch {
      // Not heard this round: its gossip_age grows.
    }
  }
}

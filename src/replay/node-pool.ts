import type { NodeClient } from '../client/node-client.js';
import type { ReplayEvent } from './types.js';

/** Round-robin over healthy nodes; a node that failed is skipped for a while, then tried again. */
export class NodePool {
  private cursor = 0;
  private readonly downUntil: number[];
  constructor(
    readonly clients: readonly NodeClient[],
    private readonly now: () => number,
    private readonly unhealthyMs: number,
    private readonly onEvent: (e: ReplayEvent) => void,
  ) {
    this.downUntil = clients.map(() => 0);
  }
  /** The next node to try for a batch that has already been refused by `tried`; undefined when every node was tried. */
  pick(tried: ReadonlySet<number>): number | undefined {
    const n = this.clients.length;
    const t = this.now();
    let fallback: number | undefined;
    for (let k = 0; k < n; k++) {
      const i = (this.cursor + k) % n;
      if (tried.has(i)) continue;
      if (this.downUntil[i]! <= t) {
        this.cursor = (i + 1) % n;
        return i;
      }
      if (fallback === undefined || this.downUntil[i]! < this.downUntil[fallback]!) fallback = i;
    }
    return fallback;
  }
  /** Whether node i failed within the last `unhealthyMs` (and since then has not taken a batch). */
  isDown(i: number): boolean {
    return this.downUntil[i]! > this.now();
  }
  down(i: number, error: string): void {
    const until = this.now() + this.unhealthyMs;
    if (this.downUntil[i]! <= this.now()) this.onEvent({ type: 'node-down', node: this.clients[i]!.url, error, untilMs: until });
    this.downUntil[i] = until;
  }
  up(i: number): void {
    if (this.downUntil[i]! > 0) {
      this.downUntil[i] = 0;
      this.onEvent({ type: 'node-up', node: this.clients[i]!.url });
    }
  }
}

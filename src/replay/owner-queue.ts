/**
 * Per-node batching for `--to owners`: the slices the ring routes to a node wait in that node's
 * queue until they fill a request (the same count and byte limits as any batch), so each node gets
 * full requests rather than a sliver of every input batch (each request costs a node a durable
 * write). Memory stays bounded: when all queues together hold more than `budget` bytes, the
 * fullest is sent early. Each node has at most `perNode` requests in flight; `add` waits for a
 * free one, which is what holds the reading back when nodes are slower than the input.
 */
import { InFlight } from '../client/concurrency.js';
import type { OwnerSlice } from './owners.js';

/** A slice in a queue, with whatever its sender needs to settle it (its input batch). */
export interface QueuedSlice<O> {
  owner: O;
  slice: OwnerSlice;
}

export interface OwnerQueueOptions<O> {
  nodes: number;
  batchSize: number;
  batchBytes: number;
  /** Requests in flight per node. */
  perNode: number;
  /** The most bytes all queues may hold together before the fullest is sent early. */
  budget: number;
  /** Sends one request's slices to a node; settles them itself and never rejects. */
  send: (node: number, parts: QueuedSlice<O>[]) => Promise<void>;
}

interface Waiting<O> {
  parts: QueuedSlice<O>[];
  count: number;
  bytes: number;
}

export class OwnerQueue<O> {
  private readonly waiting: Waiting<O>[];
  private readonly inFlight: InFlight[];
  private waitingBytes = 0;

  constructor(private readonly opts: OwnerQueueOptions<O>) {
    this.waiting = Array.from({ length: opts.nodes }, () => ({ parts: [], count: 0, bytes: 0 }));
    this.inFlight = Array.from({ length: opts.nodes }, () => new InFlight(opts.perNode));
  }

  /** Requests in flight, over all nodes. */
  get requests(): number {
    return this.inFlight.reduce((a, s) => a + s.size, 0);
  }

  /** Queues one input batch's slices; sends what fills a request (waiting for a free slot). */
  async add(owner: O, slices: readonly OwnerSlice[]): Promise<void> {
    for (const slice of slices) {
      const before = this.waiting[slice.node]!;
      if (before.count > 0 && (before.count + slice.count > this.opts.batchSize || before.bytes + slice.size > this.opts.batchBytes)) await this.flush(slice.node);
      // A flush puts a fresh queue in place (the old one's parts are on their way): take the current one.
      const w = this.waiting[slice.node]!;
      w.parts.push({ owner, slice });
      w.count += slice.count;
      w.bytes += slice.size;
      this.waitingBytes += slice.size;
      if (w.count >= this.opts.batchSize || w.bytes >= this.opts.batchBytes) await this.flush(slice.node);
    }
    while (this.waitingBytes > this.opts.budget) {
      let fullest = 0;
      this.waiting.forEach((w, i) => {
        if (w.bytes > this.waiting[fullest]!.bytes) fullest = i;
      });
      await this.flush(fullest);
    }
  }

  /** Sends what node `i` has waiting, once it has a free slot. */
  private async flush(i: number): Promise<void> {
    const w = this.waiting[i]!;
    if (w.count === 0) return;
    // Taken out before waiting: what arrives meanwhile starts the next request.
    const parts = w.parts;
    this.waiting[i] = { parts: [], count: 0, bytes: 0 };
    this.waitingBytes -= w.bytes;
    const flying = this.inFlight[i]!;
    await flying.room();
    flying.track(this.opts.send(i, parts));
  }

  /** Sends everything waiting and waits for every request to settle. */
  async flushAll(): Promise<void> {
    for (let i = 0; i < this.waiting.length; i++) await this.flush(i);
    await Promise.all(this.inFlight.map((s) => s.settled()));
  }

  /** Takes everything waiting out of the queues, unsent (a stop), and waits for the requests in flight. */
  async drop(): Promise<QueuedSlice<O>[]> {
    const dropped = this.waiting.flatMap((w) => w.parts);
    this.waiting.forEach((_, i) => (this.waiting[i] = { parts: [], count: 0, bytes: 0 }));
    this.waitingBytes = 0;
    await Promise.all(this.inFlight.map((s) => s.settled()));
    return dropped;
  }
}

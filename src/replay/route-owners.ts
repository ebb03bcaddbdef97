/**
 * `--to owners`: each record to its `write_copies` owners on the ring, batched per node (see
 * owner-queue.ts), never to another node. What an owner refuses or does not take goes to the
 * rejects file naming that owner, so a replay of the line goes to it alone.
 *
 * `--to primary`: each record once, to its first owner (a replicating store copies it to the
 * others). What that owner does not take (failed after retries, or down) goes on to the next
 * owner in placement order, sent from the failed request's own slot (so a fallback never waits
 * for a queue another failing request holds); only a record no owner took goes to the rejects
 * file, naming the owners tried and without an `owner` (a replay starts at the primary again).
 */
import { InFlight } from '../client/concurrency.js';
import { NodeRequestError } from '../client/errors.js';
import { BodyPool, rejectInput, type Batch } from '../records/batch.js';
import type { Ring } from '../ring/index.js';
import type { NodeWriter, SendContext } from './acknowledge.js';
import type { Tally } from './ledger.js';
import type { NodePool } from './node-pool.js';
import { OwnerQueue, type QueuedSlice } from './owner-queue.js';
import { joinSlices, OwnerRouter, ownersAt, ownSlice, type OwnerRequest, type RoutedBatch } from './owners.js';
import type { BatchOutcome, Route } from './route.js';
import { batchBody } from '../records/batch.js';
import { textsOf } from './slice.js';

/** One input batch on its way, split among its owners' queues; settled when every slice is. */
interface Chunk {
  source: string;
  routed: RoutedBatch;
  /** The batch's body, which its slices name bytes of: back to the pool once every slice is copied into a request. */
  body: Buffer;
  unjoined: number;
  /** Per record of the batch: the owners that acknowledged it. */
  acked: Uint8Array;
  /** Its records acknowledged by at least one owner, and by every node they went to (kept as acknowledgements come). */
  touched: number;
  full: number;
  /** Slices not settled yet. */
  pending: number;
  failed: number;
  interrupted: boolean;
  tally: Tally;
  done: (outcome: BatchOutcome | undefined) => void;
}

export interface OwnersRouteOptions {
  batchSize: number;
  batchBytes: number;
  /** Requests in flight per node. */
  concurrency: number;
  /** How long a node that failed is left alone (quoted in the rejects of requests not tried meanwhile). */
  unhealthyMs: number;
  /** `primary`: each record to its first owner, the next on failure (default `owners`: to every owner). */
  mode?: 'owners' | 'primary';
}

export class OwnersRoute implements Route {
  readonly router: OwnerRouter;
  private readonly queue: OwnerQueue<Chunk>;
  /** Batches handed on and not settled yet. */
  private readonly chunks = new InFlight();
  /** Why each node last failed a request (what a request not tried while it is down quotes). */
  private readonly downWhy: string[] = [];
  private notOwedWarned = false;
  private readonly primary: boolean;
  /**
   * Request bodies, apart from the batches' (which go back to the reading): each the size of the
   * largest request, so a handful serve the whole run.
   */
  private readonly requestBodies: BodyPool;

  constructor(
    private readonly ctx: SendContext,
    private readonly writer: NodeWriter,
    private readonly pool: NodePool,
    private readonly bodies: BodyPool,
    ring: Ring,
    private readonly opts: OwnersRouteOptions,
  ) {
    this.router = new OwnerRouter(ring);
    this.primary = opts.mode === 'primary';
    this.requestBodies = new BodyPool(ctx.clients.length * opts.concurrency + 2);
    this.queue = new OwnerQueue<Chunk>({
      nodes: ctx.clients.length,
      batchSize: opts.batchSize,
      batchBytes: opts.batchBytes,
      perNode: opts.concurrency,
      budget: opts.batchBytes * Math.max(2, opts.concurrency) * 2,
      send: (i, parts) => this.sendRequest(i, parts),
    });
  }

  get inFlight(): number {
    return this.queue.requests;
  }

  async ready(): Promise<void> {
    // The owners' queues hold the reading back (OwnerQueue.add waits for a free request slot).
  }

  /**
   * The batch split among its owners' queues (which send full requests, and make this wait
   * while a node has no free request slot); settled once every slice is.
   */
  async send(batch: Batch, settle: (outcome: BatchOutcome) => void): Promise<void> {
    const routed = this.router.split(batch, this.primary);
    this.ctx.ledger.toNamedOwner += routed.owed;
    if (routed.notOwedThere > 0 && !this.notOwedWarned) {
      this.notOwedWarned = true;
      this.ctx.emit({
        type: 'warning',
        message: `${routed.notOwedThere} record(s) from a rejects file name an owner that does not own them on ring ${this.router.ring.hash.slice(0, 12)} (the ring changed?): sent to all of their owners instead (further ones likewise)`,
      });
    }
    let done!: Chunk['done'];
    const settled = new Promise<BatchOutcome | undefined>((resolve) => (done = resolve));
    const chunk: Chunk = {
      source: batch.source,
      routed,
      body: batch.body,
      unjoined: routed.slices.length,
      acked: new Uint8Array(batch.count),
      touched: 0,
      full: 0,
      pending: routed.slices.length,
      failed: 0,
      interrupted: false,
      tally: { refused: 0, notWritten: 0 },
      done,
    };
    this.chunks.track(
      settled.then((outcome) => {
        if (outcome) settle(outcome);
      }),
    );
    if (routed.slices.length === 0) {
      this.bodies.give(batch.body);
      this.settleChunk(chunk);
    } else await this.queue.add(chunk, routed.slices);
  }

  /** At the end of an input: what the queues hold is sent, or (interrupted, nodes down) dropped unacknowledged. */
  async drain(): Promise<void> {
    const { ledger, signal } = this.ctx;
    if (!signal?.aborted && ledger.stop !== 'nodes-down') {
      await this.queue.flushAll();
    } else {
      for (const { owner: c } of await this.queue.drop()) {
        c.interrupted = true;
        if (--c.pending === 0) this.settleChunk(c);
      }
    }
    await this.chunks.settled();
  }

  plan(batch: Batch, count: (node: number, records: number) => void): void {
    for (const s of this.router.split(batch, this.primary).slices) count(s.node, s.count);
  }

  /**
   * A chunk all of whose slices are settled. A record counts as written when every one of its
   * owners acknowledged it, as written to some when only some did.
   */
  private settleChunk(c: Chunk): void {
    if (c.interrupted) {
      c.done(undefined);
      return;
    }
    const { ledger } = this.ctx;
    // Every owner of every record in it failed: stop reading (see StopReason).
    if (c.routed.slices.length > 0 && c.failed === c.routed.slices.length) ledger.stop ??= 'nodes-down';
    ledger.batches++;
    const everywhere = c.full;
    const somewhere = c.touched - c.full;
    ledger.written += everywhere;
    ledger.writtenToSome += somewhere;
    c.done({ written: everywhere, writtenToSome: somewhere, ...c.tally });
  }

  /**
   * One request to node i holding slices of one or more input batches. What the node refuses or
   * does not take goes to the rejects file naming it (never to another node); each batch gets
   * its share of the outcome.
   */
  private async sendRequest(i: number, parts: QueuedSlice<Chunk>[], fallback = false): Promise<void> {
    const { ledger, signal } = this.ctx;
    const request = joinSlices(
      i,
      parts.map((p) => p.slice),
      (size) => this.requestBody(size),
    );
    // Every slice of a batch copied into its request: the batch's buffer can carry another batch.
    if (!fallback) for (const { owner: c } of parts) if (--c.unjoined === 0) this.bodies.give(c.body);
    const source = parts[0]!.owner.source;
    const refused = new Set<number>();
    // sendTo and failSlice count into a tally; each batch's share is worked out below instead.
    const scratch: Tally = { refused: 0, notWritten: 0 };
    let failed = false;
    let interrupted = false;
    // `primary`: the records that went on to their next owner (settled by that request, not this one).
    let handedOn: ReadonlySet<number> = new Set<number>();
    let next: Array<{ node: number; parts: QueuedSlice<Chunk>[] }> = [];
    try {
      let err: unknown;
      if (this.pool.isDown(i)) {
        // It failed moments ago: its records go on (or to the rejects file) now rather than each request waiting out the retries.
        err = new Error(
          `${this.ctx.clients[i]!.url} failed a write within the last ${Math.round(this.opts.unhealthyMs / 1000)}s and was not tried again yet (${this.downWhy[i] ?? 'it failed'})`,
        );
      } else {
        try {
          const sent = await this.writer.sendTo(i, request, source, refused, scratch);
          this.pool.up(i);
          ledger.credit(i, sent, fallback);
        } catch (e) {
          if (signal?.aborted) interrupted = true;
          else {
            if (e instanceof NodeRequestError) this.pool.down(i, e.detail);
            this.downWhy[i] = e instanceof NodeRequestError ? e.detail : e instanceof Error ? e.message : String(e);
            err = e;
          }
        }
      }
      if (err !== undefined) {
        if (this.primary) ({ handedOn, next } = this.handOn(i, request, parts, refused, err));
        const left = this.primary ? this.remaining(request, refused, handedOn) : request;
        if (left.count > 0) {
          this.failSlice(source, left, err, refused, scratch, this.primary ? this.noOwnerTook(parts) : undefined);
          failed = true;
        }
      }
    } catch (err) {
      // Not a node's failure (the rejects file unwritable): the batches stay unacknowledged and the run stops.
      ledger.failInput(err);
      interrupted = true;
    }
    // The next owners' requests are counted into their batches before this request settles its share.
    for (const n of next) for (const { owner: c } of n.parts) c.pending++;
    // The common case (every record acknowledged) takes the first loop.
    const plain = !failed && !interrupted && refused.size === 0 && handedOn.size === 0;
    for (const { owner: c, slice } of parts) {
      let lost = false;
      if (plain) ackAll(c, slice.index);
      else
        slice.index.forEach((k) => {
          const r = slice.batch.records[k]!;
          if (handedOn.has(r)) return;
          if (refused.has(r)) c.tally.refused++;
          else if (failed) {
            c.tally.notWritten++;
            lost = true;
          } else if (!interrupted) ackAll(c, [k]);
        });
      if (failed) c.failed++;
      // `primary`: a record no owner took stops the run, as a batch no node took does with --to any.
      if (this.primary && lost) ledger.stop ??= 'nodes-down';
      if (interrupted) c.interrupted = true;
      if (--c.pending === 0) this.settleChunk(c);
    }
    // Nothing reads the request's body any more (what needed its records has their texts).
    this.requestBodies.give(request.body);
    // From this request's slot: a fallback never waits for room another request holds.
    for (const n of next) await this.sendRequest(n.node, n.parts, true);
  }

  /**
   * A buffer for a request body of `size` bytes. A new one has room for a quarter more: requests of
   * a run are of much the same size, and a buffer of the largest request possible (the batch bytes)
   * for each would be most of the memory (and of the garbage collections that external memory sets
   * off) of a ring write.
   */
  private requestBody(size: number): Buffer {
    return this.requestBodies.take(size, Math.min(size + (size >> 2), this.opts.batchBytes + 2));
  }

  /**
   * `primary`: the records of a request node i did not take, each to its next owner after i in
   * placement order, grouped into one request per node. Returns the records handed on.
   */
  private handOn(
    i: number,
    request: OwnerRequest,
    parts: readonly QueuedSlice<Chunk>[],
    refused: ReadonlySet<number>,
    err: unknown,
  ): { handedOn: Set<number>; next: Array<{ node: number; parts: QueuedSlice<Chunk>[] }> } {
    const handedOn = new Set<number>();
    const byNode = new Map<number, QueuedSlice<Chunk>[]>();
    // Each part's records are the request's from `first` on.
    let first = 0;
    for (const { owner: c, slice } of parts) {
      const picked = new Map<number, number[]>();
      slice.index.forEach((k, j) => {
        const r = slice.batch.records[k]!;
        if (refused.has(r)) return;
        const owners = ownersAt(c.routed, k);
        const at = owners.indexOf(i);
        const to = at >= 0 ? owners[at + 1] : undefined;
        if (to === undefined) return;
        handedOn.add(r);
        let js = picked.get(to);
        if (!js) picked.set(to, (js = []));
        js.push(j);
      });
      if (picked.size > 0) {
        const texts = textsOf(request);
        for (const [to, js] of picked) {
          const moved = ownSlice(
            to,
            js.map((j) => texts[first + j]!),
            slice.batch,
            js.map((j) => slice.index[j]!),
          );
          let list = byNode.get(to);
          if (!list) byNode.set(to, (list = []));
          list.push({ owner: c, slice: moved });
        }
      }
      first += slice.count;
    }
    if (handedOn.size > 0) this.ctx.ledger.handedOn(i, handedOn.size, err);
    return { handedOn, next: [...byNode].map(([node, p]) => ({ node, parts: p })) };
  }

  /** The part of a request that was neither refused nor handed on. */
  private remaining(request: OwnerRequest, refused: ReadonlySet<number>, handedOn: ReadonlySet<number>): OwnerRequest {
    if (handedOn.size === 0) return request;
    const keep = request.records.flatMap((r, j) => (handedOn.has(r) && !refused.has(r) ? [] : [j]));
    const texts = textsOf(request);
    return {
      node: request.node,
      body: batchBody(keep.map((j) => texts[j]!)),
      count: keep.length,
      records: keep.map((j) => request.records[j]!),
      lines: keep.map((j) => request.lines[j]!),
    };
  }

  /** `primary`: why a record (by number) of these parts no owner took: each of its owners, with why it last failed. */
  private noOwnerTook(parts: readonly QueuedSlice<Chunk>[]): (record: number) => string {
    const placed = new Map<number, readonly number[]>();
    for (const { owner: c, slice } of parts) for (const k of slice.index) placed.set(slice.batch.records[k]!, ownersAt(c.routed, k));
    return (record) => {
      const owners = placed.get(record) ?? [];
      return `no owner took it: tried ${owners.map((o) => `${this.ctx.clients[o]!.url} (${this.downWhy[o] ?? 'failed'})`).join(', then ')}`;
    };
  }
  /**
   * A slice its owner did not take (failed after retries, or not tried while the node is down):
   * every record of it the node did not refuse goes to the rejects file, naming the node. Never
   * to another node: it does not own them.
   */
  private failSlice(source: string, s: OwnerRequest, err: unknown, refused: ReadonlySet<number>, tally: Tally, why?: (record: number) => string): void {
    const i = s.node;
    const n = s.count - refused.size;
    const message = this.ctx.ledger.nodeFailed(i, n, err);
    tally.notWritten += n;
    const kept = s.records.flatMap((r, j) => (refused.has(r) ? [] : [j]));
    if (kept.length === 0) return;
    const node = this.ctx.clients[i]!.url;
    this.ctx.emit({ type: 'batch-failed', node, source, firstRecord: s.records[kept[0]!]!, lastRecord: s.records[kept[kept.length - 1]!]!, error: message });
    const texts = textsOf(s);
    for (const j of kept) {
      const error = `not written: ${why ? why(s.records[j]!) : message}`;
      this.ctx.reject({ file: source, record: s.records[j]!, line: s.lines[j]!, error, ...rejectInput(texts[j]!), node, ...this.writer.owedBy(i) });
    }
  }
}

/**
 * Counts an acknowledgement for each of these records (by batch position), and which of them are
 * now acknowledged somewhere or everywhere they went. Not inline: a loop in an async function
 * runs unoptimised.
 */
function ackAll(c: Chunk, index: ArrayLike<number>): void {
  const { acked } = c;
  const { copies } = c.routed;
  for (let j = 0; j < index.length; j++) {
    const k = index[j]!;
    const n = ++acked[k]!;
    if (n === 1) c.touched++;
    if (n === copies[k]) c.full++;
  }
}

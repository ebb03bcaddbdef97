/**
 * `--to any`: each batch whole to one node, round-robin over the healthy ones, moving on to the
 * next node when one fails it. `--to all`: each batch to every node, written when every node
 * acknowledged it.
 */
import { InFlight } from '../client/concurrency.js';
import { NodeRequestError } from '../client/errors.js';
import { batchTexts, rejectInput, type Batch, type BodyPool } from '../records/batch.js';
import type { NodeWriter, SendContext } from './acknowledge.js';
import type { Tally } from './ledger.js';
import type { NodePool } from './node-pool.js';
import type { BatchOutcome, Route } from './route.js';
import { excluding, type Slice } from './slice.js';

export class AnyAllRoute implements Route {
  private readonly window: InFlight;
  private flying = 0;
  /** A dry run's round-robin. */
  private cursor = 0;

  constructor(
    private readonly ctx: SendContext,
    private readonly writer: NodeWriter,
    private readonly pool: NodePool,
    private readonly bodies: BodyPool,
    private readonly to: 'any' | 'all',
    concurrency: number,
  ) {
    this.window = new InFlight(concurrency);
  }

  get inFlight(): number {
    return this.flying;
  }

  ready(): Promise<void> {
    return this.window.room();
  }

  async send(batch: Batch, settle: (outcome: BatchOutcome) => void): Promise<void> {
    this.flying++;
    this.window.track(
      this.sendBatch(batch).then(
        (outcome) => {
          this.flying--;
          if (!outcome) return;
          // Every request with this body has finished (retries included): its buffer can carry another batch.
          this.bodies.give(batch.body);
          settle(outcome);
        },
        (err: unknown) => {
          this.flying--;
          // An unexpected failure (not a node error; the rejects file unwritable): the batch stays unacknowledged and the run stops.
          this.ctx.ledger.failInput(err);
        },
      ),
    );
  }

  drain(): Promise<void> {
    return this.window.settled();
  }

  plan(batch: Batch, count: (node: number, records: number) => void): void {
    const n = this.ctx.clients.length;
    if (this.to === 'all') {
      for (let k = 0; k < n; k++) count(k, batch.count);
    } else if (n > 0) {
      count(this.cursor, batch.count);
      this.cursor = (this.cursor + 1) % n;
    }
  }

  /**
   * Sends a batch; resolves to what became of it once it is settled (written, rejected or failed
   * into the rejects file), or undefined when interrupted.
   */
  private async sendBatch(batch: Batch): Promise<BatchOutcome | undefined> {
    const tally: Tally = { refused: 0, notWritten: 0 };
    if (batch.count === 0) return { written: 0, writtenToSome: 0, ...tally };
    const slice: Slice = { body: batch.body, count: batch.count, records: batch.records, lines: batch.lines };
    return this.to === 'all' ? this.toAll(batch, slice, tally) : this.toAny(batch, slice, tally);
  }

  private async toAll(batch: Batch, slice: Slice, tally: Tally): Promise<BatchOutcome | undefined> {
    const { ledger, signal } = this.ctx;
    const results = await Promise.all(
      this.ctx.clients.map(async (_, i): Promise<number | 'failed' | 'interrupted'> => {
        // Each node refuses for itself: its rejects are its own.
        const refused = new Set<number>();
        try {
          const sent = await this.writer.sendTo(i, slice, batch.source, refused, tally);
          ledger.credit(i, sent);
          return sent.written;
        } catch (err) {
          if (signal?.aborted) return 'interrupted';
          this.failBatch(batch, i, err, refused, tally);
          return 'failed';
        }
      }),
    );
    if (results.includes('interrupted')) return undefined;
    // This batch failed on every node: stop reading (see StopReason).
    if (results.every((w) => w === 'failed')) ledger.stop ??= 'nodes-down';
    ledger.batches++;
    // Written means written everywhere: the least any node took; the rest of what some took is "to some".
    const took = results.map((w) => (typeof w === 'number' ? w : 0));
    const everywhere = Math.min(...took);
    const somewhere = Math.max(...took) - everywhere;
    ledger.written += everywhere;
    ledger.writtenToSome += somewhere;
    return { written: everywhere, writtenToSome: somewhere, ...tally };
  }

  private async toAny(batch: Batch, slice: Slice, tally: Tally): Promise<BatchOutcome | undefined> {
    const { ledger, signal } = this.ctx;
    const tried = new Set<number>();
    // What a node refused (400) is in the rejects file: the next node gets the rest only.
    const refused = new Set<number>();
    let lastErr: unknown;
    let lastNode = 0;
    for (;;) {
      const i = this.pool.pick(tried);
      if (i === undefined) break;
      // The node before failed it: the batch goes on to this one.
      if (tried.size > 0) ledger.handedOn(lastNode, batch.count - refused.size, lastErr);
      tried.add(i);
      try {
        const sent = await this.writer.sendTo(i, refused.size === 0 ? slice : excluding(slice, refused), batch.source, refused, tally);
        this.pool.up(i);
        ledger.credit(i, sent, tried.size > 1);
        ledger.batches++;
        ledger.written += sent.written;
        return { written: sent.written, writtenToSome: 0, ...tally };
      } catch (err) {
        if (signal?.aborted) return undefined;
        lastErr = err;
        lastNode = i;
        // A node that cannot take a batch after its retries is left alone for a while; the batch moves on.
        if (err instanceof NodeRequestError) this.pool.down(i, err.detail);
      }
    }
    this.failBatch(batch, lastNode, lastErr, refused, tally);
    ledger.stop ??= 'nodes-down';
    return { written: 0, writtenToSome: 0, ...tally };
  }

  /** A batch that failed on node i: every record of it not already refused goes to the rejects file. */
  private failBatch(batch: Batch, i: number, err: unknown, refused: ReadonlySet<number>, tally: Tally): void {
    const n = batch.count - refused.size;
    const message = this.ctx.ledger.nodeFailed(i, n, err);
    tally.notWritten += n;
    const node = this.ctx.clients[i]!.url;
    this.ctx.emit({ type: 'batch-failed', node, source: batch.source, firstRecord: batch.records[0]!, lastRecord: batch.records[n - 1]!, error: message });
    batchTexts(batch.body).forEach((t, k) => {
      if (refused.has(batch.records[k]!)) return;
      this.ctx.reject({ file: batch.source, record: batch.records[k]!, line: batch.lines[k]!, error: `not written: ${message}`, ...rejectInput(t), node });
    });
  }
}

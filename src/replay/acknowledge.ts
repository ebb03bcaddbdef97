/**
 * One slice to one node, until the node has acknowledged every record of it or refused some:
 * a count that differs is resent (writes are atomic and a rewrite replaces), a 400 that names a
 * record puts that record in the rejects file and resends the rest, a 413 halves the slice.
 */
import { abortableSleep } from '../client/clock.js';
import { NodeHttpError } from '../client/errors.js';
import type { WriteAck } from '../client/answers.js';
import type { NodeClient } from '../client/node-client.js';
import { backoffDelay, type RetryPolicy } from '../client/retry.js';
import { rejectInput, type RejectEntry } from '../records/batch.js';
import { AckCountError } from './errors.js';
import type { WriteCall } from './kinds.js';
import type { Ledger, Sent, Tally } from './ledger.js';
import { excluding, half, textsOf, type Slice } from './slice.js';
import type { ReplayEvent } from './types.js';

/** What the sending parts of a replay share: the nodes, the account, and where records go that are not written. */
export interface SendContext {
  readonly clients: readonly NodeClient[];
  readonly ledger: Ledger;
  readonly signal: AbortSignal | undefined;
  readonly emit: (e: ReplayEvent) => void;
  /** Puts a record in the rejects file (which counts toward --max-errors). */
  readonly reject: (entry: RejectEntry & { owner?: string }) => void;
}

export interface NodeWriterOptions {
  /** The write of the run's kind of records. */
  write: (client: NodeClient, body: Uint8Array, call: WriteCall) => Promise<WriteAck>;
  method: 'POST' | 'PUT';
  /** Resending a slice whose acknowledgement counted other than it held. */
  ackRetry: RetryPolicy;
  /** `--to owners`: the ring node a reject on node i is owed to (see RejectsFile). */
  ownerOf?: (i: number) => string;
}

export class NodeWriter {
  constructor(
    private readonly ctx: SendContext,
    private readonly opts: NodeWriterOptions,
  ) {}

  /** `--to owners`: a reject names the ring node the copy is owed to, so a replay of the line goes there alone. */
  owedBy(i: number): { owner?: string } {
    return this.opts.ownerOf ? { owner: this.opts.ownerOf(i) } : {};
  }

  /**
   * Sends one slice to one node, handling 400 (drop the named record, resend the rest) and 413
   * (halve). Returns what was acknowledged or throws the error that made the node fail. Every
   * record it puts in the rejects file is added to `refused`, so a resend elsewhere leaves it out.
   */
  async sendTo(i: number, slice: Slice, source: string, refused: Set<number>, tally: Tally): Promise<Sent> {
    const { ledger } = this.ctx;
    const client = this.ctx.clients[i]!;
    let current = slice;
    const sent: Sent = { written: 0, byCount: 0, bare: 0 };
    const refuse = (k: number, error: string, s: Slice): void => {
      this.ctx.reject({ file: source, record: s.records[k]!, line: s.lines[k]!, error, ...rejectInput(textsOf(s)[k]!), node: client.url, ...this.owedBy(i) });
      refused.add(s.records[k]!);
      ledger.rejectedByNode++;
      ledger.nodes[i]!.rejected++;
      tally.refused++;
    };
    while (current.count > 0) {
      try {
        const how = await this.writeAcknowledged(i, current);
        sent.written += current.count;
        if (how === 'count') sent.byCount += current.count;
        else sent.bare += current.count;
        return sent;
      } catch (err) {
        if (err instanceof NodeHttpError && err.status === 400) {
          const idx = rejectedIndex(err, current.count);
          const reason = nodeReason(err);
          if (idx === undefined) {
            // The node refused the batch without saying which record: none of it is stored (writes are atomic).
            const all = current;
            for (let k = 0; k < all.count; k++) refuse(k, `node: ${reason}`, all);
            return sent;
          }
          refuse(idx, reason, current);
          current = excluding(current, refused);
          continue;
        }
        if (err instanceof NodeHttpError && err.status === 413 && current.count === 1) {
          // One record larger than the node's body limit: that record is refused, not the node broken.
          refuse(0, `(record): larger than the node accepts: ${nodeReason(err)}`, current);
          return sent;
        }
        if (err instanceof NodeHttpError && err.status === 413 && current.count > 1) {
          const mid = Math.ceil(current.count / 2);
          for (const part of [half(current, 0, mid), half(current, mid, current.count)]) {
            const more = await this.sendTo(i, part, source, refused, tally);
            sent.written += more.written;
            sent.byCount += more.byCount;
            sent.bare += more.bare;
          }
          return sent;
        }
        throw err;
      }
    }
    return sent;
  }

  /**
   * One request: the slice to node i, acknowledged for every record it held. A 2xx without a
   * count acknowledges the whole slice (the production store answers an empty 200); a count that
   * differs is resent (the rewrite replaces) and, if it stays wrong, throws AckCountError.
   */
  private async writeAcknowledged(i: number, slice: Slice): Promise<'count' | 'bare'> {
    const { ledger, signal } = this.ctx;
    const { ackRetry } = this.opts;
    const client = this.ctx.clients[i]!;
    for (let attempt = 0; ; attempt++) {
      // Counted per request sent, the client's own retries included.
      const onSent = (): void => {
        ledger.nodes[i]!.bytesSent += slice.body.length;
      };
      onSent();
      const ack = await this.opts.write(client, slice.body, {
        method: this.opts.method,
        ...(signal ? { signal } : {}),
        onRetry: () => {
          ledger.retries++;
          onSent();
        },
      });
      if (ack.records === undefined || ack.records === slice.count) {
        ledger.noteAckCounts(i, ack);
        return ack.records === undefined ? 'bare' : 'count';
      }
      const err = new AckCountError(client.url, ack.records, slice.count);
      if (attempt >= ackRetry.retries || signal?.aborted) throw err;
      ledger.retries++;
      try {
        await abortableSleep(backoffDelay(ackRetry, attempt, err), signal);
      } catch {
        throw err; // interrupted while waiting
      }
    }
  }
}

/** Which record of a batch a node's 400 names (0-based), when it names one. */
export function rejectedIndex(err: NodeHttpError, count: number): number | undefined {
  const body = err.body ?? {};
  for (const key of ['index', 'record', 'recordIndex', 'record_index']) {
    const v = body[key];
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < count) return v;
  }
  const m = /record(?:s)?\s*(?:\[|#|index\s*)?\s*(\d+)\]?/i.exec(typeof body.error === 'string' ? body.error : err.message) ?? /^\[(\d+)\]/.exec(String(body.error ?? ''));
  if (m) {
    const v = Number(m[1]);
    if (v < count) return v;
  }
  return undefined;
}

function nodeReason(err: NodeHttpError): string {
  const body = err.body ?? {};
  const field = typeof body.field === 'string' ? body.field : undefined;
  const reason = typeof body.reason === 'string' ? body.reason : undefined;
  if (field && reason) return `${field}: ${reason}`;
  return typeof body.error === 'string' ? body.error : err.detail;
}

/**
 * A replay's account: the counts, each node's report, and why the run stops. Every part of the
 * pipeline (reading, sending, routing, resume) writes into this one object, so what the result
 * says is counted in one place.
 */
import { NodeRequestError } from '../client/errors.js';
import type { NodeReport, StopReason } from './types.js';

/** What became of one batch's records: counted into the acknowledged prefix (see LowWater). */
export interface Tally {
  refused: number;
  notWritten: number;
}

/** Records a node acknowledged in one send, and how. */
export interface Sent {
  written: number;
  byCount: number;
  bare: number;
}

export class Ledger {
  read = 0;
  written = 0;
  writtenToSome = 0;
  batches = 0;
  failedBatches = 0;
  failedRecords = 0;
  retries = 0;
  rejectedByNode = 0;
  toNamedOwner = 0;
  readonly nodes: NodeReport[];
  stop: StopReason | undefined;
  inputError: Error | undefined;

  constructor(
    urls: readonly string[],
    private readonly signal: AbortSignal | undefined,
  ) {
    this.nodes = urls.map((node) => ({
      node,
      batches: 0,
      records: 0,
      primaryRecords: 0,
      fallbackRecords: 0,
      handedOn: 0,
      ackedByCount: 0,
      ackedBare: 0,
      failedBatches: 0,
      failedRecords: 0,
      rejected: 0,
      bytesSent: 0,
      misdirected: 0,
      errors: 0,
    }));
  }

  /** Whether reading should stop: a reason to stop, or the run's signal. */
  stopped(): boolean {
    return this.stop !== undefined || Boolean(this.signal?.aborted);
  }

  /**
   * A failure that is not a node's (an input unreadable, the rejects or state file unwritable):
   * what is in flight stays unacknowledged and the run stops. The first error is kept.
   */
  failInput(err: unknown): void {
    this.inputError ??= err instanceof Error ? err : new Error(String(err));
    this.stop ??= 'input-error';
  }

  /** Counts a node's acknowledgement of (part of) a batch into its report; `fallback`: the records' first choice failed them. */
  credit(i: number, sent: Sent, fallback = false): void {
    const n = this.nodes[i]!;
    n.batches++;
    n.records += sent.written;
    if (fallback) n.fallbackRecords += sent.written;
    else n.primaryRecords += sent.written;
    n.ackedByCount += sent.byCount;
    n.ackedBare += sent.bare;
  }

  /** Adds what a node's acknowledgement counted beyond its records: misdirected and failed records. */
  noteAckCounts(i: number, ack: { misdirected?: number; errors?: number }): void {
    const n = this.nodes[i]!;
    n.misdirected += ack.misdirected ?? 0;
    n.errors += ack.errors ?? 0;
  }

  /**
   * Node i did not take `records` records (failed after retries, or down) and they went on to the
   * next node: not a failure of the run, but the report says how many and why.
   */
  handedOn(i: number, records: number, err: unknown): void {
    const n = this.nodes[i]!;
    n.handedOn += records;
    n.handOnError = err instanceof Error ? err.message : String(err);
  }

  /** A batch (or an owner's slice) of which `records` records failed on node i; returns the error's message. */
  nodeFailed(i: number, records: number, err: unknown): string {
    const message = err instanceof Error ? err.message : String(err);
    const n = this.nodes[i]!;
    this.failedBatches++;
    this.failedRecords += records;
    n.failedBatches++;
    n.failedRecords += records;
    n.lastError = message;
    n.lastErrorCode = err instanceof NodeRequestError ? err.code : 'failed';
    return message;
  }
}

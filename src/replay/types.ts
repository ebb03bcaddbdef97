/**
 * The write pipeline's contract: what a replay is asked to do (ReplayOptions), what it tells
 * while it runs (progress, events) and what it returns (ReplayResult).
 */
import type { Readable } from 'node:stream';
import type { RetryPolicy } from '../client/retry.js';
import type { Position, RejectEntry } from '../records/batch.js';
import type { RecordKind } from '../records/kinds.js';
import type { FormatChoice, RecordFormat } from '../records/reader.js';
import type { Ring } from '../ring/index.js';
import type { NodeClient } from '../client/node-client.js';
import type { SettledCounts } from './state.js';

export type WriteTarget = 'any' | 'all' | 'owners' | 'primary';

export interface ReplayOptions {
  /** One client per node (sharing the run's dispatcher). */
  clients: readonly NodeClient[];
  /**
   * `any`: each batch to one node, round-robin with failover. `all`: every batch to every node.
   * `owners`: each record to its `write_copies` owners on `ring`, batched per node, never to
   * another node (an owner that fails gets its records in the rejects file, naming it).
   * `primary`: each record once, to its first owner on `ring` (a replicating store copies it to
   * the others); when that owner fails, its records go to the next owner in placement order, and
   * only a record no owner took goes to the rejects file (naming the owners tried).
   */
  to?: WriteTarget;
  /** With `to: 'owners'` or `'primary'`: the ring; `clients[k]` must reach the ring's node k (topology order). */
  ring?: Ring;
  /**
   * What the records are (default `nnt`): numeric (`/write/nnt`), text (`/write/text`) or
   * histogram (`/histogram/write`). Each record is checked by that kind's rule; routing, rejects
   * and resume are the same for every kind.
   */
  kind?: RecordKind;
  format?: FormatChoice;
  batchSize?: number;
  batchBytes?: number;
  /** Batches in flight at once. */
  concurrency?: number;
  method?: 'POST' | 'PUT';
  /** Where invalid and unwritable records go (NDJSON). Required unless dryRun. */
  rejectsPath?: string;
  /** Stop once more than this many records were rejected. */
  maxErrors?: number;
  /** Records per second (token bucket). */
  rate?: number;
  /** Numeric records: the nodes' smallest span; offsets must be aligned to it. */
  smallestSpan?: number;
  /** Histogram records: the periods the nodes keep; a record's `period` must be one of them. */
  histogramPeriods?: readonly number[];
  /** Validate every input first; send nothing when any record is invalid. */
  strict?: boolean;
  /** Where the acknowledged position is saved; no state when undefined. */
  statePath?: string;
  /** Skip what the state file says is done. */
  resume?: boolean;
  /** Resume even when an input changed since the saved run. */
  allowChangedInput?: boolean;
  /** @deprecated the old name of `allowChangedInput`. */
  force?: boolean;
  /** Validate and batch, send nothing. */
  dryRun?: boolean;
  signal?: AbortSignal;
  /** For `-`. */
  stdin?: Readable;
  onProgress?: (p: ReplayProgress) => void;
  onEvent?: (e: ReplayEvent) => void;
  /** Shortest gap between two state-file writes. */
  stateIntervalMs?: number;
  /** How long a node that failed a batch is left alone before it gets batches again. */
  unhealthyMs?: number;
  /**
   * Resending a batch whose acknowledgement counted fewer (or more) records than it held
   * (default: 3 more tries with backoff). Other failures are retried by the clients' own policy.
   */
  ackRetry?: RetryPolicy;
  now?: () => number;
}

export interface ReplayProgress {
  read: number;
  written: number;
  rejected: number;
  batches: number;
  retries: number;
  failedBatches: number;
  /** Input bytes consumed (compressed for gzip) and the total, when every input is a file. */
  bytesRead: number;
  bytesTotal: number | undefined;
  elapsedMs: number;
  inFlight: number;
}

export type ReplayEvent =
  | { type: 'node-down'; node: string; error: string; untilMs: number }
  | { type: 'node-up'; node: string }
  | { type: 'batch-failed'; node: string; source: string; firstRecord: number; lastRecord: number; error: string }
  | { type: 'rejected'; entry: RejectEntry }
  | { type: 'warning'; message: string }
  | { type: 'input'; name: string; format: RecordFormat; resumedAt?: Position; seeked?: boolean };

export interface NodeReport {
  node: string;
  batches: number;
  records: number;
  /** Of `records`: records this node was the first choice for, and records it took after their first choice failed them. */
  primaryRecords: number;
  fallbackRecords: number;
  /** Records this node did not take that went on to another node (`--to primary`, `--to any`), and the last reason. */
  handedOn: number;
  handOnError?: string;
  /** Of `records`: acknowledged by the node's own count (`{"records": N}`), and by a 2xx that carried no count. */
  ackedByCount: number;
  ackedBare: number;
  failedBatches: number;
  failedRecords: number;
  /** Records this node refused with a 400. */
  rejected: number;
  /** Request body bytes sent to this node, resends included (headers not counted). */
  bytesSent: number;
  /**
   * What the node's acknowledgements counted (the spec's FourPointResponse), summed over the
   * batches it took: records it said it does not own (`misdirected`), and records it said failed
   * (`errors`). 0 when its answers carried no such counts.
   */
  misdirected: number;
  errors: number;
  lastError?: string;
  /** The client's code for that error (`unreachable`, `timeout`, `http`, `bad_answer`, ...), `failed` for anything else. */
  lastErrorCode?: string;
}

export interface InputReport {
  name: string;
  format: RecordFormat;
  read: number;
  /** Records skipped because the saved state says they were done. */
  skipped: number;
  resumedAt?: Position;
  position: Position;
}

/**
 * Why the run ended: `done` (every input read to its end), `strict` (invalid records, nothing sent),
 * `max-errors`, `interrupted` (signal), `input-error` (an input unreadable part-way), `nodes-down`
 * (a batch failed on every node: the run stops rather than pour the rest of the input into the
 * rejects file; resume once the nodes are back).
 */
export type StopReason = 'done' | 'strict' | 'max-errors' | 'interrupted' | 'input-error' | 'nodes-down';

export interface ReplayResult {
  stopped: StopReason;
  read: number;
  /** Records acknowledged; with `--to all`, by every node. */
  written: number;
  /** Of `written`: records acknowledged by a node other than their first choice (their primary owner failed them; `--to any`: the node first picked). */
  fallbackRecords: number;
  /**
   * `--to all`: records acknowledged by some nodes but not by every node; `--to owners`: by some
   * of their owners but not all (0 for `--to any`). `written` is then by every node / every owner.
   */
  writtenToSome: number;
  /** Record acknowledgements (per node with `--to all`): by the node's count, and by a bare 2xx without one. */
  acknowledged: { byCount: number; bare: number };
  /**
   * `--to owners`: records from rejects-file lines that name the owner they are owed to, sent to
   * that node alone (their other owners took them before); `written` counts them once it acknowledged.
   */
  toNamedOwner: number;
  /**
   * A resumed run: what the earlier run(s) settled before the saved position (written, and in the
   * rejects file). This run's own counts do not include it; the exit code does.
   */
  earlier?: SettledCounts;
  rejected: number;
  /** Of `rejected`: records a node refused (400), and records of batches that failed after retries. */
  rejectedByNode: number;
  failedRecords: number;
  batches: number;
  failedBatches: number;
  retries: number;
  bytes: number;
  seconds: number;
  rejectsPath: string | undefined;
  statePath: string | undefined;
  /** Set when the input itself was unreadable or malformed part-way. */
  inputError?: Error;
  nodes: NodeReport[];
  inputs: InputReport[];
  dryRun: boolean;
}

/**
 * Where a replay's batches go (`--to any|all|owners`): each routing hands a batch on to its
 * nodes and says, once every part of it is settled, what became of its records.
 */
import type { Batch } from '../records/batch.js';
import type { SettledCounts } from './state.js';

/** What became of one batch's records (the local check's rejects are counted by the reader). */
export type BatchOutcome = Omit<SettledCounts, 'invalid'>;

export interface Route {
  /** Requests in flight (progress). */
  readonly inFlight: number;
  /** Resolves once a batch may be handed on (a free slot). */
  ready(): Promise<void>;
  /**
   * Hands a batch on to its nodes; `settle` is told its outcome once every part of it is
   * settled, and never when the run was interrupted first (the batch stays unacknowledged).
   * Resolves once the batch is handed on (which may wait for room in the nodes' queues).
   */
  send(batch: Batch, settle: (outcome: BatchOutcome) => void): Promise<void>;
  /** The end of an input: what is handed on is sent (or, when the run stops, dropped unacknowledged) and settled. */
  drain(): Promise<void>;
  /** A dry run: the nodes the batch would go to, and how many of its records each. */
  plan(batch: Batch, count: (node: number, records: number) => void): void;
}

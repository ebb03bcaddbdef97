/**
 * The three kinds of records a write can carry, each checked by the node's own rule before it is
 * sent: numeric (`/write/nnt`), text (`/write/text`) and histogram (`/histogram/write`). The
 * numeric check has a fast path on the record's bytes (batch.ts); text and histogram records are
 * parsed and checked field by field (they are rarer, and a text value can be any string).
 */
import { DATA_TYPES, nntRecordIssue, validateHistogramRecord, validateTextRecord, type DataType, type RecordIssue } from '../protocol/index.js';

/** A record kind is a data type of the store. */
export type RecordKind = DataType;
export const RECORD_KINDS: readonly RecordKind[] = DATA_TYPES;

export interface KindCheck {
  kind: RecordKind;
  /** Numeric: the nodes' smallest span; offsets must sit on it (unchecked when absent). */
  smallestSpan?: number;
  /** Histogram: the periods the nodes keep; a record's `period` must be one (unchecked when absent). */
  histogramPeriods?: readonly number[];
}

/** What the node would refuse in a record of this kind (`field: reason`), or undefined when it is valid. */
export function recordIssue(value: unknown, check: KindCheck): RecordIssue | undefined {
  switch (check.kind) {
    case 'nnt':
      return nntRecordIssue(value, check.smallestSpan === undefined ? {} : { smallestSpan: check.smallestSpan });
    case 'text': {
      const v = validateTextRecord(value);
      return v.ok ? undefined : v.issue;
    }
    case 'histogram': {
      const v = validateHistogramRecord(value, check.histogramPeriods);
      return v.ok ? undefined : v.issue;
    }
  }
}

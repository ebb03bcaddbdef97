import { DEFAULT_MAX_BUCKETS } from '../../../protocol/index.js';
import { UsageError } from '../../errors.js';
import { thousands } from '../../render/number-format.js';

export { parseSpanFlag, SPAN_FORMS } from './options.js';

/** Spans `tsnode read` picks from when --span is not given (the store's usual rollup periods). */
export const AUTO_SPANS_MS: readonly number[] = [60, 300, 1800, 3600, 10800, 86400].map((s) => s * 1000);
/** Rows an automatic span aims to stay under. */
export const AUTO_MAX_ROWS = 300;

/** Buckets a read of [startMs, endMs) returns at this span: the node floors the start to the span. */
export function bucketCount(startMs: number, endMs: number, spanMs: number): number {
  const first = Math.floor(startMs / spanMs) * spanMs;
  return Math.max(0, Math.ceil((endMs - first) / spanMs));
}

/**
 * The smallest usual span that gives at most AUTO_MAX_ROWS rows over the range; past a day per
 * bucket, whole days.
 */
export function chooseSpan(startMs: number, endMs: number, maxRows = AUTO_MAX_ROWS): number {
  for (const span of AUTO_SPANS_MS) if (bucketCount(startMs, endMs, span) <= maxRows) return span;
  const day = 86_400_000;
  let days = Math.max(1, Math.ceil((endMs - startMs) / day / maxRows));
  while (bucketCount(startMs, endMs, days * day) > maxRows) days++;
  return days * day;
}

/** Refuses a read the node would refuse anyway (its default cap), before anything is sent. */
export function checkBuckets(buckets: number, spanMs: number, maxBuckets = DEFAULT_MAX_BUCKETS): void {
  if (buckets > maxBuckets) {
    throw new UsageError(
      `--span: ${thousands(buckets)} buckets of ${spanMs} ms is more than a node answers in one read (${thousands(maxBuckets)})`,
      'use a larger --span or a shorter --start/--end range',
    );
  }
}

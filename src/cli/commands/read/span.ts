import { DEFAULT_MAX_BUCKETS } from '../../../protocol/index.js';
import { UsageError } from '../../errors.js';

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

const SPAN_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
export const SPAN_FORMS = 'a number with a unit: 500ms, 60000ms, 60s, 300s, 5m, 1h, 1d';

/** Parses --span (`300s`, `60000ms`, `5m`, `1h`, `1d`, `1.5s`) into whole milliseconds. A unit is required. */
export function parseSpanFlag(text: string): number {
  const t = text.trim();
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(t);
  if (!m) {
    const hint = /^0+(\.0+)?$/.test(t)
      ? 'a span must be greater than zero, e.g. 60s'
      : /^\d+(\.\d+)?$/.test(t)
        ? `add a unit: ${t}s for seconds or ${t}ms for milliseconds`
        : `use ${SPAN_FORMS}`;
    throw new UsageError(`--span: ${JSON.stringify(text)} is not a span`, hint);
  }
  const exact = Number(m[1]) * SPAN_UNITS[m[2]!]!;
  const ms = Math.round(exact);
  if (ms <= 0) throw new UsageError(`--span: ${JSON.stringify(text)} must be at least 1ms`, `use ${SPAN_FORMS}`);
  if (Math.abs(exact - ms) > 1e-6) throw new UsageError(`--span: ${JSON.stringify(text)} is not a whole number of milliseconds`, `use ${SPAN_FORMS}`);
  return ms;
}

/** Refuses a read the node would refuse anyway (its default cap), before anything is sent. */
export function checkBuckets(buckets: number, spanMs: number, maxBuckets = DEFAULT_MAX_BUCKETS): void {
  if (buckets > maxBuckets) {
    throw new UsageError(
      `--span: ${buckets.toLocaleString('en-US')} buckets of ${spanMs} ms is more than a node answers in one read (${maxBuckets.toLocaleString('en-US')})`,
      'use a larger --span or a shorter --start/--end range',
    );
  }
}

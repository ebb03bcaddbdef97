/**
 * Read-backs of text and histogram data: `GET /read/...` and `GET /histogram/...`. They follow
 * the store's pages (api/read-text.md, api/read-histogram.md) where that is cheap: text change
 * points in milliseconds with the end exclusive; histogram rows with the end inclusive.
 */
import { decodeHistogram, ProtocolError, type HistogramBins } from '../../protocol/index.js';
import { decodePathPart, sendJson } from '../http.js';
import { metricParam, uuidParam } from './rollup.js';
import type { Handler } from './context.js';

/** A range bound in the path: epoch seconds, optionally with a `.mmm` fraction; returns epoch ms. */
function timeParam(raw: string, field: string): number {
  const t = decodePathPart(raw, field);
  const m = /^(\d{1,15})(?:\.(\d{1,3}))?$/.exec(t);
  if (!m) throw new ProtocolError(400, 'bad_request', `${field}: ${JSON.stringify(t)} is not epoch seconds (e.g. 1700000000 or 1700000000.000)`, { field, value: t });
  return Number(m[1]) * 1000 + Number((m[2] ?? '').padEnd(3, '0'));
}

/**
 * The whole seconds a path range covers. Rows sit on whole seconds: [start, end) in ms covers ts
 * in [ceil(start), ceil(end)); [start, end] covers ts in [ceil(start), floor(end)].
 */
function range(rawStart: string, rawEnd: string, end: 'exclusive' | 'inclusive'): { fromTs: number; toTs: number } {
  const startMs = timeParam(rawStart, 'start');
  const endMs = timeParam(rawEnd, 'end');
  if (end === 'exclusive' ? endMs <= startMs : endMs < startMs) {
    const rule = end === 'exclusive' ? 'after start (the end is exclusive)' : 'at or after start (both are inclusive)';
    throw new ProtocolError(400, 'bad_request', `end ${endMs / 1000} must be ${rule}; start is ${startMs / 1000}`, { field: 'end' });
  }
  const fromTs = Math.ceil(startMs / 1000);
  return { fromTs, toTs: end === 'exclusive' ? Math.ceil(endMs / 1000) : Math.floor(endMs / 1000) + 1 };
}

/** `[[milliseconds, value], ...]`: the doc's change points are epoch milliseconds. */
export const readText: Handler = (_req, res, target, node) => {
  const [, rawStart, rawEnd, rawUuid, ...rawMetric] = target.segments;
  const { fromTs, toTs } = range(rawStart!, rawEnd!, 'exclusive');
  const uuid = uuidParam(rawUuid!);
  const metric = metricParam(rawMetric);
  const sid = node.store.findSeries(uuid, metric);
  const rows = sid === undefined ? [] : node.store.textRows(sid, fromTs, toTs);
  sendJson(res, 200, JSON.stringify(rows.map(([ts, value]) => [ts * 1000, value])));
};

/**
 * A stored histogram as bins and counts. Writes refuse what does not decode, so this fails only
 * for data stored before they did: a 500 that says so, never a row quietly left empty.
 */
function binsOf(encoded: string): HistogramBins {
  const decoded = decodeHistogram(encoded);
  if (!decoded.ok) throw new ProtocolError(500, 'internal', `a stored histogram does not decode (${decoded.reason}); it was written before the node checked histograms`);
  return decoded.bins;
}

/** `[[seconds, period, {bin: count}], ...]`, start and end inclusive (api/read-histogram.md). */
export const readHistogram: Handler = (_req, res, target, node) => {
  const [, rawStart, rawEnd, rawPeriod, rawUuid, ...rawMetric] = target.segments;
  const { fromTs, toTs } = range(rawStart!, rawEnd!, 'inclusive');
  const periodText = decodePathPart(rawPeriod!, 'period');
  const period = /^\d{1,9}$/.test(periodText) ? Number(periodText) : NaN;
  if (!node.store.histogramRollups.includes(period)) {
    throw new ProtocolError(400, 'bad_request', `period: ${JSON.stringify(periodText)} is not a configured histogram period (allowed: ${node.store.histogramRollups.join(', ')})`, {
      field: 'period',
      value: periodText,
      allowed: [...node.store.histogramRollups],
    });
  }
  const uuid = uuidParam(rawUuid!);
  const metric = metricParam(rawMetric);
  const sid = node.store.findSeries(uuid, metric);
  const rows = sid === undefined ? [] : node.store.histogramRows(sid, period, fromTs, toTs);
  sendJson(res, 200, JSON.stringify(rows.map(([ts, p, encoded]) => [ts, p, binsOf(encoded)])));
};

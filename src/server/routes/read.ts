/** Read-backs of the node's extensions: `GET /read/...` (text) and `GET /histogram/...`. */
import { ProtocolError } from '../../protocol/index.js';
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

function range(rawStart: string, rawEnd: string): { fromTs: number; toTs: number } {
  const startMs = timeParam(rawStart, 'start');
  const endMs = timeParam(rawEnd, 'end');
  if (endMs <= startMs) throw new ProtocolError(400, 'bad_request', `end must be after start (got ${endMs / 1000} <= ${startMs / 1000})`, { field: 'end' });
  // Rows sit on whole seconds: [start, end) in ms covers ts in [ceil(start), ceil(end)).
  return { fromTs: Math.ceil(startMs / 1000), toTs: Math.ceil(endMs / 1000) };
}

export const readText: Handler = (_req, res, target, node) => {
  const [, rawStart, rawEnd, rawUuid, ...rawMetric] = target.segments;
  const { fromTs, toTs } = range(rawStart!, rawEnd!);
  const uuid = uuidParam(rawUuid!);
  const metric = metricParam(rawMetric);
  const sid = node.store.findSeries(uuid, metric);
  const rows = sid === undefined ? [] : node.store.textRows(sid, fromTs, toTs);
  sendJson(res, 200, JSON.stringify(rows));
};

export const readHistogram: Handler = (_req, res, target, node) => {
  const [, rawStart, rawEnd, rawPeriod, rawUuid, ...rawMetric] = target.segments;
  const { fromTs, toTs } = range(rawStart!, rawEnd!);
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
  sendJson(res, 200, JSON.stringify(rows));
};

/** `DELETE|GET /sweep_delete` and `GET /sweep_delete/cancel`. */
import {
  CodecError,
  DEFAULT_HEADER_PREFIX,
  ProtocolError,
  parseSweepHeaders,
  sweepHeaderName,
  sweepHeaderNamesUsed,
  wireStatus,
  type SweepHeaderKey,
  type SweepRequest,
} from '../../protocol/index.js';
import { sendJson } from '../http.js';
import type { SweepPlan } from '../sweeper.js';
import type { Handler } from './context.js';

/** Checks a parsed sweep request against the node's configuration and the clock. */
export function planSweep(
  req: SweepRequest,
  cfg: { rollups: readonly number[]; histogramRollups: readonly number[]; nowMs: number; headerNames?: Record<SweepHeaderKey, string> },
): SweepPlan {
  // Errors name each header as the request spelled it (X-Snowth-... from the production store's clients).
  const name = (key: SweepHeaderKey): string => cfg.headerNames?.[key] ?? sweepHeaderName(DEFAULT_HEADER_PREFIX, key);
  if (req.before * 1000 > cfg.nowMs) {
    throw new ProtocolError(
      400,
      'invalid_header',
      `${name('deleteTime')}: ${req.before} is in the future (the node's clock says ${Math.floor(cfg.nowMs / 1000)}); a sweep deletes data before a past time`,
      { field: name('deleteTime'), value: String(req.before), now: Math.floor(cfg.nowMs / 1000) },
    );
  }
  const spans = (asked: number[] | undefined, configured: readonly number[], header: string): { spans: number[]; all: boolean } => {
    if (asked === undefined) return { spans: [...configured], all: true };
    for (const s of asked) {
      if (!configured.includes(s)) {
        throw new ProtocolError(400, 'invalid_header', `${header}: ${s} is not a configured span of this node (allowed: ${configured.join(', ')})`, {
          field: header,
          value: String(s),
          allowed: [...configured],
        });
      }
    }
    const sorted = [...asked].sort((a, b) => a - b);
    return { spans: sorted, all: configured.every((c) => sorted.includes(c)) };
  };
  const nnt = spans(req.nntRollups, cfg.rollups, name('nntRollups'));
  const hist = spans(req.histogramRollups, cfg.histogramRollups, name('histogramRollups'));
  return {
    before: req.before,
    types: req.types,
    nntSpans: nnt.spans,
    nntAll: nnt.all,
    histogramPeriods: hist.spans,
    histogramAll: hist.all,
    ...(req.requestId !== undefined ? { requestId: req.requestId } : {}),
  };
}

export const sweepDelete: Handler = (req, res, _target, node) => {
  let parsed: SweepRequest;
  try {
    parsed = parseSweepHeaders(req.headers);
  } catch (err) {
    if (err instanceof CodecError) {
      // A malformed span list: say which spans this node has, as for an unknown span.
      const allowed = /NNT-Delete-Rollups/i.test(err.message) ? node.store.rollups : /Histogram-Delete-Rollups/i.test(err.message) ? node.store.histogramRollups : undefined;
      const message = allowed ? `${err.message} (allowed: ${allowed.join(', ')})` : err.message;
      throw new ProtocolError(400, 'invalid_header', message, { value: err.value, expected: err.expected, ...(allowed ? { allowed: [...allowed] } : {}) });
    }
    throw err;
  }
  const headerNames = sweepHeaderNamesUsed(req.headers);
  const plan = planSweep(parsed, { rollups: node.store.rollups, histogramRollups: node.store.histogramRollups, nowMs: node.config.now(), headerNames });
  node.sweeper.start(plan);
  node.late.sweepStarted(plan.types, plan.before);
  sendJson(res, 200, '[]');
};

export const sweepStatus: Handler = (_req, res, _target, node) => {
  const status = wireStatus(node.sweeper.status());
  // Late data since each type's last sweep (replication/late-data.ts): `last_late_records`, `last_late_oldest`.
  for (const type of Object.keys(status) as Array<keyof typeof status>) Object.assign(status[type], node.late.attributes(type));
  // What sweeps left of each numeric span (`swept_before`, `raw_swept_before`): a dispatch read fills
  // a swept span's buckets between the two from the raw records (client: read's warning).
  const swept = node.store.sweepCutoffs();
  if (swept.spans.size) status.nnt.swept_before = [...swept.spans].map(([span, t]) => `${span}:${t}`).join(',');
  if (swept.raw > 0) status.nnt.raw_swept_before = String(swept.raw);
  sendJson(res, 200, JSON.stringify(status));
};

export const sweepCancel: Handler = (_req, res, _target, node) => {
  const status = wireStatus(node.sweeper.cancel());
  for (const type of Object.keys(status) as Array<keyof typeof status>) status[type].cancelling = 'true';
  sendJson(res, 200, JSON.stringify(status));
};

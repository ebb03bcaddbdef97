/**
 * The demo's proof: what each node still holds after the sweep, counted by reading it back (old
 * data must be gone, recent data all there), for the summary table (render.ts).
 */
import type { NodeClient } from '../../../client/node-client.js';
import { DEMO_CHECKS, DEMO_HISTOGRAM_METRIC, DEMO_METRICS, DEMO_TEXT_METRIC, demoOffsets, histogramRecords, textRecords, type DatasetOptions } from './dataset.js';

export interface NodeVerdict {
  node: string;
  nntOld: number;
  nntRecent: number;
  nntRecentExpected: number;
  textOld: number;
  textRecent: number;
  textRecentExpected: number;
  histOld: number;
  histRecent: number;
  histRecentExpected: number;
  ok: boolean;
}

/** Counts what is left on one node before the cut-off (must be nothing) and after it (must be everything). */
export async function verifyNode(client: NodeClient, opts: { dataset: DatasetOptions; oldBeforeMs: number; recentFromMs: number; signal?: AbortSignal }): Promise<NodeVerdict> {
  const { first, last } = demoOffsets(opts.dataset.nowMs, opts.dataset.days);
  const startMs = first * 1000;
  const endMs = (last + 60) * 1000;
  const call = opts.signal ? { signal: opts.signal } : {};
  const hour = 3_600_000;
  const v: NodeVerdict = {
    node: client.url,
    nntOld: 0,
    nntRecent: 0,
    nntRecentExpected: 0,
    textOld: 0,
    textRecent: 0,
    textRecentExpected: 0,
    histOld: 0,
    histRecent: 0,
    histRecentExpected: 0,
    ok: false,
  };
  for (const check of opts.dataset.checks ?? DEMO_CHECKS) {
    for (const metric of DEMO_METRICS) {
      const r = await client.readRollup({ uuid: check.id, metric, startMs, endMs, spanMs: hour, type: 'count' }, call);
      for (const p of r.points) {
        // An hour bucket is "old" if it ends before the cut-off, "recent" if it starts after it and holds data we wrote.
        if (p.timestampMs + hour <= opts.oldBeforeMs && p.value !== null && p.value > 0) v.nntOld++;
        if (p.timestampMs >= opts.recentFromMs && p.timestampMs < endMs) {
          v.nntRecentExpected++;
          if (p.value !== null && p.value > 0) v.nntRecent++;
        }
      }
    }
    const texts = await client.readText({ uuid: check.id, metric: DEMO_TEXT_METRIC, startMs, endMs }, call);
    // Text change points come back in milliseconds (as the store's read-text page shows them).
    v.textOld += texts.filter(([ms]) => ms < opts.oldBeforeMs).length;
    v.textRecent += texts.filter(([ms]) => ms >= opts.recentFromMs).length;
    const hists = await client.readHistogram({ uuid: check.id, metric: DEMO_HISTOGRAM_METRIC, startMs, endMs, periodS: opts.dataset.histogramPeriodS ?? 60 }, call);
    v.histOld += hists.filter(([t]) => t * 1000 < opts.oldBeforeMs).length;
    v.histRecent += hists.filter(([t]) => t * 1000 >= opts.recentFromMs).length;
  }
  v.textRecentExpected = textRecords(opts.dataset).filter((r) => r.offset * 1000 >= opts.recentFromMs).length;
  v.histRecentExpected = histogramRecords(opts.dataset).filter((r) => r.offset * 1000 >= opts.recentFromMs).length;
  v.ok =
    v.nntOld === 0 &&
    v.textOld === 0 &&
    v.histOld === 0 &&
    v.nntRecent === v.nntRecentExpected &&
    v.nntRecent > 0 &&
    v.textRecent === v.textRecentExpected &&
    v.histRecent === v.histRecentExpected;
  return v;
}

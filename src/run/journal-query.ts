/**
 * Questions a run asks of the journal's past records (the CLI reads the file and hands the entries
 * in; pure here): which ring nodes an earlier sweep already finished for this very request.
 */
import type { SweepRequest } from '../protocol/index.js';
import { nodeLockKey } from './lock.js';
import type { JournaledDelete, JournalEntry } from './records.js';

const sorted = (v: unknown): string => (Array.isArray(v) ? JSON.stringify([...(v as number[])].sort((a, b) => a - b)) : JSON.stringify(v ?? null));

/** Whether a `sweep.end` line deleted at least what `req` asks (same types and spans, a delete time at least as late). */
function covers(e: JournalEntry, req: SweepRequest, headerPrefix: string): boolean {
  const types = Array.isArray(e.types) ? [...(e.types as string[])].sort().join(',') : '';
  const spans = (t: 'nnt' | 'histogram', list: readonly number[] | undefined): unknown => (req.types.includes(t) ? (list?.length ? list : 'all') : null);
  return (
    typeof e.before === 'number' &&
    e.before >= req.before &&
    types === [...req.types].sort().join(',') &&
    sorted(e.nntRollups) === sorted(spans('nnt', req.nntRollups)) &&
    sorted(e.histogramRollups) === sorted(spans('histogram', req.histogramRollups)) &&
    (e.headerPrefix ?? headerPrefix) === headerPrefix
  );
}

/** Of `urls`, those an earlier sweep finished (`done`) for `req`: by URL, the latest such run's id. */
export function sweptByEarlierRuns(entries: Iterable<JournalEntry>, req: SweepRequest, headerPrefix: string, urls: readonly string[]): Map<string, string> {
  const wanted = new Map(urls.map((u) => [nodeLockKey(u), u]));
  const found = new Map<string, string>();
  for (const e of entries) {
    if (e.kind !== 'sweep.end' || !Array.isArray(e.nodes) || !covers(e, req, headerPrefix)) continue;
    for (const n of e.nodes as Array<{ node?: unknown; state?: unknown }>) {
      if (n?.state !== 'done' || typeof n.node !== 'string') continue;
      const url = wanted.get(nodeLockKey(n.node));
      if (url !== undefined) found.set(url, e.run);
    }
  }
  return found;
}

/** Of `urls`, those an earlier delete of the very same request (query, metric, account, scope) proved done (`deleted` or `nothing`): by URL, the latest such run's id. */
export function deletedByEarlierRuns(entries: Iterable<JournalEntry>, req: JournaledDelete, urls: readonly string[]): Map<string, string> {
  const key = JSON.stringify([req.query, req.metric, req.account, req.scope]);
  const wanted = new Map(urls.map((u) => [nodeLockKey(u), u]));
  const found = new Map<string, string>();
  for (const e of entries) {
    if (e.kind !== 'delete.end' || !Array.isArray(e.nodes) || JSON.stringify([e.query, e.metric, e.account, e.scope]) !== key) continue;
    for (const n of e.nodes as Array<{ node?: unknown; state?: unknown }>) {
      if ((n?.state !== 'deleted' && n?.state !== 'nothing') || typeof n.node !== 'string') continue;
      const url = wanted.get(nodeLockKey(n.node));
      if (url !== undefined) found.set(url, e.run);
    }
  }
  return found;
}

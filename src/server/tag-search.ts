/**
 * The node's side of tag queries: its metrics matched against a parsed query, walked in series-id
 * order a page at a time (the index is never read whole), and the per-metric delete steps of the
 * tag-query deletes. Every metric this node stores belongs to its one account (`--account`).
 */
import { DATA_TYPES, type DataType } from '../protocol/index.js';
import { matchesQuery, type ActivityRange, type TagQuery } from '../tags/index.js';
import { KIND_BIT } from './storage/schema.js';
import type { IndexedSeries, Store } from './store.js';

const PAGE = 1024;
const TYPES: readonly DataType[] = DATA_TYPES;
/** Time bounds standing for the beginning and the end of time in store queries (whole seconds). */
const EARLIEST = -Number.MAX_SAFE_INTEGER;
const LATEST = Number.MAX_SAFE_INTEGER;

/** The metrics of this node the query selects, in series-id order. */
export function* matchingSeries(store: Store, query: TagQuery): Generator<IndexedSeries> {
  let after = 0;
  for (;;) {
    const page = store.indexedSeries(after, PAGE);
    for (const s of page) {
      const hasActivity = (range: ActivityRange): boolean => activityIn(store, s, range);
      if (matchesQuery(query, { uuid: s.uuid, metric: s.metric, hasActivity })) yield s;
    }
    if (page.length < PAGE) return;
    after = page[page.length - 1]!.id;
  }
}

/** Whether a series has data of any type in the range (both ends inclusive). */
function activityIn(store: Store, s: IndexedSeries, range: ActivityRange): boolean {
  const from = range.start === -Infinity ? EARLIEST : Math.ceil(range.start);
  const to = range.end === Infinity ? LATEST : Math.floor(range.end) + 1;
  return typesOf(s.kinds).some((type) => store.hasData(s.id, type, from, to));
}

export function typesOf(kinds: number): DataType[] {
  return TYPES.filter((t) => (kinds & KIND_BIT[t]) !== 0);
}

/** The find answer's `type`: the store's words for the kinds of data a metric has had. */
export function typeWords(kinds: number): string {
  return typesOf(kinds)
    .map((t) => (t === 'nnt' ? 'numeric' : t))
    .join(',');
}

/** What one tag-query delete asks: everything (`full`), or one type's data before a time. */
export type DeleteScope = { kind: 'full' } | { kind: 'before'; type: DataType; before: number };

/** Whether the delete would remove anything of this metric. */
export function hasContent(store: Store, s: IndexedSeries, scope: DeleteScope): boolean {
  if (scope.kind === 'full') return true; // its index entry at least
  return (s.kinds & KIND_BIT[scope.type]) !== 0 && store.hasData(s.id, scope.type, EARLIEST, scope.before);
}

/** Deletes what the scope names of one metric. */
export function deleteScoped(store: Store, s: IndexedSeries, scope: DeleteScope): void {
  if (scope.kind === 'full') {
    store.deleteSeries(s.id);
    return;
  }
  if (scope.type === 'nnt') store.sweepNnt(s.id, scope.before, store.rollups, true);
  else if (scope.type === 'text') store.sweepText(s.id, scope.before);
  else store.sweepHistogram(s.id, scope.before, store.histogramRollups);
}

/**
 * Canonical metric names (`irondb/metric-names-tags-queries.md`): `<name>` followed by stream-tag
 * sections `|ST[cat:val,...]` and measurement-tag sections `|MT{...}` (not stored, ignored here).
 * A tag is `category:value` split at the first colon, or a bare `category` (empty value); either
 * side may be base64 in `b"..."`.
 */
export interface Tag {
  category: string;
  value: string;
}

export interface MetricName {
  /** The name without its tag sections (what `__name` matches). */
  name: string;
  /** Stream tags, in the order written. */
  tags: Tag[];
}

/** Splits a canonical metric name into its name and stream tags. Never throws: a malformed section stays part of the name. */
export function parseMetricName(metric: string): MetricName {
  const first = firstSection(metric, 0);
  if (first < 0) return { name: metric, tags: [] };
  const tags: Tag[] = [];
  let i = first;
  while (i < metric.length) {
    const open = metric.startsWith('|ST[', i) ? ']' : metric.startsWith('|MT{', i) ? '}' : null;
    if (open === null) return { name: metric, tags: [] };
    const close = metric.indexOf(open, i + 4);
    if (close < 0) return { name: metric, tags: [] };
    if (open === ']') for (const t of splitTags(metric.slice(i + 4, close))) tags.push(t);
    i = close + 1;
  }
  return { name: metric.slice(0, first), tags };
}

function firstSection(metric: string, from: number): number {
  const st = metric.indexOf('|ST[', from);
  const mt = metric.indexOf('|MT{', from);
  if (st < 0) return mt;
  if (mt < 0) return st;
  return Math.min(st, mt);
}

function splitTags(section: string): Tag[] {
  if (section === '') return [];
  return section.split(',').map((tag) => {
    const colon = tag.indexOf(':', tag.startsWith('b"') ? tag.indexOf('"', 2) : 0);
    const category = colon < 0 ? tag : tag.slice(0, colon);
    const value = colon < 0 ? '' : tag.slice(colon + 1);
    return { category: decoded(category), value: decoded(value) };
  });
}

function decoded(side: string): string {
  if (side.length >= 3 && side.startsWith('b"') && side.endsWith('"')) return Buffer.from(side.slice(2, -1), 'base64').toString('utf8');
  return side;
}

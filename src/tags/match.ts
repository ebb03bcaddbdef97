/**
 * Whether a metric matches a parsed tag query. A `category:value` element matches when any of the
 * metric's tags matches both sides; the tags are its stream tags plus the special `__name` (the
 * name without tags) and `__check_uuid`. `*:*` therefore matches every metric, as the docs say.
 * `__activity` asks the caller, which knows where the data is.
 */
import type { Tag } from './metric-name.js';
import { parseMetricName } from './metric-name.js';
import type { ActivityRange } from './activity.js';
import type { Pattern, TagQuery } from './query.js';

export interface MatchTarget {
  uuid: string;
  /** The canonical metric name, with its stream tags. */
  metric: string;
  /** Whether the metric has data in the range (both ends inclusive); absent: `__activity` never matches. */
  hasActivity?: (range: ActivityRange) => boolean;
}

export function matchesQuery(query: TagQuery, target: MatchTarget): boolean {
  const { name, tags } = parseMetricName(target.metric);
  const all: Tag[] = [{ category: '__name', value: name }, { category: '__check_uuid', value: target.uuid }, ...tags];
  return evaluate(query, all, target);
}

function evaluate(q: TagQuery, tags: readonly Tag[], target: MatchTarget): boolean {
  switch (q.kind) {
    case 'and':
      return q.items.every((item) => evaluate(item, tags, target));
    case 'or':
      return q.items.some((item) => evaluate(item, tags, target));
    case 'not':
      return !evaluate(q.item, tags, target);
    case 'activity':
      return target.hasActivity?.(q.range) ?? false;
    case 'tag': {
      const { category, value } = q;
      return tags.some((t) => matchesPattern(category, t.category) && (value === null || matchesPattern(value, t.value)));
    }
  }
}

export function matchesPattern(p: Pattern, text: string): boolean {
  if (p.kind === 'literal') return p.text === text;
  p.re.lastIndex = 0;
  return p.re.test(text);
}

/** `tsnode read`: flags in, a checked plan out, before anything is sent. */
import { DEFAULT_ROLLUP_TYPE, formatSpan, UUID_RE, type DataType, type Engine, type RollupQuery, type RollupType } from '../../../protocol/index.js';
import { UsageError } from '../../errors.js';
import { timeFields } from '../../render/json-values.js';
import { describeTime, parseTime } from '../../time.js';
import type { ReadOptions } from './options.js';
import { bucketCount, checkBuckets, chooseSpan } from './span.js';

type Output = ReadOptions['output'];
const DAY_MS = 86_400_000;

export interface ReadPlan {
  kind: DataType;
  /** The range and, for numeric reads, the span, engine and type (text and histogram reads use the range). */
  query: RollupQuery & { engine: Engine; type: RollupType };
  spanChosen: boolean;
  buckets: number;
  /** Histogram reads: the period, seconds. */
  period?: number;
  /** The nodes to read, in order (the target's; the owners on a ring): set once the target is resolved. */
  nodes: string[];
  /** `--node`: read exactly that node (no ring lookup). */
  pinned: boolean;
  compare: boolean;
  limit: number | 'none' | undefined;
  tolerance: number;
  output: Output;
}

/** Flags that shape a numeric (rollup) read only: refused with --kind text|histogram. */
const NUMERIC_ONLY = [
  ['span', '--span'],
  ['engine', '--engine'],
  ['type', '--type'],
  ['limit', '--limit'],
  ['tolerance', '--tolerance'],
] as const;

/** Validates and normalises everything before a single request is sent (the nodes come later, from the target). Throws UsageError. */
export function planRead(flags: ReadOptions & { uuid: string; metric: string }, now: number): ReadPlan {
  if (!UUID_RE.test(flags.uuid)) {
    throw new UsageError(`<uuid>: ${JSON.stringify(flags.uuid)} is not a UUID`, 'a check UUID looks like 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f');
  }
  if (flags.metric === '') throw new UsageError('<metric>: the metric name is empty', 'pass the metric name exactly as stored');
  const kind = flags.kind;
  if (kind !== 'nnt') {
    if (flags.compare) throw new UsageError(`--compare with --kind ${kind}: --compare lines up numeric rollups`, `read each node with --node, or drop --compare`);
    for (const [key, name] of NUMERIC_ONLY) {
      if (flags[key] !== undefined) throw new UsageError(`${name} applies to numeric reads (--kind nnt), not to ${kind}`, `drop ${name}`);
    }
    if (flags.output === 'chart') throw new UsageError(`--output chart with --kind ${kind}: a chart draws numeric rollups`, 'use --output table, json or csv');
  }
  if (kind === 'histogram' && flags.period === undefined) {
    throw new UsageError(
      '--kind histogram needs --period <span>',
      "the histogram period to read, one the nodes keep, e.g. --period 60 (tsnode nodes -o json lists each node's histogram_rollups)",
    );
  }
  if (kind !== 'histogram' && flags.period !== undefined)
    throw new UsageError(`--period applies to histogram reads (--kind histogram), not to ${kind}`, 'drop --period, or add --kind histogram');
  const engine = flags.engine ?? 'dispatch';
  const type = flags.type ?? DEFAULT_ROLLUP_TYPE;
  const output = flags.output;

  const endMs = parseTime(flags.end ?? 'now', '--end', now);
  const startMs = flags.start === undefined ? endMs - DAY_MS : parseTime(flags.start, '--start', now);
  if (startMs < 0) throw new UsageError(`--start: ${flags.start === undefined ? String(startMs) : JSON.stringify(flags.start)} is before 1970`, 'use a later --start');
  if (startMs >= endMs) {
    throw new UsageError(`--start ${describeTime(startMs)} is not before --end ${describeTime(endMs)}`, 'the range is [start, end): --start must be earlier than --end');
  }
  // Text change points and histogram rows are listed as stored: no buckets to count or choose.
  let spanMs = kind === 'histogram' ? flags.period! * 1000 : 1000;
  let buckets = 0;
  if (kind === 'nnt') {
    spanMs = flags.span ?? chooseSpan(startMs, endMs);
    buckets = bucketCount(startMs, endMs, spanMs);
    checkBuckets(buckets, spanMs);
  }
  if (flags.tolerance !== undefined && !flags.compare) throw new UsageError('--tolerance without --compare', "it says when two nodes' values count as equal; add --compare");
  if (flags.compare && output === 'chart') throw new UsageError('--compare with --output chart: a chart draws one node', 'use --output table, json or csv with --compare');
  if (output === 'chart' && type === 'all') {
    throw new UsageError('--type all with --output chart: a chart draws one value', 'pick one --type (e.g. average), or use table, json or csv for all members');
  }
  return {
    kind,
    query: { uuid: flags.uuid, metric: flags.metric, startMs, endMs, spanMs, engine, type },
    spanChosen: flags.span === undefined,
    buckets,
    ...(flags.period !== undefined ? { period: flags.period } : {}),
    nodes: [],
    pinned: flags.node !== undefined,
    compare: flags.compare,
    limit: flags.limit,
    tolerance: flags.tolerance ?? 0,
    output,
  };
}

/** The plan in words, for the header line on stderr. */
export function describePlan(plan: ReadPlan): string[] {
  const q = plan.query;
  const range = `${describeTime(q.startMs)} → ${describeTime(q.endMs)}`;
  if (plan.kind === 'text') return [`check ${q.uuid}`, `metric ${JSON.stringify(q.metric)}`, 'kind text', range];
  if (plan.kind === 'histogram') return [`check ${q.uuid}`, `metric ${JSON.stringify(q.metric)}`, 'kind histogram', `period ${plan.period}s`, range];
  return [
    `check ${q.uuid}`,
    `metric ${JSON.stringify(q.metric)}`,
    `type ${q.type}`,
    `span ${formatSpan(q.spanMs)}${plan.spanChosen ? ' (auto)' : ''}`,
    `engine ${q.engine}`,
    range,
  ];
}

/** What was read, for `-o json` (snake_case; times in epoch seconds and ISO); the rows follow it. */
export function readMeta(plan: ReadPlan, node?: string): Record<string, unknown> {
  const q = plan.query;
  return {
    kind: plan.kind,
    ...(node !== undefined ? { node } : {}),
    uuid: q.uuid,
    metric: q.metric,
    ...(plan.kind === 'nnt' ? { type: q.type, engine: q.engine, span: q.spanMs / 1000 } : {}),
    ...(plan.kind === 'histogram' ? { period: plan.period } : {}),
    ...timeFields('start', q.startMs),
    ...timeFields('end', q.endMs),
  };
}

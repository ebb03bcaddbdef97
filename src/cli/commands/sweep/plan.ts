/**
 * Turning `tsnode sweep` flags into a validated plan. Pure (the clock is passed in), so every
 * rule is unit-tested without a node: nothing is sent until all of this has passed.
 */
import {
  buildSweepHeaders,
  CodecError,
  DATA_TYPES,
  HEADER_PREFIXES,
  isDataType,
  parseSecondsList,
  type DataType,
  type HeaderPrefix,
  type SweepRequest,
} from '../../../protocol/index.js';
import { UsageError } from '../../errors.js';
import { parseCount } from '../../network.js';
import { describeTime, parseDuration, parseTime } from '../../time.js';

export const OUTPUTS = ['table', 'json'] as const;
export type SweepOutput = (typeof OUTPUTS)[number];

/** Raw flags as commander hands them over. */
export interface SweepFlags {
  before?: string;
  types: string;
  nntRollups?: string;
  histogramRollups?: string;
  headerPrefix: string;
  concurrency: string;
  pollInterval: string;
  lostAfter?: string;
  timeout: string;
  wait: boolean;
  dryRun: boolean;
  yes: boolean;
  force: boolean;
  skipUnreachable: boolean;
  /** Go ahead although the list misses ring nodes (issue 15's coverage check). Absent: false. */
  allowPartial?: boolean;
  output: string;
}

export interface SweepPlan {
  request: SweepRequest;
  /** The --before instant as given, in ms (before rounding down to whole seconds). */
  beforeMs: number;
  headerPrefix: HeaderPrefix;
  concurrency: number;
  intervalMs: number;
  lostAfterMs: number;
  timeoutMs: number;
  wait: boolean;
  output: SweepOutput;
  warnings: string[];
}

/** Parses `--types`: a comma list of data types, deduplicated, order kept. */
export function parseTypes(text: string, field = '--types'): DataType[] {
  const out: DataType[] = [];
  for (const raw of text.split(',')) {
    const t = raw.trim().toLowerCase();
    if (!isDataType(t)) {
      throw new UsageError(`${field}: ${JSON.stringify(raw.trim() || text)} is not a data type`, `use a comma list of ${DATA_TYPES.join(', ')}`);
    }
    if (!out.includes(t)) out.push(t);
  }
  return out;
}

export function parseHeaderPrefix(text: string): HeaderPrefix {
  const found = HEADER_PREFIXES.find((p) => p.toLowerCase() === text.trim().toLowerCase().replace(/-$/, ''));
  if (!found) throw new UsageError(`--header-prefix: ${JSON.stringify(text)} is not a known prefix`, `use ${HEADER_PREFIXES.join(' or ')} (X-Snowth for production nodes)`);
  return found;
}

function spans(text: string | undefined, field: string): number[] | undefined {
  if (text === undefined) return undefined;
  try {
    return [...new Set(parseSecondsList(text, field))];
  } catch (err) {
    if (err instanceof CodecError) throw new UsageError(err.message, `expected ${err.expected}`);
    throw err;
  }
}

export function parseOutput<T extends string>(text: string, allowed: readonly T[]): T {
  const v = text.trim().toLowerCase();
  if (!(allowed as readonly string[]).includes(v)) throw new UsageError(`--output: ${JSON.stringify(text)} is not an output format`, `use ${allowed.join(', ')}`);
  return v as T;
}

/** Validates every sweep flag against `now` (epoch ms). Throws UsageError naming the flag and value. */
export function planSweep(flags: SweepFlags, now: number): SweepPlan {
  if (flags.before === undefined || flags.before.trim() === '') {
    throw new UsageError('--before is required: the sweep deletes everything older than it', 'e.g. --before 90d or --before 2026-08-24T00:00:00Z');
  }
  const beforeMs = parseTime(flags.before, '--before', now);
  if (beforeMs > now) {
    throw new UsageError(`--before: ${JSON.stringify(flags.before)} is ${describeTime(beforeMs)}, which is in the future`, 'a sweep deletes data older than a past instant, e.g. 90d');
  }
  const warnings: string[] = [];
  const before = Math.floor(beforeMs / 1000);
  const relative = /^(now|\d+(\.\d+)?(ms|s|m|h|d|w))$/.test(flags.before.trim());
  if (beforeMs % 1000 !== 0 && !relative) warnings.push(`--before ${flags.before} rounded down to whole seconds: ${describeTime(before * 1000)} (nodes take integer seconds; nothing newer is deleted)`);
  const types = parseTypes(flags.types);
  const nntRollups = spans(flags.nntRollups, '--nnt-rollups');
  const histogramRollups = spans(flags.histogramRollups, '--histogram-rollups');
  if (nntRollups && !types.includes('nnt')) throw new UsageError(`--nnt-rollups ${flags.nntRollups} given, but --types ${types.join(',')} does not include nnt`, 'add nnt to --types or drop --nnt-rollups');
  if (histogramRollups && !types.includes('histogram')) {
    throw new UsageError(`--histogram-rollups ${flags.histogramRollups} given, but --types ${types.join(',')} does not include histogram`, 'add histogram to --types or drop --histogram-rollups');
  }
  const intervalMs = parseDuration(flags.pollInterval, '--poll-interval');
  const lostAfterMs = flags.lostAfter !== undefined ? parseDuration(flags.lostAfter, '--lost-after') : Math.max(30_000, 3 * intervalMs);
  const request: SweepRequest = { before, types, ...(nntRollups ? { nntRollups } : {}), ...(histogramRollups ? { histogramRollups } : {}) };
  return {
    request,
    beforeMs,
    headerPrefix: parseHeaderPrefix(flags.headerPrefix),
    concurrency: parseCount(flags.concurrency, '--concurrency', 1),
    intervalMs,
    lostAfterMs,
    timeoutMs: parseDuration(flags.timeout, '--timeout'),
    wait: flags.wait,
    output: parseOutput(flags.output, OUTPUTS),
    warnings,
  };
}

/** The exact request each node would receive, for --dry-run. */
export function describeRequest(node: string, plan: Pick<SweepPlan, 'request' | 'headerPrefix'>): { method: 'DELETE'; url: string; headers: Record<string, string> } {
  return { method: 'DELETE', url: `${node}/sweep_delete`, headers: buildSweepHeaders(plan.request, plan.headerPrefix) };
}

/** `nnt spans 60,300 only, text, histogram all spans`: what a request deletes, spans included. */
export function describeScope(req: SweepRequest): string {
  return req.types
    .map((t) => {
      if (t === 'text') return t;
      const list = t === 'nnt' ? req.nntRollups : req.histogramRollups;
      return list?.length ? `${t} spans ${list.join(',')} only` : `${t} all spans`;
    })
    .join(', ');
}

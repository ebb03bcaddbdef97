/**
 * Turning `tsnode sweep` flags into a validated plan. The flags arrive typed (command.ts declares
 * them with flags.ts, so a bad span, duration or type was refused while the command line was
 * read); what is left is what depends on the clock or on several flags at once. Pure (the clock is
 * passed in), so every rule is unit-tested without a node: nothing is sent until all of this has passed.
 */
import { buildSweepHeaders, type HeaderPrefix, type SweepRequest } from '../../../protocol/index.js';
import { UsageError } from '../../errors.js';
import { describeTime, isRelativeTime, parseTime } from '../../time.js';
import type { SweepOptions } from './options.js';
import type { ShortAgeInput } from './short-age.js';

/** The flags a plan is made from: every one of sweep's own (the target's and the network's are node-source.ts's). */
export type SweepFlags = Pick<
  SweepOptions,
  | 'before'
  | 'types'
  | 'nntRollups'
  | 'histogramRollups'
  | 'concurrency'
  | 'pollInterval'
  | 'lostAfter'
  | 'timeout'
  | 'wait'
  | 'output'
  | 'dryRun'
  | 'yes'
  | 'force'
  | 'skipUnreachable'
  | 'allowPartial'
  | 'allowShortAge'
  | 'allowLag'
  | 'maxClockSkew'
  | 'journal'
  | 'settle'
>;

/**
 * A sweep's flags, normalised once: what the steps after it read (never the flags themselves), so
 * each step takes what it needs from one typed object and nothing climbs back to the command line.
 */
export interface SweepPlan {
  request: SweepRequest;
  /** The --before instant as given, in ms (before rounding down to whole seconds). */
  beforeMs: number;
  /** --before was an age (90d): the cut-off comes from this host's clock, which the preflight then checks against the nodes'. */
  relative: boolean;
  /** What the run deletes, in words: `data before <time> (<types and spans>)`. */
  what: string;
  concurrency: number;
  intervalMs: number;
  lostAfterMs: number;
  timeoutMs: number;
  wait: boolean;
  warnings: string[];
  output: SweepOptions['output'];
  dryRun: boolean;
  /** --yes: no question (a short age is still typed back on a terminal: short-age.ts). */
  yes: boolean;
  force: boolean;
  allowPartial: boolean;
  /** --skip-unreachable as given (the profile's skip_unreachable is the target's). */
  skipUnreachable: boolean;
  /** --allow-lag in ms, when given (else the profile's allow_lag, else none). */
  allowLagMs: number | undefined;
  /** The check for a cut-off under an hour ago (short-age.ts). */
  shortAge: ShortAgeInput;
  /** --max-clock-skew for an age: the nodes' clocks must agree with this host's; undefined for an instant. */
  maxClockSkewMs: number | undefined;
  /** --settle: the receipt's wait before its second look. */
  settleMs: number;
  /** --journal, when given. */
  journal: string | undefined;
}

/** Validates the sweep's flags against `now` (epoch ms). Throws UsageError naming the flag and value. */
export function planSweep(flags: SweepFlags, now: number): SweepPlan {
  const { request, beforeMs, relative, warnings } = requestOf(flags, now);
  return {
    request,
    beforeMs,
    relative,
    what: `data before ${describeTime(request.before * 1000)} (${describeScope(request)})`,
    concurrency: flags.concurrency,
    intervalMs: flags.pollInterval,
    lostAfterMs: flags.lostAfter ?? Math.max(30_000, 3 * flags.pollInterval),
    timeoutMs: flags.timeout,
    wait: flags.wait,
    warnings,
    output: flags.output,
    dryRun: flags.dryRun,
    yes: flags.yes,
    force: flags.force,
    allowPartial: flags.allowPartial,
    skipUnreachable: flags.skipUnreachable,
    allowLagMs: flags.allowLag,
    shortAge: { before: flags.before ?? '', beforeMs, allowShortAge: flags.allowShortAge },
    maxClockSkewMs: relative ? flags.maxClockSkew : undefined,
    settleMs: flags.settle,
    journal: flags.journal,
  };
}

/** --before, --types and the spans as the request every node is sent, or a UsageError. */
function requestOf(flags: SweepFlags, now: number): { request: SweepRequest; beforeMs: number; relative: boolean; warnings: string[] } {
  if (flags.before === undefined || flags.before.trim() === '') {
    throw new UsageError('--before is required: the sweep deletes everything older than it', 'e.g. --before 90d or --before 2026-08-24T00:00:00Z');
  }
  const beforeMs = parseTime(flags.before, '--before', now);
  if (beforeMs > now) {
    throw new UsageError(
      `--before: ${JSON.stringify(flags.before)} is ${describeTime(beforeMs)}, which is in the future`,
      'a sweep deletes data older than a past instant, e.g. 90d',
    );
  }
  const warnings: string[] = [];
  const before = Math.floor(beforeMs / 1000);
  const relative = isRelativeTime(flags.before);
  if (beforeMs % 1000 !== 0 && !relative)
    warnings.push(`--before ${flags.before} rounded down to whole seconds: ${describeTime(before * 1000)} (nodes take integer seconds; nothing newer is deleted)`);
  const { types, nntRollups, histogramRollups } = flags;
  if (nntRollups && !types.includes('nnt'))
    throw new UsageError(`--nnt-rollups ${nntRollups.join(',')} given, but --types ${types.join(',')} does not include nnt`, 'add nnt to --types or drop --nnt-rollups');
  if (histogramRollups && !types.includes('histogram')) {
    throw new UsageError(
      `--histogram-rollups ${histogramRollups.join(',')} given, but --types ${types.join(',')} does not include histogram`,
      'add histogram to --types or drop --histogram-rollups',
    );
  }
  const request: SweepRequest = {
    before,
    types: [...types],
    ...(nntRollups ? { nntRollups: [...nntRollups] } : {}),
    ...(histogramRollups ? { histogramRollups: [...histogramRollups] } : {}),
  };
  return { request, beforeMs, relative, warnings };
}

/** The exact request each node would receive, for --dry-run. */
export function describeRequest(node: string, request: SweepRequest, headerPrefix: HeaderPrefix): { method: 'DELETE'; url: string; headers: Record<string, string> } {
  return { method: 'DELETE', url: `${node}/sweep_delete`, headers: buildSweepHeaders(request, headerPrefix) };
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

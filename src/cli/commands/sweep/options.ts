/** `tsnode sweep`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { flag, type FlagValues } from '../../flags.js';
import { clockSkewFlags, destructiveNodesFlag, networkFlags, sweepSendFlags } from '../../network-options.js';
import { MAX_TIMER_MS } from '../../values.js';
import { metricsFileFlag, settleFlag } from '../../metrics-flags.js';
import { allowLagFlag } from '../../run/flags.js';

export { HEADER_PREFIXES } from '../../network-options.js';
import { DATA_TYPES } from '../../../protocol/constants.js';

export { DATA_TYPES };

/**
 * The flags of `tsnode sweep`, which `sweep cancel` shares: commander reads a parent's options
 * wherever they appear on the command line, so `sweep cancel --yes` sets sweep's `--yes`.
 * The ones only a sweep uses are refused by `sweep cancel` (CANCEL_FLAGS lists the others).
 */
export function sweepFlags() {
  return {
    before: flag.string('--before <time>', 'delete everything strictly before this time: epoch, epoch.mmm, ISO-8601 with zone, or an age (90d, 12h, 1w)', {
      complete: { kind: 'none' },
    }),
    types: flag.choiceList('--types <list>', 'data types to delete: comma list of nnt, text, histogram', DATA_TYPES, { default: 'nnt', ignoreCase: true }),
    nntRollups: flag.spanList('--nnt-rollups <spans>', 'only these numeric spans, in seconds (60,300 or 1m,5m); default all', { complete: { kind: 'none' } }),
    histogramRollups: flag.spanList('--histogram-rollups <spans>', 'only these histogram spans, in seconds; default all', { complete: { kind: 'none' } }),
    ...sweepSendFlags(),
    ...clockSkewFlags(),
    pollInterval: flag.duration('--poll-interval <duration>', 'time between status polls of a node', { default: '2s', max: MAX_TIMER_MS }),
    lostAfter: flag.duration('--lost-after <duration>', 'a node silent this long while being polled is reported lost (default max(30s, 3 poll intervals))', { max: MAX_TIMER_MS }),
    timeout: flag.duration('--timeout <duration>', 'stop waiting after this long (sweeps keep running on the nodes)', { default: '6h' }),
    wait: flag.boolean('--no-wait', 'send the deletes and exit without waiting (nodes reported as started)'),
    dryRun: flag.boolean('--dry-run', "print each node's exact request and exit; sends nothing, not even the status check"),
    yes: flag.boolean('-y, --yes', 'do not ask for confirmation (required when not on a terminal)'),
    force: flag.boolean('--force', 'sweep nodes that are already sweeping (their running sweep is cancelled and replaced)'),
    skipUnreachable: flag.boolean('--skip-unreachable', 'leave out nodes that do not answer the status check (reported as skipped)'),
    allowPartial: flag.boolean(
      '--allow-partial',
      'go ahead although the node list misses ring nodes, the nodes disagree on the topology, or a rebalance runs (the result lists the missing nodes)',
    ),
    allowShortAge: flag.boolean(
      '--allow-short-age',
      'sweep with --before less than 1h ago (deletes nearly everything): required for it off a terminal; on one, you type the --before value instead',
    ),
    allowLag: allowLagFlag(),
    journal: flag.string('--journal <file>', 'append this run to this journal file (default sweeps.jsonl in the state dir, see --state-dir)', {
      complete: { kind: 'files' },
    }),
    output: flag.output(),
    settle: settleFlag(),
    metricsFile: metricsFileFlag(),
    ...networkFlags(),
    nodes: destructiveNodesFlag(),
  };
}
export type SweepOptions = FlagValues<ReturnType<typeof sweepFlags>>;

/** What `sweep cancel` reads of sweep's flags: the target, the network, and these. */
export const CANCEL_FLAGS = ['yes', 'dryRun', 'allowPartial', 'journal', 'output', 'concurrency', 'headerPrefix', 'metricsFile'] as const;
export type CancelOptions = Pick<SweepOptions, (typeof CANCEL_FLAGS)[number] | keyof ReturnType<typeof networkFlags>>;

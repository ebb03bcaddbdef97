/** `tsnode retention`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { Option } from 'commander';
import { completeWith } from '../../completion-hints.js';
import { flag, type Flag, type FlagValues } from '../../flags.js';
import { clockSkewFlags, networkFlags, sweepSendFlags } from '../../network-options.js';
import { MAX_TIMER_MS } from '../../values.js';
import { metricsFileFlag, settleFlag } from '../../metrics-flags.js';
import { allowLagFlag } from '../../run/flags.js';

/** Where the nodes come from and how to reach them: the network flags every command on the flag tables shares. */
export const targetFlags = {
  ...networkFlags(),
  ...sweepSendFlags(),
};
export type TargetFlagValues = FlagValues<typeof targetFlags>;

const policyFlags = {
  rule: flag.repeatable('--rule <rule>', 'a rule instead of a policy file, repeatable: nnt:60=30d, nnt:*=1y, histogram:60=30d, text=90d', { complete: { kind: 'none' } }),
};

export const retentionPlanFlags = {
  ...targetFlags,
  ...policyFlags,
  output: flag.output(),
};
export type RetentionPlanFlags = FlagValues<typeof retentionPlanFlags> & { policy?: string | undefined };

export const retentionVerifyFlags = {
  ...networkFlags(),
  concurrency: sweepSendFlags().concurrency,
  ...policyFlags,
  output: flag.output(),
  metricsFile: metricsFileFlag(),
};
export type RetentionVerifyFlags = FlagValues<typeof retentionVerifyFlags> & { policy?: string | undefined };

/** `--resume [run]`: a run id, or true for the latest unfinished run. */
const resumeFlag: Flag<string | true | undefined> = {
  option: completeWith(new Option('--resume [run]', 'continue a run with its pinned cut-offs: the run id (r-...), or without one the latest unfinished run'), { kind: 'none' }),
};

export const retentionApplyFlags = {
  ...targetFlags,
  ...policyFlags,
  output: flag.output(),
  yes: flag.boolean('-y, --yes', 'do not ask for confirmation (required when not on a terminal)'),
  skipUnreachable: flag.boolean('--skip-unreachable', 'leave out nodes that do not answer the status check (reported as skipped)'),
  allowPartial: flag.boolean('--allow-partial', 'go ahead although the node list misses ring nodes, the nodes disagree on the topology, or a rebalance runs'),
  allowLag: allowLagFlag(),
  allowShortAge: flag.boolean(
    '--allow-short-age',
    'run rules kept less than 1h (nnt:*=1s deletes nearly everything): required for them off a terminal; on one, you type the rule instead',
  ),
  resume: resumeFlag,
  ...clockSkewFlags(),
  fresh: flag.boolean('--fresh', 'start a new run even when an interrupted run of the same policy and nodes could be continued'),
  pollInterval: flag.duration('--poll-interval <duration>', 'time between status polls of a node', { default: '2s', max: MAX_TIMER_MS }),
  lostAfter: flag.duration('--lost-after <duration>', 'a node silent this long while polled is lost (default max(30s, 3 poll intervals))', { max: MAX_TIMER_MS }),
  stepTimeout: flag.duration('--step-timeout <duration>', "stop waiting for one step's sweep on a node after this long (the node stops there)", { default: '6h' }),
  journal: flag.string('--journal <file>', 'append this run to this journal (default sweeps.jsonl in the state dir, see --state-dir)', { complete: { kind: 'files' } }),
  settle: settleFlag(),
  metricsFile: metricsFileFlag(),
  // A benchmark knob (bench/receipts.bench.mjs measures what the receipt's two looks cost a run).
  receipt: flag.boolean('--no-receipt', 'take no inventory looks and journal no receipt', { hidden: true }),
};
export type RetentionApplyFlags = FlagValues<typeof retentionApplyFlags> & { policy?: string | undefined };

/** `tsnode delete`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { flag, type FlagValues } from '../../flags.js';
import { destructiveNodesFlag, networkFlags } from '../../network-options.js';
import { accountFlag } from '../../account-flag.js';
import { DATA_TYPES } from '../../../protocol/constants.js';
import { allowLagFlag } from '../../run/flags.js';

/** Metrics one confirmed call handles by default: the store's default advisory limit (DEFAULT_TAG_ADVISORY_LIMIT, not imported here: the declaration loads only commander). */
export const DEFAULT_BATCH = 10_000;
/** Metrics one node may list in the dry run and the after-look by default. */
export const DEFAULT_LIST_LIMIT = 100_000;
export const DEFAULT_MAX_ROUNDS = 1_000;

export function deleteFlags() {
  return {
    full: flag.boolean('--full', "delete every matching metric entirely: all its data of every type, and its name (the store's /full/tags)"),
    before: flag.string('--before <time>', 'delete only data before this time (epoch, ISO-8601 with zone, or an age like 90d), of the --types', { complete: { kind: 'none' } }),
    types: flag.choiceList('--types <list>', 'with --before: data types to delete, comma list of nnt, text, histogram', DATA_TYPES, { ignoreCase: true }),
    metric: flag.string('--metric <uuid>', "delete one exact metric: this check uuid and the metric name given as the argument (with its tags, e.g. 'cpu|ST[host:a]')", {
      complete: { kind: 'none' },
    }),
    account: accountFlag(),
    batch: flag.count(
      '--batch <n>',
      `metrics one confirmed call deletes on a node, sent as X-Snowth-Advisory-Limit; a node with more is called again (default: ${DEFAULT_BATCH})`,
      {
        min: 1,
        max: 1_000_000,
        complete: { kind: 'none' },
      },
    ),
    maxRounds: flag.count('--max-rounds <n>', `most confirmed calls per node before the run stops that node as partial (default: ${DEFAULT_MAX_ROUNDS})`, {
      min: 1,
      complete: { kind: 'none' },
    }),
    listLimit: flag.count('--list-limit <n>', `most metrics one node lists in the dry run and the after-look (default: ${DEFAULT_LIST_LIMIT})`, {
      min: 1,
      complete: { kind: 'none' },
    }),
    concurrency: flag.count('--concurrency <n>', 'nodes worked on at once (default: 32)', { min: 1, max: 1024, complete: { kind: 'none' } }),
    dryRun: flag.boolean('--dry-run', "ask every node what it would delete (the store's own dry run: no confirmation header) and stop"),
    yes: flag.boolean('-y, --yes', 'do not ask for confirmation (required when not on a terminal)'),
    skipUnreachable: flag.boolean('--skip-unreachable', 'leave out nodes that do not answer (reported as skipped; the exit is then 3)'),
    allowPartial: flag.boolean('--allow-partial', 'go ahead although the node list misses ring nodes, the nodes disagree on the topology, or a rebalance runs'),
    allowLag: allowLagFlag(),
    journal: flag.string('--journal <file>', 'append the receipt to this journal file (default $XDG_STATE_HOME/tsnode/sweeps.jsonl, else ~/.local/state/tsnode/sweeps.jsonl)', {
      complete: { kind: 'files' },
    }),
    output: flag.output(),
    ...networkFlags(),
    nodes: destructiveNodesFlag(),
  };
}
export type DeleteOptions = FlagValues<ReturnType<typeof deleteFlags>>;

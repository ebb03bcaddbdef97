/** `tsnode history`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { flag, type FlagValues } from '../../flags.js';

export function historyFlags() {
  return {
    since: flag.string('--since <time>', 'only runs started at or after this time (epoch, ISO-8601 with zone, or an age: 7d)', { complete: { kind: 'none' } }),
    node: flag.string('--node <url>', 'only runs that included this node (any spelling of it); shows its state', { complete: { kind: 'none' } }),
    journal: flag.string('--journal <file>', 'read this journal (default sweeps.jsonl in the state dir, see --state-dir)', {
      complete: { kind: 'files' },
    }),
    output: flag.output(),
  };
}
export type HistoryOptions = FlagValues<ReturnType<typeof historyFlags>>;

export function historyPruneFlags() {
  return {
    olderThan: flag.duration('--older-than <age>', 'remove the runs whose latest journal line is older than this (e.g. 90d, 52w); required', { complete: { kind: 'none' } }),
    dryRun: flag.boolean('--dry-run', 'list the runs that would be removed; change nothing'),
    yes: flag.boolean('--yes', 'prune without asking (needed without a terminal)'),
  };
}
export type HistoryPruneFlags = FlagValues<ReturnType<typeof historyPruneFlags>>;

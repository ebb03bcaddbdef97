import type { Command } from 'commander';
import type { Runner } from '../../action.js';
import { addFlags } from '../../flags.js';
import { historyFlags, historyPruneFlags, type HistoryOptions, type HistoryPruneFlags } from './options.js';

/** `tsnode history`: declaration only; the work is in action.ts. */
export function declareHistory(program: Command, runner: Runner): void {
  const history = program
    .command('history')
    .description('the sweeps, cancels and retention runs made from here, from the journal: what was deleted where, and what is left to catch up');
  addFlags(history, historyFlags());
  history.addHelpText(
    'after',
    `
Every tsnode sweep appends a start line before its first DELETE and an end line with every
node's final state; a run without an end line shows "no outcome recorded" (tsnode was
stopped, or is still running). "left" counts the nodes not done, less those a later sweep
finished (same types and spans, a delete time at least as late); for each run with nodes
left, the command that repeats the sweep on them is printed.
Runs that sent DELETEs carry a receipt (tsnode history show <run>): the shards removed, per node.
A retention run (tsnode retention apply) is one row however often it was resumed: each node
is "finished" or shows the step it stopped at; the nodes not finished are "left", unless a
later run of the same policy on the same nodes finished them, and its catch-up is the
"tsnode retention apply --resume <run>" command.

Examples:
  $ tsnode history
  $ tsnode history --since 7d --node db1.example.net:8112
  $ tsnode history -o json | jq -r '.runs[] | select(.pending | length > 0) | .catch_up.command'

Exit: 0 (also with no runs), 2 usage error (bad --since, --node or journal file).`,
  );
  history.action((opts: HistoryOptions) => runner(() => import('./action.js').then((m) => m.historyAction), opts));
  history
    .command('show')
    .description(
      'one run as journaled, with its receipt: per node, type and span the shards before and after, removed, oldest data and free space; for a delete, each metric before and after',
    )
    .argument('<run>', 'the run id (tsnode history lists them)')
    .addHelpText(
      'after',
      `
Options (declared on history): --journal <file>, -o/--output table|json|csv (json: the run as
"tsnode history -o json" prints it, with receipt.nodes[].spans[]; csv: one row per node, type and span).

Examples:
  $ tsnode history show r-20261122T043258Z-3f2a
  $ tsnode history show r-20261122T043258Z-3f2a -o json | jq '.receipt.nodes[].spans[] | select(.shards_removed > 0)'

Exit: 0 shown, 2 no such run or the journal cannot be read.`,
    )
    .action((run: string, _opts: unknown, cmd: Command) =>
      runner(() => import('./show-action.js').then((m) => m.historyShowAction), { ...cmd.parent!.opts<HistoryOptions>(), run }),
    );
  addFlags(
    history.command('prune').description('remove the runs older than an age from the journal (rewritten atomically) with their run files; refused while a run holds a lock'),
    historyPruneFlags(),
  )
    .addHelpText(
      'after',
      `
A run goes whole (its lines, its receipt, its retention run file) once its latest line is older
than --older-than; lines that cannot be read are kept. Options declared on history: --journal
<file>, -o/--output table|json|csv. Without a terminal, --yes is needed (--dry-run needs neither).

Examples:
  $ tsnode history prune --older-than 90d --dry-run
  $ tsnode --state-dir /srv/tsnode/state history prune --older-than 52w --yes

Exit: 0 pruned (or nothing to prune, or a dry run), 2 usage error, a lock held, or not confirmed.`,
    )
    .action((flags: HistoryPruneFlags, cmd: Command) => runner(() => import('./prune.js').then((m) => m.historyPruneAction), { ...cmd.parent!.opts<HistoryOptions>(), ...flags }));
}

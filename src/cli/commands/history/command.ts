import type { Command } from 'commander';
import type { Runner } from '../../action.js';
import { addFlags, flag, type FlagValues } from '../../flags.js';

export function historyFlags() {
  return {
    since: flag.string('--since <time>', 'only runs started at or after this time (epoch, ISO-8601 with zone, or an age: 7d)', { complete: { kind: 'none' } }),
    node: flag.string('--node <url>', 'only runs that included this node (any spelling of it); shows its state', { complete: { kind: 'none' } }),
    journal: flag.string('--journal <file>', 'read this journal (default $XDG_STATE_HOME/tsnode/sweeps.jsonl, else ~/.local/state/tsnode/sweeps.jsonl)', { complete: { kind: 'files' } }),
    output: flag.output(),
  };
}
export type HistoryOptions = FlagValues<ReturnType<typeof historyFlags>>;

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
}

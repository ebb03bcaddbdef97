/** `tsnode history`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { flag, type FlagValues } from '../../flags.js';

export function historyFlags() {
  return {
    since: flag.string('--since <time>', 'only runs started at or after this time (epoch, ISO-8601 with zone, or an age: 7d)', { complete: { kind: 'none' } }),
    node: flag.string('--node <url>', 'only runs that included this node (any spelling of it); shows its state', { complete: { kind: 'none' } }),
    journal: flag.string('--journal <file>', 'read this journal (default $XDG_STATE_HOME/tsnode/sweeps.jsonl, else ~/.local/state/tsnode/sweeps.jsonl)', {
      complete: { kind: 'files' },
    }),
    output: flag.output(),
  };
}
export type HistoryOptions = FlagValues<ReturnType<typeof historyFlags>>;

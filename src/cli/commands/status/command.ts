import type { Command } from 'commander';
import type { Runner } from '../../action.js';
import { addFlags } from '../../flags.js';
import { statusFlags, type StatusOptions } from './options.js';

/** `tsnode status`: declaration only; the work is in action.ts. */
export function declareStatus(program: Command, runner: Runner): void {
  const status = program.command('status').description('sweep status of every node (GET /sweep_delete): one row per node, every data type in it');
  addFlags(status, statusFlags());
  status.addHelpText(
    'after',
    `
Examples:
  $ tsnode status                              the current profile's nodes (tsnode profile use <name>)
  $ tsnode status --profile prod --per-type    one row per node and data type
  $ tsnode status --nodes nodes.txt --watch 5s
  $ tsnode status -o json | jq '.nodes[] | select(.ok and .status.nnt.running)'

Exit: 0 every node answered with a status, 3 some did not (unreachable, a bad answer, or lost
while watching), 1 none did, 2 usage error, 130 Ctrl-C.`,
  );
  status.action((opts: StatusOptions) => runner(() => import('./action.js').then((m) => m.statusAction), opts));
}

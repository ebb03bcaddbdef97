import type { Command } from 'commander';
import type { Runner } from '../../action.js';
import { addFlags } from '../../flags.js';
import { nodesFlags, type NodesOptions } from './options.js';

/** `tsnode nodes`: declaration only; the work is in action.ts. */
export function declareNodes(program: Command, runner: Runner): void {
  const cmd = program.command('nodes').description('every node of the ring: identity, URL, weight, reachable or not, version, spans (GET /state on each)');
  addFlags(cmd, nodesFlags());
  cmd.addHelpText(
    'after',
    `
The ring is read from the first listed node that runs a topology; ring nodes the list does not
name are asked too, at their ring address. Nodes without a topology are listed as they are.

Examples:
  $ tsnode nodes --profile prod
  $ tsnode nodes --seed http://127.0.0.1:8112
  $ tsnode nodes --nodes nodes.txt -o json | jq '.nodes[] | select(.state != "ok")'

Exit: 0 every node answered as the ring says, 3 some did not (the table says why), 1 none did,
2 usage error (a --seed that runs no topology), 130 Ctrl-C.`,
  );
  cmd.action((opts: NodesOptions) => runner(() => import('./action.js').then((m) => m.nodesAction), opts));
}

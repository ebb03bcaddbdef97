import { Option, type Command } from 'commander';
import type { Runner } from '../../action.js';
import { addNetworkOptions, addNodesOption } from '../../network-options.js';

/** `tsnode status`: declaration only; the work is in action.ts. */
export function declareStatus(program: Command, runner: Runner): void {
  const status = program
    .command('status')
    .description('sweep status of every node (GET /sweep_delete): one row per node and data type')
    .option('--watch [interval]', 'keep polling (default every 2s; 100ms to 1h) until every node is idle')
    .option('--lost-after <duration>', 'with --watch: a node silent this long is reported unreachable', '30s')
    .addOption(new Option('--output <format>', 'result format on stdout').choices(['table', 'json', 'csv']).default('table'));
  addNodesOption(status);
  addNetworkOptions(status);
  status.addHelpText(
    'after',
    `
Examples:
  $ tsnode status --nodes nodes.txt
  $ tsnode status --watch 5s
  $ tsnode status --output json | jq '.nodes[] | select(.ok and .status.nnt.running)'

Exit: 0 every node answered with a status, 3 some did not (unreachable, a bad answer, or lost
while watching), 1 none did, 2 usage error, 130 Ctrl-C.`,
  );
  status.action((opts: Record<string, unknown>) => runner(() => import('./action.js').then((m) => m.statusAction), opts as never));
}

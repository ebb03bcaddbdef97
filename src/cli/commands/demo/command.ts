import { Option, type Command } from 'commander';
import type { Runner } from '../../action.js';

export interface DemoFlags {
  keep: boolean;
  nodes: string;
  pace: string;
  /** Hidden: size of the data set (tests use a smaller one). */
  days: string;
  checks: string;
}

/** `tsnode demo`: the main job end to end on a throw-away local cluster. */
export function declareDemo(program: Command, runner: Runner): void {
  program
    .command('demo')
    .description('start a local 3-node cluster, replay two weeks of data, read it, sweep the old week away with live progress, and clean up')
    .option('--keep', 'leave the cluster and its data running at the end (prints how to use and stop it)', false)
    .addOption(new Option('--nodes <n>', 'how many nodes').default('3'))
    .addOption(new Option('--pace <ms>', 'sweep pace of each node: pause after each series a sweep handles, so progress is visible').default('250'))
    .addOption(new Option('--days <n>', 'days of data').default('14').hideHelp())
    .addOption(new Option('--checks <n>', 'checks (UUIDs) in the data set, 1-3').default('3').hideHelp())
    .addHelpText(
      'after',
      `
Every step prints the exact tsnode command it runs, so you can repeat it on your own cluster.
Needs nothing but this package: the nodes are local \`tsnode serve\` processes in a temp dir,
stopped and removed at the end (also on Ctrl-C or failure).

Examples:
  $ tsnode demo                 the whole tour, about 30 seconds
  $ npm run demo                the same, building first if needed
  $ tsnode demo --keep          keep the cluster afterwards to try commands on it
  $ tsnode demo --pace 0        sweep as fast as the nodes can`,
    )
    .action((flags: DemoFlags) => runner(() => import('./action.js').then((m) => m.demoAction), flags));
}

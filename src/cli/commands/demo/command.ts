import type { Command } from 'commander';
import type { Runner } from '../../action.js';
import { addFlags } from '../../flags.js';
import { demoFlags, type DemoFlags } from './options.js';

/** `tsnode demo`: the main job end to end on a throw-away local cluster. */
export function declareDemo(program: Command, runner: Runner): void {
  addFlags(
    program.command('demo').description('start a local 3-node cluster, replay two weeks of data, read it, sweep the old week away with live progress, and clean up'),
    demoFlags(),
  )
    .addHelpText(
      'after',
      `
Every step prints the exact tsnode command it runs, so you can repeat it on your own cluster.
Needs nothing but this package: the nodes are local \`tsnode serve\` processes in a temp dir,
stopped and removed at the end (also on Ctrl-C or failure). No profile is read or written.

Examples:
  $ tsnode demo                 the whole tour, about 30 seconds
  $ npm run demo                the same, building first if needed
  $ tsnode demo --keep          keep the cluster afterwards to try commands on it
  $ tsnode demo --pace 0        sweep as fast as the nodes can`,
    )
    .action((flags: DemoFlags) => runner(() => import('./action.js').then((m) => m.demoAction), flags));
}

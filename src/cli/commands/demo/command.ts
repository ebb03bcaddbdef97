import type { Command } from 'commander';
import type { Runner } from '../../action.js';
import { addFlags, flag, type FlagValues } from '../../flags.js';
import { deprecatedNodeCount } from '../cluster/command.js';

export const DEMO_MAX_NODES = 16;
export const DEMO_DEFAULT_NODES = 3;

export function demoFlags() {
  return {
    keep: flag.boolean('--keep', 'leave the cluster and its data running at the end (prints how to use and stop it)'),
    count: flag.count('--count <n>', `how many nodes (default: ${DEMO_DEFAULT_NODES})`, { min: 1, max: DEMO_MAX_NODES, complete: { kind: 'none' } }),
    nodes: deprecatedNodeCount(DEMO_MAX_NODES),
    pace: flag.duration('--pace <ms>', 'sweep pace of each node: pause after each series a sweep handles, so progress is visible; a bare number is milliseconds', {
      default: '250',
      bareUnit: 'ms',
      min: 0,
      max: 5000,
      complete: { kind: 'none' },
    }),
    /** Hidden: size of the data set (tests use a smaller one). */
    days: flag.count('--days <n>', 'days of data', { default: '14', min: 8, max: 60, hidden: true }),
    // dataset.ts DEMO_CHECKS has three (not imported here: declarations stay light).
    checks: flag.count('--checks <n>', 'checks (UUIDs) in the data set, 1-3', { default: '3', min: 1, max: 3, hidden: true }),
  };
}
export type DemoFlags = FlagValues<ReturnType<typeof demoFlags>>;

/** `tsnode demo`: the main job end to end on a throw-away local cluster. */
export function declareDemo(program: Command, runner: Runner): void {
  addFlags(
    program
      .command('demo')
      .description('start a local 3-node cluster, replay two weeks of data, read it, sweep the old week away with live progress, and clean up'),
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

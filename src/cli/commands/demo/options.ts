/** `tsnode demo`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { flag, type FlagValues } from '../../flags.js';
import { deprecatedNodeCount } from '../../local-cluster/node-count.js';

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

import { Option, type Command } from 'commander';
import type { Runner } from '../../action.js';
import { addNetworkOptions, addNodesOption, type NetworkFlags } from '../../network-options.js';

export interface ReadFlags extends NetworkFlags {
  start?: string;
  end?: string;
  span?: string;
  engine: string;
  type: string;
  node?: string;
  compare: boolean;
  limit?: string;
  tolerance?: string;
  output: string;
}

export function declareRead(program: Command, runner: Runner): void {
  const cmd = program
    .command('read')
    .description('Read a metric\'s rollups from a node as a table, JSON, CSV or a terminal chart (from its owners when the nodes run a ring); --compare reads every node (every owner) and shows where they differ.')
    .argument('<uuid>', 'the check the metric belongs to')
    .argument('<metric>', 'the metric name, exactly as stored (quoted if it has spaces; it is URL-encoded for you)')
    .option('--start <time>', 'first bucket: epoch, epoch.mmm, ISO-8601 or an age like 6h (default: 24h before --end)')
    .option('--end <time>', 'end of the range, exclusive (default: now)')
    .option('--span <span>', 'bucket width: 500ms, 60000ms, 60s, 300s, 5m, 1h, 1d (default: chosen for at most ~300 rows)')
    .addOption(new Option('--engine <engine>', 'data source: dispatch, nnt (rolled-up only), recalc (raw only)').default('dispatch'))
    .addOption(new Option('--type <type>', 'value to read: average, count, derive, counter, *_stddev, derive2, counter2, ..., or all').default('average'))
    .option('--node <url>', 'read from exactly this node, owner or not (instead of --nodes)');
  addNodesOption(cmd);
  cmd
    .option('--compare', 'read from every node in the list (on a ring: every owner of the metric) and show a side-by-side table; exit 3 when they differ', false)
    .option('--tolerance <fraction>', 'with --compare: values within this relative difference count as equal, e.g. 1e-9 (default: 0, exact)')
    .option('--limit <n|none>', 'ask the node for at most n rows (x-snowth-advisory-limit); none lifts a production node\'s cap')
    .addOption(new Option('-o, --output <format>', 'table, json, csv or chart').default('table'));
  addNetworkOptions(cmd);
  cmd.addHelpText(
    'after',
    `
Examples:
  $ tsnode read 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f cpu --start 6h
  $ tsnode read 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f 'disk|ST[dev:sda]' --span 1h --type all --output csv > disk.csv
  $ tsnode read 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f cpu --start 2026-11-20T00:00:00Z --end 2026-11-21T00:00:00Z --output chart
  $ tsnode read 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f cpu --nodes nodes.txt --compare

When the nodes run a ring (--seed, or a list whose nodes all run one topology), the read goes to the
metric's owners, primary first, the next owner when one cannot be reached, never another node.
The header line (node, check, metric, span, engine, range, rows) goes to stderr; stdout holds only data.
Charts use braille characters; TSNODE_CHART=ascii draws with plain ASCII.

Exit codes: 0 ok (and, with --compare, every node identical), 1 the read failed (every node failed),
2 bad input (nothing sent), 3 with --compare: nodes differ or some node failed.`,
  );
  cmd.action((uuid: string, metric: string, flags: ReadFlags) => runner(() => import('./action.js').then((m) => m.readAction), { uuid, metric, ...flags }));
}

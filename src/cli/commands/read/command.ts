import type { Command } from 'commander';
import type { Runner } from '../../action.js';
import { addFlags } from '../../flags.js';
import { readFlags, type ReadOptions } from './options.js';

export function declareRead(program: Command, runner: Runner): void {
  const cmd = program
    .command('read')
    .description(
      'Read a metric from a node: numeric rollups as a table, JSON, CSV or a terminal chart, or its text or histogram data (--kind); from its owners when the nodes run a ring. --compare reads every node (every owner) and shows where they differ.',
    )
    .argument('<uuid>', 'the check the metric belongs to')
    .argument('<metric>', 'the metric name, exactly as stored (quoted if it has spaces; it is URL-encoded for you)');
  addFlags(cmd, readFlags());
  cmd.addHelpText(
    'after',
    `
Examples:
  $ tsnode read 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f cpu --start 6h --profile prod
  $ tsnode read 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f 'disk|ST[dev:sda]' --span 1h --type all --output csv > disk.csv
  $ tsnode read 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f cpu --start 2026-11-20T00:00:00Z --end 2026-11-21T00:00:00Z --output chart
  $ tsnode read 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f cpu --nodes nodes.txt --compare
  $ tsnode read 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f version --kind text --start 30d
  $ tsnode read 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f latency --kind histogram --period 60 -o json

When the nodes run a ring (--seed, or a list whose nodes all run one topology), the read goes to the
metric's owners, primary first, the next owner when one cannot be reached, never another node.
The header line (node, check, metric, span, engine, range, rows) goes to stderr; stdout holds only data.
Charts use braille characters; TSNODE_CHART=ascii draws with plain ASCII.

Exit codes: 0 ok (and, with --compare, every node identical), 1 the read failed (every node failed),
2 bad input (nothing sent), 3 with --compare: nodes differ or some node failed.`,
  );
  cmd.action((uuid: string, metric: string, flags: ReadOptions) => runner(() => import('./action.js').then((m) => m.readAction), { ...flags, uuid, metric }));
}

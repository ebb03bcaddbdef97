import type { Command } from 'commander';
import type { Runner } from '../../action.js';
import { addFlags } from '../../flags.js';
import { deleteFlags, type DeleteOptions } from './options.js';

/** `tsnode delete '<tag query>'` and `tsnode delete --metric <uuid> <name>`: declaration only; the work is in action.ts. */
export function declareDelete(program: Command, runner: Runner): void {
  const cmd = program
    .command('delete')
    .description("delete the metrics a tag query selects (or one metric) on every node: the store's dry run first, then the delete in batches, then proof")
    .argument('<query|metric>', 'a tag query (see tsnode find), or with --metric the metric name with its tags');
  addFlags(cmd, deleteFlags());
  cmd.addHelpText(
    'after',
    `
Examples:
  $ tsnode delete 'and(host:web1)' --full --dry-run --profile prod
  $ tsnode delete 'and(host:web1)' --full --profile prod
  $ tsnode delete 'and(__name:debug.*)' --before 30d --types nnt,histogram --batch 1000 --yes --nodes nodes.txt
  $ tsnode delete --metric 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f 'cpu|ST[host:web1]' --seed http://127.0.0.1:8112

Exit: 0 every metric deleted and proven gone on every node, 3 partial (a node skipped, failed, stopped
early, or a metric reappeared: the catch-up command is printed), 1 nothing was deleted where asked,
2 usage error, a query that does not parse or a refused run (nothing deleted), 130 Ctrl-C.`,
  );
  cmd.action((target: string, opts: DeleteOptions) => runner(() => import('./action.js').then((m) => m.deleteAction), { ...opts, target }));
}

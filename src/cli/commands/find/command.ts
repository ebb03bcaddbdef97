import type { Command } from 'commander';
import type { Runner } from '../../action.js';
import { addFlags } from '../../flags.js';
import { findFlags, type FindOptions } from './options.js';

/** `tsnode find '<tag query>'`: declaration only; the work is in action.ts. */
export function declareFind(program: Command, runner: Runner): void {
  const cmd = program
    .command('find')
    .description('the metrics a tag query selects on every node, with the nodes that hold each (or only their counts)')
    .argument('<query>', 'a tag query: and(...), or(...), not(...) of category:value tags, globs (host:web*), regexes (/re/:/re/), __name, __check_uuid, __activity');
  addFlags(cmd, findFlags());
  cmd.addHelpText(
    'after',
    `
Examples:
  $ tsnode find 'and(host:web1)' --profile prod
  $ tsnode find 'and(__name:cpu*,env:prod)' --seed http://127.0.0.1:8112 -o json
  $ tsnode find 'or(region:us-east-*,region:/^eu-/)' --count --nodes nodes.txt

Exit: 0 every node answered in full, 3 some node failed or listed only --limit metrics,
1 every node failed, 2 usage error or a query that does not parse (nothing sent), 130 Ctrl-C.`,
  );
  cmd.action((query: string, opts: FindOptions) => runner(() => import('./action.js').then((m) => m.findAction), { ...opts, query }));
}

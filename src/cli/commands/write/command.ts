import type { Command } from 'commander';
import type { Runner } from '../../action.js';
import { addFlags } from '../../flags.js';
import { writeFlags, type WriteOptions } from './options.js';

export function declareWrite(program: Command, runner: Runner): void {
  const cmd = program
    .command('write')
    .description('replay records (numeric, text or histogram; JSON array or NDJSON, optionally .gz, - for stdin) into nodes, with rejects and resume')
    .argument('<file...>', 'record files: .json (array), .ndjson/.jsonl, either .gz; - reads standard input');
  addFlags(cmd, writeFlags());
  cmd.addHelpText(
    'after',
    `
Examples:
  $ tsnode write records.ndjson --profile prod             each record to its owners on the ring
  $ tsnode write records.ndjson --seed http://db1:8112
  $ tsnode write day1.json.gz day2.json.gz --node http://db1:8112 --rate 50000
  $ zcat dump.ndjson.gz | tsnode write - --nodes nodes.txt --to all
  $ tsnode write notes.ndjson --kind text --profile prod   text records ({metric, id, offset, value})
  $ tsnode write records.ndjson --resume                  continue a killed or interrupted run
  $ tsnode write records.ndjson.rejects.ndjson            replay the rejects after fixing them

Invalid records go to the rejects file (one JSON object per line: file, record, line, error,
input) and the run goes on; that file is itself valid input. With --to owners, a copy an owner
did not take is in it with the node named (node, owner): replaying the line sends it to that node.
A batch counts as written only when a node acknowledges all of it (a 2xx without a count
acknowledges the whole batch). The summary goes to stdout (-o table, json or csv).
Exit 0: all written; 3: some records rejected or batches failed (a resumed run: also in an
earlier run, until the rejects file is replayed); 2: bad usage, unreadable input, a bad saved
position or --strict with invalid records; 1: nothing could be written; 130: interrupted
(position saved, use --resume).`,
  );
  cmd.action((files: string[], opts: WriteOptions) => runner(() => import('./action.js').then((m) => m.writeAction), { ...opts, files }));
}

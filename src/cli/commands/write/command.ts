import { Option, type Command } from 'commander';
import type { Runner } from '../../action.js';
import { addNetworkOptions, addNodesOption, type NetworkFlags } from '../../network-options.js';

export interface WriteFlags extends NetworkFlags {
  node?: string;
  /** Absent: `owners` when the nodes run a ring, else `any`. */
  to?: string;
  format: string;
  batchSize: string;
  batchBytes: string;
  concurrency: string;
  method: string;
  rejects?: string;
  maxErrors?: string;
  rate?: string;
  /** Absent: the nodes' base_rollup, else 60. */
  smallestSpan?: string;
  strict: boolean;
  resume: boolean;
  force: boolean;
  state?: string;
  dryRun: boolean;
  output: string;
}

export function declareWrite(program: Command, runner: Runner): void {
  const cmd = program
    .command('write')
    .description('replay numeric records (JSON array or NDJSON, optionally .gz, - for stdin) into nodes, with rejects and resume')
    .argument('<file...>', 'record files: .json (array), .ndjson/.jsonl, either .gz; - reads standard input')
    .option('--node <url>', 'a single node (instead of --nodes)');
  addNodesOption(cmd);
  cmd
    .addOption(
      new Option(
        '--to <target>',
        'owners: each record to its write_copies owners on the ring the nodes run (the default when they run one); any: each batch to one healthy node (round-robin, failover; the default otherwise); all: every batch to every node',
      ).choices(['owners', 'any', 'all']),
    )
    .addOption(new Option('--format <format>', 'input format (auto: from the extension, else the first byte)').choices(['auto', 'json', 'ndjson']).default('auto'))
    .option('--batch-size <n>', 'records per request', '5000')
    .option('--batch-bytes <size>', 'largest request body (e.g. 4MiB, 512KiB)', '4MiB')
    .option('--concurrency <n>', 'requests in flight at once', '4')
    .addOption(new Option('--method <method>', 'HTTP method of the write').choices(['post', 'put']).default('post'))
    .option('--rejects <file>', 'where invalid or refused records go, as NDJSON (default <first input>.rejects.ndjson)')
    .option('--max-errors <n>', 'stop once more than n records were rejected (exit 3, position saved)')
    .option('--rate <records/s>', 'limit the write rate')
    .option('--smallest-span <seconds>', "the nodes' smallest rollup span: offsets must be aligned to it (default: the nodes' base_rollup from GET /state, else 60)")
    .option('--strict', 'validate every record first and send nothing if any is invalid (exit 2)', false)
    .option('--resume', 'skip what the state file says was already acknowledged', false)
    .option('--force', 'resume even if an input changed since the saved run', false)
    .option('--state <file>', 'resume state (default <first input>.tsnode-state.json, ./tsnode-state.json for stdin)')
    .option('--dry-run', 'validate and batch, send nothing; print records per node', false)
    .addOption(new Option('--output <format>', 'summary format').choices(['text', 'json']).default('text'));
  addNetworkOptions(cmd);
  cmd.addHelpText(
    'after',
    `
Examples:
  $ tsnode write records.ndjson --seed http://db1:8112     each record to its owners on the ring
  $ tsnode write records.ndjson --nodes nodes.txt
  $ tsnode write day1.json.gz day2.json.gz --node http://db1:8112 --rate 50000
  $ zcat dump.ndjson.gz | tsnode write - --nodes nodes.txt --to all
  $ tsnode write records.ndjson --resume                  continue a killed or interrupted run
  $ tsnode write records.ndjson.rejects.ndjson            replay the rejects after fixing them

Invalid records go to the rejects file (one JSON object per line: file, record, line, error,
input) and the run goes on; that file is itself valid input. With --to owners, a copy an owner
did not take is in it with the node named (node, owner): replaying the line sends it to that node. A batch counts as written only
when a node acknowledges all of it (a 2xx without a count acknowledges the whole batch).
Exit 0: all written; 3: some records rejected or batches failed (a resumed run: also in an
earlier run, until the rejects file is replayed); 2: bad usage, unreadable input, a bad saved
position or --strict with invalid records; 1: nothing could be written; 130: interrupted
(position saved, use --resume).`,
  );
  cmd.action((files: string[], opts: WriteFlags) => runner(() => import('./action.js').then((m) => m.writeAction), { ...opts, files }));
}

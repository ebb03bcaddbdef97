/** `tsnode write`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { DATA_TYPES } from '../../../protocol/constants.js';
import { flag, type FlagValues } from '../../flags.js';
import { networkFlags } from '../../network-options.js';
import { parseOutput, type OutputFormat } from '../../values.js';
import { WRITE_TARGETS } from '../../write-targets.js';

/**
 * `-o, --output`: table, json or csv; `text`, the old name of `table`, is read for one release
 * (the action warns and prints the table).
 */
export function parseWriteOutput(text: string, field: string): OutputFormat | 'text' {
  return text.trim() === 'text' ? 'text' : parseOutput(text, field);
}

/** The kinds of records, as `--kind` takes them. */
export const WRITE_KINDS = DATA_TYPES;

/** The largest request body a batch may make: a node's default limit is 64 MiB; larger is refused before anything is sent. */
export const MAX_BATCH_BYTES = 1024 ** 3;

export function writeFlags() {
  return {
    kind: flag.choice('--kind <kind>', 'what the records are: nnt (numeric, POST /write/nnt), text (/write/text) or histogram (/histogram/write)', WRITE_KINDS, {
      default: 'nnt',
    }),
    node: flag.string('--node <url>', 'a single node (instead of --nodes); a node of a ring still has the records go to their owners (--to any keeps them on it)', {
      complete: { kind: 'none' },
    }),
    // Absent: the profile's write_to, else `primary` when the nodes run a ring, else `any` (route.ts decides and says so).
    to: flag.choice(
      '--to <target>',
      "primary: each record once to its primary owner on the ring the nodes run, the next owner when it fails (the default on a ring; the store replicates to the others); owners: each record to all of its write_copies owners (a store that does not replicate); any: each batch to one healthy node (round-robin, failover; the default otherwise); all: every batch to every node (default: the profile's write_to, else as said)",
      WRITE_TARGETS,
    ),
    format: flag.choice('--format <format>', 'input format (auto: from the extension, else the first byte)', ['auto', 'json', 'ndjson'] as const, { default: 'auto' }),
    batchSize: flag.count('--batch-size <n>', 'records per request', { default: '5000', min: 1, complete: { kind: 'none' } }),
    batchBytes: flag.size('--batch-bytes <size>', 'largest request body: 4MiB, 512KiB (binary; 4m = 4MiB), 4MB (decimal)', {
      default: '4MiB',
      max: MAX_BATCH_BYTES,
      complete: { kind: 'none' },
    }),
    concurrency: flag.count('--concurrency <n>', 'requests in flight at once', { default: '4', min: 1, max: 1000, complete: { kind: 'none' } }),
    method: flag.choice('--method <method>', 'HTTP method of the write', ['post', 'put'] as const, { default: 'post' }),
    rejects: flag.string('--rejects <file>', 'where invalid or refused records go, as NDJSON (default <first input>.rejects.ndjson)', { complete: { kind: 'files' } }),
    maxErrors: flag.count('--max-errors <n>', 'stop once more than n records were rejected (exit 3, position saved)', { complete: { kind: 'none' } }),
    rate: flag.number('--rate <records/s>', 'limit the write rate', { min: 0, exclusive: true, complete: { kind: 'none' } }),
    // Absent: the nodes' base_rollup, else the profile's smallest_span, else 60 (route.ts).
    smallestSpan: flag.span(
      '--smallest-span <span>',
      "numeric records: the nodes' smallest rollup span, offsets must sit on it (default: the nodes' base_rollup from GET /state, else the profile's smallest_span, else 60)",
      { complete: { kind: 'none' } },
    ),
    strict: flag.boolean('--strict', 'validate every record first and send nothing if any is invalid (exit 2)'),
    resume: flag.boolean('--resume', 'skip what the state file says was already acknowledged'),
    allowChangedInput: flag.boolean('--allow-changed-input', 'with --resume: resume even if an input changed since the saved run (records are skipped by position)'),
    // The old spelling, read for one release (the action warns): --force means "replace a running sweep" everywhere else.
    force: flag.boolean('--force', 'deprecated spelling of --allow-changed-input', { hidden: true }),
    state: flag.string('--state <file>', 'resume state (default <first input>.tsnode-state.json, ./tsnode-state.json for stdin)', { complete: { kind: 'files' } }),
    dryRun: flag.boolean('--dry-run', 'validate and batch, send nothing; print records per node'),
    output: flag.parsed('-o, --output <format>', 'result format on stdout: table, json, csv', parseWriteOutput, {
      default: 'table',
      complete: { kind: 'values', values: ['table', 'json', 'csv'] },
    }),
    ...networkFlags(),
  };
}
export type WriteOptions = FlagValues<ReturnType<typeof writeFlags>>;

/**
 * The parser contract: argv -> the command that runs and exactly the options it receives, through
 * the real program with the actions stubbed (nothing loaded, nothing sent). A change to a flag's
 * name, default or parsing shows up here as a one-line diff. To extend: add the command's defaults
 * to DEFAULTS and its rows to CONTRACT; every command of the program must have at least one row.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { parseArgv } from '../helpers/parse.js';

/** networkFlags(): the commands on the flag tables get typed values (ms, counts) and [] for the repeatable ones. */
const NETWORK_TYPED = { connectTimeout: 3000, headersTimeout: 10_000, requestTimeout: 30_000, retries: 3, insecure: false, header: [], redact: [] };
/** The target flags of retention plan/apply: the typed network flags and --concurrency. */
const TYPED_TARGET = { ...NETWORK_TYPED, concurrency: 32 };

/** What each command receives when given nothing but its required arguments. */
const DEFAULTS: Record<string, Record<string, unknown>> = {
  serve: { host: '127.0.0.1', memory: false, lenientTimestamps: false, salvageLog: false, replication: true, traceFlush: false, sweepApi: true, requireHeader: [] },
  // No --to and no --smallest-span by default: both come from the nodes (owners on a ring, their base_rollup).
  write: {
    kind: 'nnt',
    format: 'auto',
    batchSize: 5000,
    batchBytes: 4 * 1024 ** 2,
    concurrency: 4,
    method: 'post',
    strict: false,
    resume: false,
    allowChangedInput: false,
    force: false,
    dryRun: false,
    output: 'table',
    ...NETWORK_TYPED,
  },
  // No --engine or --type by default: they shape numeric reads only (dispatch and average when absent).
  read: { kind: 'nnt', compare: false, output: 'table', ...NETWORK_TYPED },
  // No --header-prefix by default: the profile's header_prefix applies, else X-Service.
  sweep: {
    types: ['nnt'],
    concurrency: 32,
    pollInterval: 2000,
    timeout: 21_600_000,
    wait: true,
    dryRun: false,
    yes: false,
    force: false,
    skipUnreachable: false,
    allowPartial: false,
    allowShortAge: false,
    maxClockSkew: 300_000,
    output: 'table',
    settle: 0,
    ...NETWORK_TYPED,
  },
  'retention plan': { ...TYPED_TARGET, rule: [], output: 'table' },
  'retention verify': { ...TYPED_TARGET, rule: [], output: 'table' },
  'retention apply': {
    ...TYPED_TARGET,
    rule: [],
    output: 'table',
    yes: false,
    skipUnreachable: false,
    allowPartial: false,
    allowShortAge: false,
    fresh: false,
    maxClockSkew: 300_000,
    pollInterval: 2000,
    stepTimeout: 21_600_000,
    settle: 0,
    receipt: true,
  },
  status: { lostAfter: 30_000, untilCaughtUp: false, perType: false, output: 'table', ...NETWORK_TYPED },
  history: { output: 'table' },
  'cluster up': {
    basePort: 8112,
    dir: './tsnode-cluster',
    host: '127.0.0.1',
    lenientTimestamps: false,
    replication: true,
    detach: false,
    output: 'table',
    sweepApi: true,
    nodeFlags: [],
    requireHeader: [],
  },
  'cluster down': { dir: './tsnode-cluster', grace: 5000, output: 'table' },
  'cluster restart': { dir: './tsnode-cluster', grace: 5000, output: 'table' },
  'cluster pause': { dir: './tsnode-cluster', output: 'table', paused: true },
  'cluster resume': { dir: './tsnode-cluster', output: 'table', paused: false },
  demo: { keep: false, pace: 250, days: 14, checks: 3 },
  nodes: { output: 'table', ...NETWORK_TYPED },
  locate: { output: 'table', ...NETWORK_TYPED },
  find: { count: false, output: 'table', ...NETWORK_TYPED },
  delete: { full: false, dryRun: false, yes: false, skipUnreachable: false, allowPartial: false, output: 'table', ...NETWORK_TYPED },
  'profile list': { output: 'table', names: false },
  'profile show': { output: 'table' },
  'profile set': { header: [], unset: [], skipUnreachable: false },
};
// `sweep cancel` takes sweep's options (commander reads the parent's options after the subcommand);
// the sweep-only ones are refused when given (an ERRORS row below).
DEFAULTS['sweep cancel'] = DEFAULTS.sweep!;
// `history show` reads history's options (commander reads a parent's options wherever they appear).
DEFAULTS['history show'] = DEFAULTS.history!;
DEFAULTS['history prune'] = { ...DEFAULTS.history!, dryRun: false, yes: false };

const GLOBAL_DEFAULTS = { color: true, verbose: false, quiet: false, progress: true };

type Row = [argv: string[], command: string, options: Record<string, unknown>, globals?: Record<string, unknown>];

const CONTRACT: Row[] = [
  [['serve'], 'serve', {}],
  [['serve', '--account', '42'], 'serve', { account: 42 }],
  [['serve', '--port', '0', '--memory', '--rollups', '60,300', '--max-body', '4m'], 'serve', { port: 0, memory: true, rollups: [60, 300], maxBody: 4 * 1024 ** 2 }],
  [
    ['serve', '--sweep-pace', '50', '--histogram-rollups', '5m,1m', '--max-buckets', '10', '--max-body', '10MB'],
    'serve',
    { sweepPace: 50, histogramRollups: [60, 300], maxBuckets: 10, maxBody: 10_000_000 },
  ],
  [
    ['serve', '--salvage-log', '--disk-reserve', '0', '--cache-size', '64MiB', '--flush-records', '3000', '--flush-pause', '3', '--trace-flush'],
    'serve',
    { salvageLog: true, diskReserve: 0, cacheSize: 64 * 1024 ** 2, flushRecords: 3000, flushPause: 3, traceFlush: true },
  ],
  [
    ['serve', '--shards', '60=1d', '--histogram-shards', '60=7d', '--raw-shard', '1w', '--retention', 'nnt:60=52w', '--retention-interval', '30s', '--no-sweep-api'],
    'serve',
    { shards: '60=1d', histogramShards: '60=7d', rawShard: '1w', retention: 'nnt:60=52w', retentionInterval: 30_000, sweepApi: false },
  ],
  [['write', 'a.ndjson', 'b.json.gz'], 'write', { files: ['a.ndjson', 'b.json.gz'] }],
  [
    ['write', 'r.ndjson', '--seed', 'http://db1:8112', '--to', 'owners', '--smallest-span', '300'],
    'write',
    { files: ['r.ndjson'], seed: 'http://db1:8112', to: 'owners', smallestSpan: 300 },
  ],
  [
    ['write', '-', '--nodes', 'n.txt', '--to', 'all', '--batch-bytes', '1MiB', '--resume', '--header', 'A: 1', '--header', 'B: 2'],
    'write',
    { files: ['-'], nodes: 'n.txt', to: 'all', batchBytes: 1024 ** 2, resume: true, header: ['A: 1', 'B: 2'] },
  ],
  // One size rule: 4m is 4 MiB (it was 4,000,000), 4MB is 4,000,000.
  [
    ['write', 'r.ndjson', '--batch-bytes', '4m', '--batch-size', '100', '--concurrency', '8', '--rate', '2.5', '--max-errors', '0'],
    'write',
    { files: ['r.ndjson'], batchBytes: 4 * 1024 ** 2, batchSize: 100, concurrency: 8, rate: 2.5, maxErrors: 0 },
  ],
  [['write', 'r.ndjson', '--batch-bytes', '4MB', '--smallest-span', '5m', '-o', 'csv'], 'write', { files: ['r.ndjson'], batchBytes: 4_000_000, smallestSpan: 300, output: 'csv' }],
  [
    ['write', 'notes.ndjson', '--kind', 'text', '--node', 'db1', '--resume', '--allow-changed-input', '--method', 'put'],
    'write',
    { files: ['notes.ndjson'], kind: 'text', node: 'db1', resume: true, allowChangedInput: true, method: 'put' },
  ],
  // the old spelling, read for one release (the action warns)
  [['write', 'r.ndjson', '--resume', '--force', '-o', 'text'], 'write', { files: ['r.ndjson'], resume: true, force: true, output: 'text' }],
  [['--profile', 'prod', 'write', 'h.ndjson', '--kind', 'histogram', '-o', 'json'], 'write', { files: ['h.ndjson'], kind: 'histogram', output: 'json' }, { profile: 'prod' }],
  [['read', 'U', 'M'], 'read', { uuid: 'U', metric: 'M' }],
  [
    ['read', 'U', 'disk|ST[dev:sda]', '-o', 'csv', '--type', 'all', '--span', '1h', '--start', '6h'],
    'read',
    { uuid: 'U', metric: 'disk|ST[dev:sda]', output: 'csv', type: 'all', span: 3_600_000, start: '6h' },
  ],
  [['read', 'U', 'M', '--compare', '--tolerance', '1e-9', '--node', 'http://a:1'], 'read', { uuid: 'U', metric: 'M', compare: true, tolerance: 1e-9, node: 'http://a:1' }],
  [
    ['read', 'U', 'M', '--engine', 'RECALC', '--type', 'derivative', '--limit', 'none', '--span', '500ms'],
    'read',
    { uuid: 'U', metric: 'M', engine: 'recalc', type: 'derive', limit: 'none', span: 500 },
  ],
  [
    ['read', 'U', 'M', '--kind', 'text', '--start', '30d', '--seed', 'db1', '-o', 'json'],
    'read',
    { uuid: 'U', metric: 'M', kind: 'text', start: '30d', seed: 'db1', output: 'json' },
  ],
  [
    ['read', 'U', 'M', '--kind', 'histogram', '--period', '1m', '--limit', '10', '--retries', '0'],
    'read',
    { uuid: 'U', metric: 'M', kind: 'histogram', period: 60, limit: 10, retries: 0 },
  ],
  [['--profile', 'prod', 'read', 'U', 'M', '--node', 'db2', '-o', 'chart'], 'read', { uuid: 'U', metric: 'M', node: 'db2', output: 'chart' }, { profile: 'prod' }],
  [['sweep', '--before', '90d', '--types', 'nnt,histogram', '--yes', '--no-wait'], 'sweep', { before: '90d', types: ['nnt', 'histogram'], yes: true, wait: false }],
  [['sweep', '--before', '30m', '--yes', '--allow-short-age'], 'sweep', { before: '30m', yes: true, allowShortAge: true }],
  [
    ['sweep', '--before', '1d', '--dry-run', '--header-prefix', 'x-snowth', '--nnt-rollups', '300,1m', '--histogram-rollups', '60', '-y', '-o', 'csv'],
    'sweep',
    { before: '1d', dryRun: true, headerPrefix: 'X-Snowth', nntRollups: [60, 300], histogramRollups: [60], yes: true, output: 'csv' },
  ],
  [
    [
      'sweep',
      '--before',
      '1d',
      '--poll-interval',
      '500ms',
      '--lost-after',
      '1m',
      '--timeout',
      '2h',
      '--concurrency',
      '4',
      '--force',
      '--skip-unreachable',
      '--allow-partial',
      '--seed',
      'http://db1:8112',
    ],
    'sweep',
    { before: '1d', pollInterval: 500, lostAfter: 60_000, timeout: 7_200_000, concurrency: 4, force: true, skipUnreachable: true, allowPartial: true, seed: 'http://db1:8112' },
  ],
  [['--profile', 'prod', 'sweep', '--before', '1d', '--yes'], 'sweep', { before: '1d', yes: true }, { profile: 'prod' }],
  [['sweep', 'cancel'], 'sweep cancel', {}],
  [['sweep', 'cancel', '--nodes', 'a:1,b:2', '--yes', '--output', 'json'], 'sweep cancel', { nodes: 'a:1,b:2', yes: true, output: 'json' }],
  [['sweep', 'cancel', '-o', 'csv', '--dry-run', '--concurrency', '8', '--profile', 'prod'], 'sweep cancel', { output: 'csv', dryRun: true, concurrency: 8 }, { profile: 'prod' }],
  [['retention', 'plan', 'retention.yaml'], 'retention plan', { policy: 'retention.yaml' }],
  [
    ['retention', 'plan', '--rule', 'nnt:60=30d', '--rule', 'text=90d', '-o', 'json', '--nodes', 'a:1', '--header-prefix', 'x-snowth'],
    'retention plan',
    { rule: ['nnt:60=30d', 'text=90d'], output: 'json', nodes: 'a:1', headerPrefix: 'X-Snowth' },
  ],
  [
    [
      'retention',
      'apply',
      'p.yml',
      '--yes',
      '--allow-partial',
      '--skip-unreachable',
      '--poll-interval',
      '500ms',
      '--step-timeout',
      '1h',
      '--max-clock-skew',
      '30s',
      '--journal',
      'j.jsonl',
      '--seed',
      'http://db1:8112',
      '--allow-lag',
      '30s',
      '--allow-short-age',
    ],
    'retention apply',
    {
      policy: 'p.yml',
      yes: true,
      allowPartial: true,
      skipUnreachable: true,
      pollInterval: 500,
      stepTimeout: 3_600_000,
      maxClockSkew: 30_000,
      journal: 'j.jsonl',
      seed: 'http://db1:8112',
      allowLag: 30_000,
      allowShortAge: true,
    },
  ],
  [['retention', 'apply', '--resume'], 'retention apply', { resume: true }],
  [['retention', 'apply', 'p.yaml', '--no-receipt'], 'retention apply', { policy: 'p.yaml', receipt: false }],
  [['retention', 'verify', 'p.yaml', '-o', 'json', '--nodes', 'a:1'], 'retention verify', { policy: 'p.yaml', output: 'json', nodes: 'a:1' }],
  [
    ['retention', 'apply', '--resume', 'r-20261122T043258Z-3f2a', '--lost-after', '1m', '-o', 'csv', '--profile', 'prod'],
    'retention apply',
    { resume: 'r-20261122T043258Z-3f2a', lostAfter: 60_000, output: 'csv' },
    { profile: 'prod' },
  ],
  [['history'], 'history', {}],
  [['history', '--since', '7d', '--node', 'db1:8112', '--journal', 'j.jsonl', '--output', 'csv'], 'history', { since: '7d', node: 'db1:8112', journal: 'j.jsonl', output: 'csv' }],
  [['history', '-o', 'json'], 'history', { output: 'json' }],
  [['history', 'show', 'abc123', '--journal', 'j.jsonl'], 'history show', { run: 'abc123', journal: 'j.jsonl' }],
  [['history', 'show', 'r-20261122T043258Z-3f2a', '-o', 'json'], 'history show', { run: 'r-20261122T043258Z-3f2a', output: 'json' }],
  [['history', 'prune', '--older-than', '90d', '--dry-run'], 'history prune', { olderThan: 90 * 86_400_000, dryRun: true }],
  [
    ['history', 'prune', '--older-than', '1w', '--yes', '--journal', 'j.jsonl', '-o', 'json'],
    'history prune',
    { olderThan: 604_800_000, yes: true, journal: 'j.jsonl', output: 'json' },
  ],
  [['--state-dir', '/srv/state', 'history'], 'history', {}, { stateDir: '/srv/state' }],
  [['sweep', '--before', '1d', '--journal', 'j.jsonl'], 'sweep', { before: '1d', journal: 'j.jsonl' }],
  [['status'], 'status', {}],
  [['status', '--watch', '--output', 'csv'], 'status', { watch: 2000, output: 'csv' }],
  [
    ['status', '--watch', '5s', '--cacert', 'ca.pem', '--insecure', '--per-type', '-o', 'json'],
    'status',
    { watch: 5000, cacert: 'ca.pem', insecure: true, perType: true, output: 'json' },
  ],
  [
    [
      'status',
      '--seed',
      'db1',
      '--connect-timeout',
      '1s',
      '--retries',
      '0',
      '--deadline',
      '2m',
      '--max-answer',
      '1MiB',
      '--header',
      'A: 1',
      '--redact',
      'X-Key',
      '--lost-after',
      '5s',
    ],
    'status',
    { seed: 'db1', connectTimeout: 1000, retries: 0, deadline: 120_000, maxAnswer: 1024 ** 2, header: ['A: 1'], redact: ['X-Key'], lostAfter: 5000 },
  ],
  [['nodes', '--seed', 'http://db1:8112', '--output', 'csv'], 'nodes', { seed: 'http://db1:8112', output: 'csv' }],
  [['nodes', '--nodes', 'a:1,b:2', '-o', 'json', '--cert', 'c.pem', '--key', 'k.pem'], 'nodes', { nodes: 'a:1,b:2', output: 'json', cert: 'c.pem', key: 'k.pem' }],
  [['delete', 'and(host:a)', '--full', '--nodes', 'a:1'], 'delete', { target: 'and(host:a)', full: true, nodes: 'a:1' }],
  [
    [
      'delete',
      'x',
      '--metric',
      '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f',
      '--before',
      '30d',
      '--types',
      'nnt,text',
      '--batch',
      '1000',
      '--max-rounds',
      '5',
      '--list-limit',
      '9',
      '--yes',
    ],
    'delete',
    { target: 'x', metric: '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', before: '30d', types: ['nnt', 'text'], batch: 1000, maxRounds: 5, listLimit: 9, yes: true },
  ],
  [['find', 'and(host:a)', '--nodes', 'a:1'], 'find', { query: 'and(host:a)', nodes: 'a:1' }],
  [['find', 'and(*:*)', '--count', '--account', '7', '--limit', '5', '-o', 'json'], 'find', { query: 'and(*:*)', count: true, account: 7, limit: 5, output: 'json' }],
  [['locate', '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', 'cpu', '--nodes', 'a:1'], 'locate', { uuid: '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', metric: 'cpu', nodes: 'a:1' }],
  [
    ['locate', '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', 'cpu', '-o', 'csv', '--headers-timeout', '2s'],
    'locate',
    { uuid: '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', metric: 'cpu', output: 'csv', headersTimeout: 2000 },
  ],
  [['cluster', 'up'], 'cluster up', {}],
  [
    ['cluster', 'up', '--retention', 'nnt:60=52w', '--retention-interval', '5m', '--no-sweep-api', '--raw-shard', '1d', '--node-flags', '2:--shards 60=2d'],
    'cluster up',
    { retention: 'nnt:60=52w', retentionInterval: '5m', sweepApi: false, rawShard: '1d', nodeFlags: ['2:--shards 60=2d'] },
  ],
  [['cluster', 'up', '--count', '5', '--base-port', '0', '--detach', '-o', 'json'], 'cluster up', { count: 5, basePort: 0, detach: true, output: 'json' }],
  [['cluster', 'up', '--sweep-pace', '250', '--write-copies', '3', '--lenient-timestamps'], 'cluster up', { sweepPace: 250, writeCopies: 3, lenientTimestamps: true }],
  // the old spelling, read for one release (the action warns)
  [['cluster', 'up', '--nodes', '5'], 'cluster up', { nodes: 5 }],
  [['--profile', 'lab', 'cluster', 'up', '--detach'], 'cluster up', { detach: true }, { profile: 'lab' }],
  [['cluster', 'down', '--grace', '1s'], 'cluster down', { grace: 1000 }],
  [['cluster', 'down', '--dir', 'c', '-o', 'csv'], 'cluster down', { dir: 'c', output: 'csv' }],
  [['cluster', 'pause', '2'], 'cluster pause', { node: '2' }],
  [['cluster', 'restart'], 'cluster restart', { node: undefined }],
  [
    ['cluster', 'restart', 'http://127.0.0.1:8113', '--dir', 'c', '--grace', '1s', '-o', 'json'],
    'cluster restart',
    { node: 'http://127.0.0.1:8113', dir: 'c', grace: 1000, output: 'json' },
  ],
  [['cluster', 'resume', 'http://127.0.0.1:8113', '--dir', 'c', '-o', 'json'], 'cluster resume', { node: 'http://127.0.0.1:8113', dir: 'c', output: 'json' }],
  [['cluster', 'up', '--no-replication'], 'cluster up', { replication: false }],
  [
    ['serve', '--no-replication', '--journal-dir', 'j', '--replay-batch', '100', '--replay-concurrency', '2'],
    'serve',
    { replication: false, journalDir: 'j', replayBatch: 100, replayConcurrency: 2 },
  ],
  [['demo', '--keep', '--pace', '0'], 'demo', { keep: true, pace: 0 }],
  [['demo', '--count', '2', '--pace', '1s'], 'demo', { count: 2, pace: 1000 }],
  [['demo', '--nodes', '2'], 'demo', { nodes: 2 }],
  [['completion', 'fish'], 'completion', { shell: 'fish', program: expect.any(Command) }],
  [['profile', 'list'], 'profile list', {}],
  [['profile', 'list', '--names'], 'profile list', { names: true }],
  [['profile', 'show'], 'profile show', { name: undefined }],
  [['profile', 'show', 'prod', '-o', 'json'], 'profile show', { name: 'prod', output: 'json' }],
  [['profile', 'use', 'lab'], 'profile use', { name: 'lab' }],
  [['profile', 'remove', 'lab'], 'profile remove', { name: 'lab' }],
  [
    [
      'profile',
      'set',
      'prod',
      '--nodes',
      'a,b',
      '--header-prefix',
      'x-snowth',
      '--smallest-span',
      '1m',
      '--nnt-rollups',
      '300,60',
      '--header',
      'Authorization: Bearer ${T}',
      '--unset',
      'cacert',
    ],
    'profile set',
    { name: 'prod', nodes: 'a,b', headerPrefix: 'X-Snowth', smallestSpan: 60, nntRollups: [60, 300], header: ['Authorization: Bearer ${T}'], unset: ['cacert'] },
  ],
  // Global flags, before or after the command.
  [['--profile', 'prod', 'status'], 'status', {}, { profile: 'prod' }],
  [['status', '--profile', 'prod', '-q'], 'status', {}, { profile: 'prod', quiet: true }],
  [['sweep', 'cancel', '--no-progress', '--no-color', '-v'], 'sweep cancel', {}, { progress: false, color: false, verbose: true }],
];

describe('parser contract: argv -> command and options', () => {
  it.each(CONTRACT)('%j', async (argv, command, options, globals = {}) => {
    const r = await parseArgv(argv);
    if (!r.ok) throw new Error(`expected ${JSON.stringify(argv)} to parse, got ${'error' in r ? r.error.message : 'help'}`);
    expect(r.command).toBe(command);
    expect(r.options).toEqual({ ...DEFAULTS[command], ...options });
    expect(r.globals).toEqual({ ...GLOBAL_DEFAULTS, ...globals });
  });

  it('every command of the program has a row', async () => {
    const paths: string[] = [];
    const visit = (cmd: Command, path: string): void => {
      if (cmd.commands.length === 0) paths.push(path);
      for (const sub of cmd.commands) visit(sub, path ? `${path} ${sub.name()}` : sub.name());
    };
    visit(await buildProgram(async () => {}), '');
    const covered = new Set(CONTRACT.map((row) => row[1]));
    const missing = paths.filter((p) => !covered.has(p));
    expect(missing, `no parser contract row for: ${missing.join(', ')} (add one to CONTRACT in test/unit/cli-parser.test.ts)`).toEqual([]);
  });

  it('no command declares an option the program reads globally (the program would take it first)', async () => {
    const clashes: string[] = [];
    const program = await buildProgram(async () => {});
    // The program's own options, as main.ts declares them (and help, which commander adds).
    const globalFlags = new Set([...program.options.flatMap((o) => [o.short, o.long]), '-h', '--help']);
    expect(globalFlags).toContain('--profile');
    const visit = (cmd: Command, path: string): void => {
      for (const o of cmd.options) for (const f of [o.short, o.long]) if (path && f && globalFlags.has(f)) clashes.push(`${path} ${f}`);
      for (const sub of cmd.commands) visit(sub, path ? `${path} ${sub.name()}` : sub.name());
    };
    visit(program, '');
    expect(clashes).toEqual([]);
  });
});

/** argv -> the usage error (code, message, hint) the user sees; exit 2 for all of them. */
const ERRORS: Array<[string[], string, RegExp, RegExp]> = [
  [['swep'], 'unknown_command', /^unknown command "swep" for tsnode$/, /^did you mean sweep\? \(tsnode --help lists the commands\)$/],
  [['cluster', 'upp'], 'unknown_command', /^unknown command "upp" for tsnode cluster$/, /did you mean up\?/],
  [['sweep', '--befor', '1d'], 'unknown_option', /^unknown option --befor for tsnode sweep$/, /^did you mean --before\? \(tsnode sweep --help lists the options\)$/],
  [['sweep', 'cancel', '--yse'], 'unknown_option', /^unknown option --yse for tsnode sweep cancel$/, /did you mean --yes\?/],
  [['status', '--outptu', 'json'], 'unknown_option', /^unknown option --outptu/, /did you mean --output\?/],
  [['serve', '--bogus'], 'unknown_option', /^unknown option --bogus for tsnode serve$/, /^tsnode serve --help lists the options$/],
  [['-x'], 'unknown_option', /^unknown option -x for tsnode$/, /^tsnode --help lists the options$/],
  [['status', '--output', 'jsno'], 'invalid_value', /^--output: "jsno" is not one of table, json, csv$/, /^did you mean json\?$/],
  [['sweep', '--output', 'yaml'], 'invalid_value', /^--output: "yaml" is not one of table, json, csv$/, /^use one of: table, json, csv$/],
  [['sweep', '--before', '1d', '--types', 'nnt,txt'], 'invalid_value', /^--types: "txt" is not one of nnt, text, histogram$/, /did you mean text\?/],
  [['sweep', '--before', '1d', '--nnt-rollups', '60,'], 'invalid_value', /^--nnt-rollups: item 2 of "60," is empty$/, /comma list of spans/],
  [['sweep', '--before', '1d', '--poll-interval', '2'], 'invalid_value', /^--poll-interval: "2" is not a duration \(a bare number has no unit/, /500ms/],
  [['sweep', 'cancel', '--before', '1d', '--force'], 'usage', /^--before, --force: options of tsnode sweep, not of tsnode sweep cancel \(nothing was sent\)$/, /drop them/],
  [['history', '--output', 'yaml'], 'invalid_value', /^--output: "yaml" is not one of table, json, csv$/, /use one of/],
  [['completion', 'pwsh'], 'invalid_value', /^tsnode completion: "pwsh" is not one of bash, zsh, fish$/, /use one of: bash, zsh, fish/],
  [['profile', 'list', '-o', 'csv'], 'invalid_value', /^--output: "csv" is not one of table, json$/, /use one of/],
  [['profile', 'set', 'p', '--smallest-span', '0'], 'invalid_value', /^--smallest-span: "0" is not a span$/, /whole seconds/],
  [['profile', 'set', 'p', '--header-prefix', 'X-Snoth'], 'invalid_value', /^--header-prefix: "X-Snoth" is not one of X-Service, X-Snowth$/, /did you mean X-Snowth\?/],
  [['status', '--watch', '30d'], 'invalid_value', /^--watch: "30d" is outside 100ms\.\.1h/, /e\.g\. --watch 5s/],
  [['status', '--retries', '101'], 'invalid_value', /^--retries: 101 is out of range$/, /from 0 to 100/],
  [['status', '--connect-timeout', '30'], 'invalid_value', /^--connect-timeout: "30" is not a duration \(a bare number has no unit/, /500ms/],
  [['nodes', '--max-answer', '1TiB'], 'invalid_value', /^--max-answer: "1TiB" is larger than 512MiB$/, /at most 512MiB/],
  [['cluster', 'up', '--count', '0'], 'invalid_value', /^--count: 0 is out of range$/, /from 1 to 64/],
  [['cluster', 'up', '--nodes', 'a:1,b:2'], 'invalid_value', /^--nodes: "a:1,b:2" is not a node count \(this command starts nodes/, /use --count <n>/],
  [['cluster', 'up', '--base-port', '70000'], 'invalid_value', /^--base-port: 70000 is out of range$/, /from 0 to 65535/],
  [['demo', '--pace', 'fast'], 'invalid_value', /^--pace: "fast" is not a duration$/, /500ms/],
  [['serve', '--port', 'eighty'], 'invalid_value', /^--port: "eighty" is not a whole number$/, /from 0 to 65535/],
  [['read', 'U'], 'missing_argument', /^tsnode read: the <metric> argument is missing$/, /^usage: tsnode read \[options\] <uuid> <metric>$/],
  [['read', 'U', 'M', '--kind', 'txt'], 'invalid_value', /^--kind: "txt" is not one of nnt, text, histogram$/, /did you mean text\?/],
  [['read', 'U', 'M', '--span', '300'], 'invalid_value', /^--span: "300" is not a span$/, /add a unit: 300s for seconds or 300ms/],
  [['read', 'U', 'M', '--type', 'mean'], 'invalid_value', /^--type: "mean" is not a rollup type$/, /use one of: count, average/],
  [['read', 'U', 'M', '--output', 'xml'], 'invalid_value', /^--output: "xml" is not one of table, json, csv, chart$/, /use one of/],
  [['read', 'U', 'M', '--period', '0'], 'invalid_value', /^--period: "0" is not a span$/, /whole seconds/],
  [['write', 'f', '--output', 'xml'], 'invalid_value', /^--output: "xml" is not one of table, json, csv$/, /use one of: table, json, csv/],
  [['write', 'f', '--batch-bytes', '4 megs'], 'invalid_value', /^--batch-bytes: "4 megs" is not a size$/, /binary; also 4M, 4m/],
  [['write', 'f', '--batch-bytes', '2GiB'], 'invalid_value', /^--batch-bytes: "2GiB" is larger than 1GiB$/, /at most 1GiB/],
  [['write', 'f', '--rate', '0'], 'invalid_value', /^--rate: 0 is out of range$/, /> 0/],
  [['write', 'f', '--concurrency', '0'], 'invalid_value', /^--concurrency: 0 is out of range$/, /from 1 to 1000/],
  [['write', 'f', '--kind', 'numeric'], 'invalid_value', /^--kind: "numeric" is not one of nnt, text, histogram$/, /use one of/],
  [['profile', 'use'], 'missing_argument', /^tsnode profile use: the <name> argument is missing$/, /usage: tsnode profile use/],
  [['retention', 'apply', 'p.yaml', '--poll-interval', '0s'], 'invalid_value', /^--poll-interval: "0s" must be longer than zero$/, /e\.g\. 1s/],
  [['retention', 'plan', '-o', 'yaml'], 'invalid_value', /^--output: "yaml" is not one of table, json, csv$/, /use one of/],
  [['sweep', '--before'], 'missing_argument', /^--before needs a value$/, /^--before <time>: delete everything strictly before/],
  [['completion', 'bash', 'zsh'], 'too_many_arguments', /^tsnode completion takes 1 argument, got 2 \("zsh"\)$/, /usage: tsnode completion/],
];

describe('parser contract: argv -> usage error', () => {
  it.each(ERRORS)('%j', async (argv, code, message, hint) => {
    const r = await parseArgv(argv);
    if (r.ok || !('error' in r)) throw new Error(`expected ${JSON.stringify(argv)} to be refused`);
    expect(r.error.code).toBe(code);
    expect(r.error.exitCode).toBe(2);
    expect(r.error.message).toMatch(message);
    expect(r.error.hint).toMatch(hint);
  });

  it('help is help, not an error', async () => {
    expect(await parseArgv(['--help'])).toEqual({ ok: false, help: true });
    expect(await parseArgv(['sweep', 'cancel', '--help'])).toEqual({ ok: false, help: true });
  });
});

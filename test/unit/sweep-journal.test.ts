import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assembleRuns, filterRuns } from '../../src/cli/commands/history/runs.js';
import { carriedFlags, catchUpFor, shellQuote } from '../../src/run/catch-up.js';
import { Journal, journalPath, readJournal, type JournalEntry } from '../../src/cli/journal.js';

const T = 1_690_000_000;

describe('catch-up command', () => {
  it('repeats the same epoch, types, spans and header prefix on just the given nodes', () => {
    const c = catchUpFor({ before: T, types: ['nnt', 'histogram'], nntRollups: [60], histogramRollups: [300, 60] }, 'X-Snowth', ['http://a:8112', 'http://b:8112']);
    expect(c).toEqual({
      nodes: ['http://a:8112', 'http://b:8112'],
      command: `tsnode sweep --before ${T} --types nnt,histogram --nnt-rollups 60 --histogram-rollups 300,60 --header-prefix X-Snowth --nodes http://a:8112,http://b:8112`,
      addBack: [],
    });
    expect(catchUpFor({ before: T, types: ['nnt'] }, 'X-Service', [])).toBeUndefined();
  });

  it('never prints a header value: the flags are named to add back; TLS files are carried as absolute paths', () => {
    const flags = carriedFlags(
      { header: ['Authorization: Bearer s3cr3t', 'X-Tenant: acme'], cacert: 'ca.pem', insecure: true, redact: ['X-Tenant'] },
      { TSNODE_HEADERS: 'Cookie: sid=abc' },
      '/home/op',
    );
    const c = catchUpFor({ before: T, types: ['nnt'] }, 'X-Service', ['http://a:8112'], flags)!;
    expect(c.command).toBe(`tsnode sweep --before ${T} --types nnt --nodes http://a:8112 --cacert /home/op/ca.pem --insecure --redact X-Tenant`);
    expect(JSON.stringify(c)).not.toMatch(/s3cr3t|acme|sid=abc/);
    expect(c.addBack).toEqual(['--header (2 given; values not shown)', 'TSNODE_HEADERS (read from the environment again when set)']);
  });

  it('names the profile the settings came from (its headers are read again, never printed) and the journal', () => {
    const flags = carriedFlags({ header: [] }, {}, '/home/op', { profile: 'prod', journal: 'j.jsonl' });
    const c = catchUpFor({ before: T, types: ['nnt'] }, 'X-Snowth', ['http://a:8112'], flags)!;
    expect(c.command).toBe(`tsnode sweep --before ${T} --types nnt --header-prefix X-Snowth --nodes http://a:8112 --profile prod --journal /home/op/j.jsonl`);
    expect(c.addBack).toEqual([]);
  });

  it('quotes for the shell only when needed', () => {
    expect(shellQuote('http://a:1,http://b:2')).toBe('http://a:1,http://b:2');
    expect(shellQuote("/tmp/my ca's.pem")).toBe(`'/tmp/my ca'\\''s.pem'`);
  });
});

describe('journal file', () => {
  it('lives under $XDG_STATE_HOME/tsnode, else ~/.local/state/tsnode; --journal wins; a relative XDG_STATE_HOME is ignored', () => {
    expect(journalPath({ env: { XDG_STATE_HOME: '/s', HOME: '/h' }, cwd: '/w' })).toBe('/s/tsnode/sweeps.jsonl');
    expect(journalPath({ env: { HOME: '/h' }, cwd: '/w' })).toBe('/h/.local/state/tsnode/sweeps.jsonl');
    expect(journalPath({ env: { XDG_STATE_HOME: 'rel', HOME: '/h' }, cwd: '/w' })).toBe('/h/.local/state/tsnode/sweeps.jsonl');
    expect(journalPath({ flag: 'j.jsonl', env: { XDG_STATE_HOME: '/s' }, cwd: '/w' })).toBe('/w/j.jsonl');
  });

  it('appends one JSON line per entry, dir 0700, file 0600, and reads back line by line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-journal-'));
    const path = join(dir, 'state', 'tsnode', 'sweeps.jsonl');
    const j = new Journal(
      path,
      () => {},
      () => Date.UTC(2026, 0, 1),
    );
    expect(j.append({ kind: 'sweep.start', run: 'r1', nodes: ['http://a:1'] })).toBe(true);
    expect(j.append({ kind: 'sweep.end', run: 'r1', nodes: [] })).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'state', 'tsnode')).mode & 0o777).toBe(0o700);
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0]!)).toEqual({ v: 1, at: '2026-01-01T00:00:00.000Z', kind: 'sweep.start', run: 'r1', nodes: ['http://a:1'] });
    // another command's kind (retention, later) with fields of its own is read, not an error
    writeFileSync(path, `${readFileSync(path, 'utf8')}not json\n{"kind":1}\n{"kind":"retention_run","event":"start","run_id":"r-1"}\n`);
    const read = [];
    for await (const l of readJournal(path)) read.push(l);
    expect(read.map((l) => ('error' in l ? l.error : l.entry.kind))).toEqual(['sweep.start', 'sweep.end', 'not JSON', 'no kind', 'retention_run']);
    const none = [];
    for await (const l of readJournal(join(dir, 'missing.jsonl'))) none.push(l);
    expect(none).toEqual([]);
  });

  it('a journal that cannot be written is one warning, never an exception', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-journal-'));
    chmodSync(dir, 0o500);
    const warnings: string[] = [];
    const j = new Journal(join(dir, 'sub', 'sweeps.jsonl'), (m) => warnings.push(m));
    const wrote = j.append({ kind: 'sweep.start', run: 'r' });
    j.append({ kind: 'sweep.end', run: 'r' });
    chmodSync(dir, 0o700);
    // root may write anyway; then there is nothing to warn about
    if (!wrote) expect(warnings).toEqual([expect.stringMatching(/^cannot write the journal .*sweeps\.jsonl: .*the sweep goes on/)]);
  });
});

describe('history runs', () => {
  const base = {
    by: 'op@host',
    types: ['nnt'],
    nntRollups: 'all',
    histogramRollups: null,
    headerPrefix: 'X-Service',
    nodeSource: '--nodes',
    carry: [],
    addBack: ['--header (1 given; values not shown)'],
  };
  const start = (run: string, at: string, nodes: string[], before = T): JournalEntry => ({ kind: 'sweep.start', run, at, ...base, before, nodes, force: false, wait: true });
  const end = (run: string, at: string, nodes: Array<[string, string]>, before = T): JournalEntry => ({
    kind: 'sweep.end',
    run,
    at,
    ...base,
    before,
    nodes: nodes.map(([node, state]) => ({ node, state, reason: `why ${state}` })),
    summary: {},
    interrupted: false,
    exit: 3,
  });

  it('pairs start and end lines; a start alone has no outcome and everything left; a later covering run catches nodes up', () => {
    const runs = assembleRuns([
      start('r1', '2026-01-01T00:00:00.000Z', ['http://a:8112', 'http://b:8112', 'http://c:8112']),
      end('r1', '2026-01-01T00:01:00.000Z', [
        ['http://a:8112', 'done'],
        ['http://b:8112', 'replaced'],
        ['http://c:8112', 'unconfirmed'],
      ]),
      start('r2', '2026-01-02T00:00:00.000Z', ['http://a:8112']),
      { kind: 'future.kind', run: 'x', at: '2026-01-02T00:00:00.000Z' },
      start('r3', '2026-01-03T00:00:00.000Z', ['http://localhost:8112', 'http://c:8112'], T + 60),
      end(
        'r3',
        '2026-01-03T00:01:00.000Z',
        [
          ['http://127.0.0.1:8112', 'done'],
          ['http://b:8112', 'done'],
        ],
        T + 60,
      ),
      {
        kind: 'sweep.cancel',
        run: 'c1',
        at: '2026-01-04T00:00:00.000Z',
        by: 'op@host',
        nodeSource: 'nodes.txt',
        nodes: [{ node: 'http://a:8112', state: 'cancelling', cancelled: ['nnt'], error: null }],
      },
    ]);
    expect(runs.map((r) => [r.run, r.kind, r.outcome])).toEqual([
      ['r1', 'sweep', true],
      ['r2', 'sweep', false],
      ['r3', 'sweep', true],
      ['c1', 'cancel', true],
    ]);
    const [r1, r2] = runs;
    // b was finished by r3 (same types and spans, a later delete time); c was not
    expect(r1!.nodes.find((n) => n.node === 'http://b:8112')!.caughtUpBy).toBe('r3');
    expect(r1!.pending).toEqual(['http://c:8112']);
    expect(r1!.catchUp!.command).toBe(`tsnode sweep --before ${T} --types nnt --nodes http://c:8112`);
    expect(r1!.catchUp!.addBack).toEqual(['--header (1 given; values not shown)']);
    // r2 was killed before its end line: its nodes have no outcome and are all left
    expect(r2!.nodes).toEqual([{ node: 'http://a:8112', state: null, reason: expect.stringMatching(/^no outcome recorded/) }]);
    expect(r2!.pending).toEqual(['http://a:8112']);
    // an earlier delete time does not catch up a later one
    expect(runs[2]!.pending).toEqual([]);
  });

  it('filters by time and by node, under any spelling', () => {
    const runs = assembleRuns([start('r1', '2026-01-01T00:00:00.000Z', ['http://127.0.0.1:8112']), start('r2', '2026-01-05T00:00:00.000Z', ['http://b:8112'])]);
    expect(filterRuns(runs, { sinceMs: Date.UTC(2026, 0, 2) }).map((r) => r.run)).toEqual(['r2']);
    expect(filterRuns(runs, { node: 'http://localhost:8112' }).map((r) => r.run)).toEqual(['r1']);
  });
});

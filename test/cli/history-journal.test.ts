/**
 * `tsnode history` over journals it did not write: malformed lines are skipped and counted, no
 * line is held whole past its bound, a symbolic link or a device is refused, journal text is
 * escaped before the terminal, and a long journal reads in O(n log n).
 */
import { appendFileSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal } from '../../src/cli/journal.js';
import { runInProcess } from '../helpers/in-process.js';

const T = 1767225600; // 2026-01-01
const base = { by: 'op@host', types: ['nnt'], nntRollups: 'all', histogramRollups: null, headerPrefix: 'X-Service', nodeSource: '--nodes', carry: [], addBack: [] };
const start = (run: string, i: number, nodes: string[], extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ v: 1, kind: 'sweep.start', run, at: new Date((T + i * 60) * 1000).toISOString(), ...base, before: T + i, nodes, force: false, wait: true, ...extra });
const end = (run: string, i: number, nodes: unknown, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    v: 1,
    kind: 'sweep.end',
    run,
    at: new Date((T + i * 60 + 30) * 1000).toISOString(),
    ...base,
    before: T + i,
    nodes,
    summary: {},
    interrupted: false,
    exit: 0,
    catchUp: null,
    ...extra,
  });

function journal(lines: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-history-'));
  const path = join(dir, 'sweeps.jsonl');
  writeFileSync(path, lines.map((l) => `${l}\n`).join(''));
  return path;
}

const history = (path: string, ...args: string[]) => runInProcess(['history', '--journal', path, ...args]);

describe('history over a damaged journal', () => {
  it('skips a line with an out-of-range time and counts it; the other runs still show', async () => {
    const path = journal([
      start('good', 0, ['http://a:8112']),
      end('good', 0, [{ node: 'http://a:8112', state: 'done', reason: 'ok' }]),
      start('far', 1, ['http://a:8112'], { before: 1e17 }),
      start('badat', 2, ['http://a:8112'], { at: '+999999-01-01T00:00:00Z' }),
      JSON.stringify({
        v: 1,
        kind: 'retention.start',
        run: 'ret',
        at: new Date(T * 1000).toISOString(),
        nodes: ['http://a:8112'],
        steps: [{ step: 1, cutoff: -1e15, types: ['nnt'], rules: ['nnt:*=1d'] }],
      }),
    ]);
    for (const output of ['table', 'json', 'csv']) {
      const r = await history(path, '-o', output);
      expect(r.stderr).not.toMatch(/internal error|Invalid time value|RangeError/);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('good');
      expect(r.stdout).not.toMatch(/\bfar\b|badat|\bret\b/);
      expect(r.stderr).toMatch(
        /3 line\(s\) of the journal could not be read and were skipped: .*before is not an epoch time in range \(line 3\).*its time \(at\) is not a valid time \(line 4\).*cut-off .*\(line 5\)/,
      );
    }
  });

  it("a sweep.end whose nodes is not a list is skipped, not read as 'finished, nothing left'", async () => {
    const path = journal([start('r1', 0, ['http://a:8112', 'http://b:8112']), end('r1', 0, 'all done')]);
    const r = await history(path, '-o', 'json');
    expect(r.code).toBe(0);
    const run = JSON.parse(r.stdout).runs[0];
    expect(run.outcome_recorded).toBe(false);
    expect(run.pending).toEqual(['http://a:8112', 'http://b:8112']);
    expect(r.stderr).toMatch(/1 line\(s\) .*skipped: 1 its nodes field is not a list \(line 2\)/);
  });

  it('a huge NUL tail is one skipped line, read in bounded memory', async () => {
    const path = journal([start('r1', 0, ['http://a:8112']), end('r1', 0, [{ node: 'http://a:8112', state: 'done', reason: 'ok' }])]);
    const mib = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < 64; i++) appendFileSync(path, mib);
    const before = process.memoryUsage().rss;
    const r = await history(path, '-o', 'json');
    expect(r.stderr).not.toMatch(/RangeError|internal error/);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).runs.map((x: { run: string }) => x.run)).toEqual(['r1']);
    expect(r.stderr).toMatch(/1 line\(s\) .*skipped: 1 longer than 4 MiB \(67108864 bytes\) \(line 3\)/);
    expect(process.memoryUsage().rss - before).toBeLessThan(48 * 1024 * 1024);
  });

  it('refuses /dev/zero and a symbolic link (exit 2, nothing read)', async () => {
    const zero = await history('/dev/zero');
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/cannot read the journal \/dev\/zero: it is not a regular file/);
    const path = journal([start('r1', 0, ['http://a:8112'])]);
    const link = `${path}.link`;
    symlinkSync(path, link);
    const r = await history(link);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/it is a symbolic link/);
    expect(r.stdout).toBe('');
  });

  it('a run never appends to the journal through a symbolic link (a warning; the target is untouched)', () => {
    const path = journal([]);
    const target = `${path}.target`;
    writeFileSync(target, '');
    const link = `${path}.link`;
    symlinkSync(target, link);
    const warnings: string[] = [];
    expect(new Journal(link, (m) => warnings.push(m)).append({ kind: 'sweep.start', run: 'r1', nodes: [] })).toBe(false);
    expect(warnings.join('\n')).toMatch(/cannot write the journal .*\.link/);
    expect(readFileSync(target, 'utf8')).toBe('');
  });

  it('escapes hand-made fields before the terminal (table and catch-up lines)', async () => {
    const evil = 'op\u001b[2J\u001b]0;pwned\u0007@host';
    const path = journal([
      start('r1', 0, ['http://a:8112'], { by: evil, addBack: ['--header \u001b[31mX'] }),
      end('r1', 0, [{ node: 'http://a:8112', state: 'failed', reason: 'x' }], { by: evil, addBack: ['--header \u001b[31mX'] }),
    ]);
    const r = await runInProcess(['history', '--journal', path], { tty: { columns: 200, rows: 40 } });
    expect(r.code).toBe(0);

    expect(r.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(r.stdout).toContain('to catch up:');
    expect(r.stdout).toMatch(/add back: --header \\x1b\[31mX/);
  });
});

describe('history over a long journal', () => {
  it('20,000 runs read in seconds, with the same catch-ups a pairwise scan gives', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const nodes = ['http://a:8112', 'http://b:8112'];
      lines.push(start(`r${i}`, i, nodes));
      // b fails on every even run and is finished by the next (odd) run, except the last
      lines.push(
        end(`r${i}`, i, [
          { node: nodes[0], state: 'done', reason: 'ok' },
          { node: nodes[1], state: i % 2 ? 'done' : 'failed', reason: 'x' },
        ]),
      );
    }
    const path = journal(lines);
    const t0 = Date.now();
    const r = await history(path, '-o', 'json');
    const ms = Date.now() - t0;
    expect(r.code).toBe(0);
    const runs = JSON.parse(r.stdout).runs as Array<{ run: string; pending: string[]; nodes: Array<{ caught_up_by: string | null }> }>;
    expect(runs).toHaveLength(20_000);
    expect(runs[0]!.nodes[1]!.caught_up_by).toBe('r1');
    expect(runs[19_998]!.nodes[1]!.caught_up_by).toBe('r19999');
    expect(runs.filter((x) => x.pending.length).length).toBe(0);
    // Quadratic took ~70 s here; generous for a loaded machine, far below that.
    expect(ms).toBeLessThan(20_000);
  }, 120_000);
});

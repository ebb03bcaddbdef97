/**
 * One state directory for a team: `--state-dir` / `TSNODE_STATE_DIR` decide where the journal,
 * run files and locks live; two processes appending to one journal at once never interleave
 * their lines; `history prune --older-than` removes old runs and their run files (dry-run-able,
 * refused while a run holds a lock), rewriting the journal without losing a line a writer appends
 * meanwhile; a group-writable state dir gets group-shared files.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-state-dir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = (): string => {
  const dir = join(root, `s${++n}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};
/** Nothing listens on port 1: the sweep is refused at once (exit 2) and journals the refusal. */
const REFUSED_SWEEP = ['sweep', '--nodes', 'http://127.0.0.1:1', '--before', '30d', '--yes', '--retries', '0'];
const JOURNAL_JS = fileURLToPath(new URL('../../dist/cli/journal.js', import.meta.url));
const lines = (file: string): string[] => readFileSync(file, 'utf8').split('\n').filter(Boolean);

/**
 * A process that appends `count` lines of about `bytes` bytes to `file` through the CLI's Journal
 * (with `until`: until that file exists, however many that takes); resolves with its exit code and
 * the number of lines it appended.
 */
function appender(file: string, tag: string, count: number, bytes: number, until?: string): Promise<{ code: number | null; wrote: number }> {
  const script = `
    const { existsSync } = await import('node:fs');
    const { Journal } = await import(${JSON.stringify(JOURNAL_JS)});
    const j = new Journal(${JSON.stringify(file)}, (m) => { console.error(m); process.exitCode = 1; });
    const pad = 'x'.repeat(${bytes});
    const until = ${JSON.stringify(until ?? null)};
    let i = 0;
    for (; until ? !existsSync(until) : i < ${count}; i++) if (!j.append({ kind: 'test.line', run: '${tag}-' + i, seq: i, pad })) process.exitCode = 1;
    process.stdout.write(String(i));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  return new Promise((r) => child.on('close', (code) => r({ code, wrote: Number(out) })));
}

describe('--state-dir and TSNODE_STATE_DIR', () => {
  it('put the journal (and the run core locks) there; history reads it from there; a relative TSNODE_STATE_DIR is refused', async () => {
    const a = fresh();
    const viaFlag = await runCli(['--state-dir', a, ...REFUSED_SWEEP], { env: { XDG_STATE_HOME: join(root, 'xdg') } });
    expect(viaFlag.code, viaFlag.stderr).toBe(2);
    expect(lines(join(a, 'sweeps.jsonl'))).toEqual([expect.stringContaining('"kind":"run.refused"')]);
    expect(existsSync(join(root, 'xdg', 'tsnode', 'sweeps.jsonl'))).toBe(false);

    const b = fresh();
    const viaEnv = await runCli(REFUSED_SWEEP, { env: { TSNODE_STATE_DIR: b } });
    expect(viaEnv.code).toBe(2);
    expect(lines(join(b, 'sweeps.jsonl'))).toHaveLength(1);
    // The flag wins over the environment.
    const both = await runCli(['history', '--state-dir', a, '-o', 'json'], { env: { TSNODE_STATE_DIR: b } });
    expect(both.code, both.stderr).toBe(0);
    expect(both.stderr).toContain(`journal: ${join(a, 'sweeps.jsonl')}`);

    const relative = await runCli(['history'], { env: { TSNODE_STATE_DIR: 'state' } });
    expect(relative.code).toBe(2);
    expect(relative.stderr).toMatch(/error: TSNODE_STATE_DIR: "state" is not an absolute path/);
  });

  it('two processes appending at once: every line whole, none lost', async () => {
    const dir = fresh();
    const file = join(dir, 'sweeps.jsonl');
    // Lines of ~64 KiB: larger than a pipe's atomic size, so only one write per line keeps them apart.
    const done = await Promise.all([appender(file, 'a', 300, 64 * 1024), appender(file, 'b', 300, 64 * 1024)]);
    expect(done).toEqual([
      { code: 0, wrote: 300 },
      { code: 0, wrote: 300 },
    ]);
    const got = lines(file).map((l) => JSON.parse(l) as { run: string; seq: number });
    expect(got).toHaveLength(600);
    for (const tag of ['a', 'b']) {
      expect(
        got
          .filter((e) => e.run.startsWith(`${tag}-`))
          .map((e) => e.seq)
          .sort((x, y) => x - y),
      ).toEqual(Array.from({ length: 300 }, (_, i) => i));
    }
  }, 60_000);

  it('a group-writable state dir (a team) gets group-shared files; the default stays private', async () => {
    const team = fresh();
    chmodSync(team, 0o2770);
    await runCli(['--state-dir', team, ...REFUSED_SWEEP]);
    expect(statSync(join(team, 'sweeps.jsonl')).mode & 0o060).not.toBe(0);
    expect(statSync(join(team, 'locks')).mode & 0o070).not.toBe(0);

    const own = fresh();
    await runCli(REFUSED_SWEEP, { env: { XDG_STATE_HOME: own } });
    expect(statSync(join(own, 'tsnode', 'sweeps.jsonl')).mode & 0o077).toBe(0);
    expect(statSync(join(own, 'tsnode')).mode & 0o077).toBe(0);
  });
});

describe('history prune --older-than', () => {
  const DAY = 86_400_000;
  const at = (daysAgo: number): string => new Date(Date.now() - daysAgo * DAY).toISOString();
  /** A journal of four runs (two old, one of them a retention run with its run file), a line no run owns, and an unreadable line. */
  function seed(dir: string): { file: string; text: string } {
    const file = join(dir, 'sweeps.jsonl');
    const text = [
      JSON.stringify({ v: 1, kind: 'sweep.start', run: 'old1', at: at(100), nodes: [] }),
      JSON.stringify({ v: 1, kind: 'retention.start', run: 'r-old2', at: at(95), nodes: [] }),
      'not json at all',
      JSON.stringify({ v: 1, kind: 'sweep.end', run: 'old1', at: at(99), nodes: [] }),
      JSON.stringify({ v: 1, kind: 'sweep.start', run: 'new1', at: at(2), nodes: [] }),
      JSON.stringify({ v: 1, kind: 'retention.end', run: 'r-old2', at: at(94), nodes: [] }),
      // A run that started long ago but wrote a line recently stays whole.
      JSON.stringify({ v: 1, kind: 'retention.start', run: 'r-mixed', at: at(200), nodes: [] }),
      JSON.stringify({ v: 1, kind: 'retention.end', run: 'r-mixed', at: at(1), nodes: [] }),
      '',
    ].join('\n');
    writeFileSync(file, text, { mode: 0o600 });
    mkdirSync(join(dir, 'retention'), { recursive: true });
    writeFileSync(join(dir, 'retention', 'r-old2.json'), '{}');
    writeFileSync(join(dir, 'retention', 'r-mixed.json'), '{}');
    return { file, text };
  }

  it('--dry-run lists the old runs and changes nothing; without a terminal it needs --yes; --yes removes them and their run files', async () => {
    const dir = fresh();
    const { file, text } = seed(dir);
    const dry = await runCli(['--state-dir', dir, 'history', 'prune', '--older-than', '30d', '--dry-run', '-o', 'json']);
    expect(dry.code, dry.stderr).toBe(0);
    const doc = JSON.parse(dry.stdout) as { dry_run: boolean; runs: Array<{ run: string; lines: number; run_file: string | null }>; kept_runs: number };
    expect(doc.dry_run).toBe(true);
    expect(doc.runs.map((r) => [r.run, r.lines, r.run_file])).toEqual([
      ['old1', 2, null],
      ['r-old2', 2, join(dir, 'retention', 'r-old2.json')],
    ]);
    expect(doc.kept_runs).toBe(2);
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(existsSync(join(dir, 'retention', 'r-old2.json'))).toBe(true);

    const unasked = await runCli(['--state-dir', dir, 'history', 'prune', '--older-than', '30d']);
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toMatch(/hint: add --yes/);
    expect(readFileSync(file, 'utf8')).toBe(text);

    const pruned = await runCli(['--state-dir', dir, 'history', 'prune', '--older-than', '30d', '--yes']);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stderr).toMatch(/removed 2 runs \(4 lines, 1 run file\(s\)\)/);
    const kept = text.split('\n').filter((l) => !/"run":"(old1|r-old2)"/.test(l));
    expect(readFileSync(file, 'utf8')).toBe(kept.join('\n'));
    expect(existsSync(join(dir, 'retention', 'r-old2.json'))).toBe(false);
    expect(existsSync(join(dir, 'retention', 'r-mixed.json'))).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const history = await runCli(['--state-dir', dir, 'history', '-o', 'json']);
    expect(history.code).toBe(0);
  });

  it('is refused while a run holds a lock in the state dir, naming it; a lock of a process that is gone does not count', async () => {
    const dir = fresh();
    const { file, text } = seed(dir);
    mkdirSync(join(dir, 'locks'));
    const lock = join(dir, 'locks', 'abc.lock');
    writeFileSync(lock, JSON.stringify({ pid: process.pid, host: hostname(), command: 'retention apply (r-now)', by: 'ops@host', at: new Date().toISOString() }));
    const r = await runCli(['--state-dir', dir, 'history', 'prune', '--older-than', '30d', '--yes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`refusing to prune ${file}: a run holds a lock (tsnode retention apply (r-now) process ${process.pid}`);
    expect(readFileSync(file, 'utf8')).toBe(text);

    writeFileSync(lock, JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), command: 'sweep', by: 'x', at: new Date().toISOString() }));
    const stale = await runCli(['--state-dir', dir, 'history', 'prune', '--older-than', '30d', '--yes']);
    expect(stale.code, stale.stderr).toBe(0);
  });

  it('a writer appending while the journal is pruned loses no line', async () => {
    const dir = fresh();
    const { file } = seed(dir);
    // The writer appends until the prune has ended: the rewrite and the rename happen while it writes.
    const stop = join(dir, 'stop');
    const writing = appender(file, 'w', 0, 200, stop);
    await expect.poll(() => readFileSync(file, 'utf8').includes('"run":"w-'), { timeout: 10_000 }).toBe(true);
    const pruned = await runCli(['--state-dir', dir, 'history', 'prune', '--older-than', '30d', '--yes']);
    writeFileSync(stop, '');
    expect(pruned.code, pruned.stderr).toBe(0);
    const { code, wrote } = await writing;
    expect(code).toBe(0);
    const got = lines(file);
    expect(got.some((l) => l.includes('"run":"old1"'))).toBe(false);
    const seqs = new Set(got.filter((l) => l.includes('"run":"w-')).map((l) => (JSON.parse(l) as { seq: number }).seq));
    expect(wrote).toBeGreaterThan(100);
    expect(seqs.size).toBe(wrote);
  }, 60_000);
});

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { killMentioning, processesMentioning } from '../helpers/procs.js';

// Each run gets its own TMPDIR, so "nothing left behind" is checkable: the demo's temp dir lives
// in it and every node's command line mentions it.
const roots: string[] = [];
const freshTmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'tsnode-demo-test-'));
  roots.push(d);
  return d;
};
afterAll(() => {
  for (const d of roots) {
    killMentioning(d);
    rmSync(d, { recursive: true, force: true });
  }
});

async function refuses(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/sweep_delete`);
    await res.text();
    return false;
  } catch {
    return true;
  }
}

describe('tsnode demo (non-interactive, as in CI)', () => {
  it('runs every step, sweeps the old week off every node, keeps the recent one, and leaves nothing behind', async () => {
    const tmp = freshTmp();
    // The operator's state dir inside TMPDIR: "nothing left behind" then also proves the demo's
    // sweep did not land in their sweep history.
    const r = await runCli(['demo'], { env: { CI: '1', TMPDIR: tmp, XDG_STATE_HOME: join(tmp, 'state') }, timeoutMs: 110_000 });
    expect(r.stderr).not.toMatch(/error:/);
    expect(r.code).toBe(0);

    // Each step shows the real command it ran.
    for (const cmd of [
      '$ tsnode write demo.ndjson --nodes nodes.txt --to all',
      '$ tsnode sweep --before 7d --types nnt,text,histogram --yes --poll-interval 500ms --nodes nodes.txt --journal sweeps.jsonl',
      '$ tsnode status --nodes nodes.txt',
      '$ tsnode read 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f cpu --start 14d --end now --span 1d --output table',
      '--output chart',
    ]) {
      expect(r.stderr).toContain(cmd);
    }
    // The sweep reported per-node progress (plain timestamped lines without a TTY).
    expect(r.stderr).toMatch(/^\S+Z http:\/\/127\.0\.0\.1:\d+: running/m);

    // The machine-checkable summary: one row per node, nothing old left, everything recent kept.
    const rows = [...r.stdout.matchAll(/^│ (http:\/\/127\.0\.0\.1:\d+) │\s+(\d+) \/ (\d+) of (\d+) │\s+(\d+) \/ (\d+) of (\d+) │\s+(\d+) \/ (\d+) of (\d+) │ (\w+)\s+│$/gm)];
    expect(rows).toHaveLength(3);
    for (const m of rows) {
      const [, , nOld, nKept, nExp, tOld, tKept, tExp, hOld, hKept, hExp, result] = m;
      expect([nOld, tOld, hOld]).toEqual(['0', '0', '0']);
      expect(Number(nKept)).toBeGreaterThan(0);
      expect(nKept).toBe(nExp);
      expect(Number(tKept)).toBeGreaterThan(0);
      expect(tKept).toBe(tExp);
      expect(Number(hKept)).toBeGreaterThan(0);
      expect(hKept).toBe(hExp);
      expect(result).toBe('ok');
    }
    expect(r.stdout).toMatch(/^demo ok: 3\/3 nodes swept/m);

    // Nothing left behind: nodes stopped, temp dir removed, no process mentions it.
    expect(r.stderr).toMatch(/stopped 3 nodes/);
    for (const [, url] of rows) expect(await refuses(url!)).toBe(true);
    expect(readdirSync(tmp)).toEqual([]);
    expect(processesMentioning(tmp)).toEqual([]);
  }, 120_000);

  it('rejects bad flags with exit 2 before starting anything', async () => {
    const tmp = freshTmp();
    const r = await runCli(['demo', '--pace', 'fast'], { env: { TMPDIR: tmp } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--pace: "fast"');
    expect(readdirSync(tmp)).toEqual([]);
  });
});

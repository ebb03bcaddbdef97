import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../helpers/cli.js';
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

describe('tsnode demo: interrupted, and --keep', () => {
  it('Ctrl-C mid-demo stops the step, the nodes, removes the temp dir, and exits 130 naming the step', async () => {
    const tmp = freshTmp();
    const env = { ...process.env, CI: '1', TMPDIR: tmp, FORCE_COLOR: '0', NO_COLOR: '1' };
    const child = spawn(process.execPath, [BIN, 'demo', '--days', '8', '--checks', '1'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.resume();
    const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
    // Interrupt once the cluster is up and the records are being replayed.
    await expect.poll(() => stderr, { timeout: 60_000 }).toContain('$ tsnode write');
    expect(processesMentioning(tmp).length).toBeGreaterThanOrEqual(3);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toMatch(/interrupted during step "(replay the records|read a metric as a table)"/);
    expect(stderr).toMatch(/stopped 3 nodes/);
    expect(readdirSync(tmp)).toEqual([]);
    await expect.poll(() => processesMentioning(tmp), { timeout: 5000 }).toEqual([]);
  }, 90_000);

  it('--keep leaves the swept cluster running, says how to stop it, and cluster down stops it', async () => {
    const tmp = freshTmp();
    const r = await runCli(['demo', '--keep', '--checks', '1', '--days', '8', '--pace', '0'], { env: { CI: '1', TMPDIR: tmp }, timeoutMs: 80_000 });
    expect(r.code, r.stderr).toBe(0);
    const stop = /tsnode cluster down --dir (\S+)/.exec(r.stderr);
    expect(stop).not.toBeNull();
    const dir = stop![1]!;
    expect(dir.startsWith(tmp)).toBe(true);
    const nodesFile = `${dir}/nodes.txt`;
    expect(r.stderr).toContain(`tsnode status --nodes ${nodesFile}`);
    // Our own read through the kept cluster: the recent week is there on every node, the old one is not.
    for (const node of readFileSync(nodesFile, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('http'))) {
      const read = await runCli(['read', '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', 'cpu', '--start', '8d', '--end', 'now', '--span', '1d', '--output', 'json', '--nodes', node]);
      expect(read.code, read.stderr).toBe(0);
      const rows = (JSON.parse(read.stdout) as { rows: Array<{ time: number; value: number | null }> }).rows;
      const day = 86_400;
      const cut = Date.now() / 1000 - 7 * day;
      const old = rows.filter((x) => x.time + day < cut - 600);
      const recent = rows.filter((x) => x.time > cut + 600 && x.time < Date.now() / 1000 - 600);
      expect(old.length).toBeGreaterThan(0);
      expect(
        old.every((x) => x.value === null),
        read.stdout,
      ).toBe(true); // swept
      expect(recent.length).toBeGreaterThan(5);
      expect(recent.every((x) => typeof x.value === 'number')).toBe(true); // kept
    }
    const down = await runCli(['cluster', 'down', '--dir', dir]);
    expect(down.code).toBe(0);
    expect(down.stderr).toMatch(/stopped 3 of 3 nodes/);
    expect(processesMentioning(dir)).toEqual([]);
  }, 90_000);

  it('a node dying mid-demo fails the step naming it, exits 1, and still cleans up', async () => {
    const tmp = freshTmp();
    const env = { ...process.env, CI: '1', TMPDIR: tmp, FORCE_COLOR: '0', NO_COLOR: '1' };
    const child = spawn(process.execPath, [BIN, 'demo', '--days', '8', '--checks', '1'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.resume();
    const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
    await expect.poll(() => stderr, { timeout: 60_000 }).toContain('$ tsnode write');
    const pid = Number(/node 2 {2}http:\/\/\S+ {2}pid (\d+)/.exec(stderr)?.[1]);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    expect(await exited).toBe(1);
    expect(stderr).toMatch(/node 2 \(http:\/\/\S+\) exited unexpectedly/);
    expect(stderr).toMatch(/error: demo failed at step "[a-z ()]+": /);
    expect(stderr).toMatch(/removed /);
    expect(readdirSync(tmp)).toEqual([]);
    await expect.poll(() => processesMentioning(tmp), { timeout: 5000 }).toEqual([]);
  }, 90_000);
});

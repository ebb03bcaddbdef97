import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { killMentioning, processesMentioning, waitFor } from '../helpers/procs.js';

const TMUX = '/usr/bin/tmux';
// Our own tmux server (socket), so we never touch a user's sessions, and can kill exactly it.
const socket = `tsnode-demo-test-${process.pid}`;
const tmp = mkdtempSync(join(tmpdir(), 'tsnode-demo-tty-'));
const tmux = (...args: string[]): string => execFileSync(TMUX, ['-L', socket, ...args], { encoding: 'utf8' });

afterAll(() => {
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  killMentioning(tmp);
  rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(!existsSync(TMUX))('in a real terminal (tmux, 100x30)', () => {
  it('tsnode demo renders live progress and the final tables', async () => {
    const codeFile = join(tmp, 'exit-code');
    const demoTmp = join(tmp, 't');
    execFileSync('mkdir', ['-p', demoTmp]);
    // A real TTY session: no CI, colour allowed (capture-pane strips it), TMPDIR ours.
    const inner = `TMPDIR=${demoTmp} ${process.execPath} ${BIN} demo --checks 1 --days 8 --pace 700; echo $? > ${codeFile}; sleep 600`;
    const env = { ...process.env };
    for (const k of ['CI', 'NO_COLOR', 'FORCE_COLOR', 'TSNODE_NODES']) delete env[k];
    execFileSync(TMUX, ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-x', '100', '-y', '30', '-s', 'demo', 'sh', '-c', inner], { env });
    tmux('set-option', '-t', 'demo', 'history-limit', '20000');

    // Watch the screen while it runs: the sweep's per-node lines are redrawn in place, so only a
    // capture taken during the sweep can see them.
    const seen = { sweepLive: false };
    const done = await waitFor(() => {
      const screen = tmux('capture-pane', '-p', '-t', 'demo');
      if (/127\.0\.0\.1:\d+.*(running|started|sending)/.test(screen) && screen.includes('── 6/9')) seen.sweepLive = true;
      return existsSync(codeFile);
    }, 100_000);
    expect(done).toBe(true);
    const code = readFileSync(codeFile, 'utf8').trim();
    const all = tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'demo');
    if (process.env.TSNODE_SHOW_SCREEN) console.log(all);
    expect(code, all).toBe('0');
    expect(seen.sweepLive, all).toBe(true);

    // Final tables rendered, each step's command shown, no timestamps on a terminal.
    expect(all).toMatch(/┌─+┬/);
    expect(all).toContain('$ tsnode sweep --before 7d --types nnt,text,histogram --yes --poll-interval 500ms --nodes nodes.txt');
    expect(all).toMatch(/── 9\/9/);
    expect(all).toMatch(/│ ok\s+│/);
    expect(all).toMatch(/^demo ok: 3\/3 nodes swept/m);
    expect(all).not.toMatch(/^\d{4}-\d{2}-\d{2}T\S+Z \$ tsnode/m);
    // Cleaned up after itself.
    expect(readdirSync(demoTmp)).toEqual([]);
    // (the tmux server and `sh -c` mention demoTmp in their own command lines; the nodes' data dirs are below it)
    expect(processesMentioning(join(demoTmp, 'tsnode-demo-'))).toEqual([]);
  }, 120_000);

  it('tsnode cluster up: Ctrl-C typed in the terminal stops every node and says so', async () => {
    const dir = join(tmp, 'cluster');
    const codeFile = join(tmp, 'cluster-exit-code');
    // `trap : INT`: the shell survives the Ctrl-C to record the exit code (children still get default SIGINT).
    const inner = `trap : INT; ${process.execPath} ${BIN} cluster up --count 2 --base-port 0 --dir ${dir}; echo $? > ${codeFile}; sleep 600`;
    execFileSync(TMUX, ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-x', '100', '-y', '30', '-s', 'cluster', 'sh', '-c', inner]);
    const screen = (): string => tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'cluster');
    expect(await waitFor(() => screen().includes('Press Ctrl-C'), 30_000), screen()).toBe(true);
    const pids = (JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as { nodes: { pid: number }[] }).nodes.map((x) => x.pid);
    expect(pids).toHaveLength(2);
    tmux('send-keys', '-t', 'cluster', 'C-c');
    expect(await waitFor(() => existsSync(codeFile), 20_000), screen()).toBe(true);
    const all = screen();
    expect(readFileSync(codeFile, 'utf8').trim(), all).toBe('0');
    // Each node was stopped by the manager (not killed by the terminal's SIGINT behind its back).
    expect(all).toMatch(/node 1 http:\/\/127\.0\.0\.1:\d+ \(pid \d+\) stopped/);
    expect(all).toMatch(/node 2 http:\/\/127\.0\.0\.1:\d+ \(pid \d+\) stopped/);
    expect(all).toMatch(/cluster stopped/);
    expect(processesMentioning(join(dir, 'node-'))).toEqual([]);
  }, 60_000);
});

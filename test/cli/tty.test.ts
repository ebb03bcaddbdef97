import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { killMentioning, processesMentioning } from '../helpers/procs.js';
import { closeTerminals, openTerminal } from '../helpers/tmux.js';

const tmp = mkdtempSync(join(tmpdir(), 'tsnode-demo-tty-'));

afterAll(() => {
  closeTerminals();
  killMentioning(tmp);
  rmSync(tmp, { recursive: true, force: true });
});

describe('in a real terminal (tmux, 100x30)', () => {
  it('tsnode demo renders live progress and the final tables', async () => {
    const codeFile = join(tmp, 'exit-code');
    const demoTmp = join(tmp, 't');
    mkdirSync(demoTmp, { recursive: true });
    // A real TTY session: no CI, colour allowed (capture-pane strips it), TMPDIR ours.
    const inner = `TMPDIR=${demoTmp} ${process.execPath} ${BIN} demo --checks 1 --days 8 --pace 700; echo $? > ${codeFile}; sleep 600`;
    const term = openTerminal(inner, { columns: 100, rows: 30 });

    // Watch the screen while it runs: the sweep's per-node lines are redrawn in place, so only a
    // capture taken during the sweep can see them.
    const seen = { sweepLive: false };
    await term.until(
      'the demo to end',
      () => {
        const screen = term.screen();
        if (/127\.0\.0\.1:\d+.*(running|started|sending)/.test(screen) && screen.includes('── 7/10')) seen.sweepLive = true;
        return existsSync(codeFile);
      },
      100_000,
    );
    const code = readFileSync(codeFile, 'utf8').trim();
    const all = term.history();
    if (process.env.TSNODE_SHOW_SCREEN) console.log(all);
    expect(code, all).toBe('0');
    expect(seen.sweepLive, all).toBe(true);

    // Final tables rendered, each step's command shown, no timestamps on a terminal.
    expect(all).toMatch(/┌─+┬/);
    expect(all).toContain('$ tsnode sweep --before 7d --types nnt,text,histogram --yes --poll-interval 500ms --nodes nodes.txt');
    expect(all).toMatch(/── 10\/10/);
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
    const term = openTerminal(inner, { columns: 100, rows: 30 });
    await term.until('the cluster to be up', () => term.history().includes('Press Ctrl-C'), 30_000);
    const pids = (JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as { nodes: { pid: number }[] }).nodes.map((x) => x.pid);
    expect(pids).toHaveLength(2);
    term.keys('C-c');
    await term.until('cluster up to exit', () => existsSync(codeFile), 20_000);
    const all = term.history();
    expect(readFileSync(codeFile, 'utf8').trim(), all).toBe('0');
    // Each node was stopped by the manager (not killed by the terminal's SIGINT behind its back).
    expect(all).toMatch(/node 1 http:\/\/127\.0\.0\.1:\d+ \(pid \d+\) stopped/);
    expect(all).toMatch(/node 2 http:\/\/127\.0\.0\.1:\d+ \(pid \d+\) stopped/);
    expect(all).toMatch(/cluster stopped/);
    expect(processesMentioning(join(dir, 'node-'))).toEqual([]);
  }, 60_000);
});

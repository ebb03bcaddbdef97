import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { killMentioning, waitFor } from '../helpers/procs.js';
import { startStubNode, type StubNode } from '../helpers/stub-node.js';
import { requireTmux } from '../helpers/tmux.js';

// A node's strings on a real terminal: `status --watch` redraws its lines in place on a TTY, the
// one path the pipe-based tests cannot see. If an escape got through, tmux would show it: the
// pane's title would change, the screen would be cleared. Fails (never skips) without tmux.
const socket = `tsnode-status-tty-${process.pid}`;
const tmp = mkdtempSync(join(tmpdir(), 'tsnode-status-tty-'));
let tmuxBin: string | undefined;
const tmux = (...args: string[]): string => execFileSync(tmuxBin ?? requireTmux(), ['-L', socket, ...args], { encoding: 'utf8' });
let node: StubNode | undefined;

afterAll(async () => {
  try {
    if (tmuxBin) tmux('kill-server');
  } catch {
    // already gone
  }
  killMentioning(tmp);
  rmSync(tmp, { recursive: true, force: true });
  await node?.close();
});

describe('tsnode status --watch in a real terminal (tmux, 100x30)', () => {
  it('shows a metric name full of escapes as text: no retitled window, no cleared screen', async () => {
    let polls = 0;
    node = await startStubNode({
      answer: (req, res) => {
        if (req.url !== '/sweep_delete') return false;
        polls++;
        const running = polls <= 15; // about 1.5 s of live lines at 100 ms, then idle
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            nnt: { running: 'false' },
            text: running ? { running: 'true', current_metric: `u-\u001b]2;pwned\u0007\u001b[2J\u001b[H\rFORGED`, timestamp: '1700000000' } : { running: 'false' },
            histogram: { running: 'false' },
          }),
        );
        return true;
      },
    });
    tmuxBin = requireTmux();
    const codeFile = join(tmp, 'exit-code');
    const env = { ...process.env };
    for (const k of ['CI', 'NO_COLOR', 'FORCE_COLOR', 'TSNODE_NODES']) delete env[k];
    // A marker line first: a clear-screen escape that got through would wipe it.
    const inner = `echo MARKER-BEFORE; ${process.execPath} ${BIN} status --nodes ${node.url} --watch 100ms; echo $? > ${codeFile}; sleep 600`;
    execFileSync(tmuxBin, ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-x', '100', '-y', '30', '-s', 's', 'sh', '-c', inner], { env });
    let live = '';
    const done = await waitFor(() => {
      const screen = tmux('capture-pane', '-p', '-t', 's');
      if (!live && screen.includes('pwned')) live = screen;
      return existsSync(codeFile);
    }, 20_000);
    const all = tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 's');
    expect(done, all).toBe(true);
    expect(readFileSync(codeFile, 'utf8').trim(), all).toBe('0');
    expect(live, all).toContain('\\x1b[2J\\x1b[H\\rFORGED');
    expect(all).toContain('MARKER-BEFORE');
    expect(tmux('display-message', '-p', '-t', 's', '#{pane_title}')).not.toContain('pwned');
  }, 40_000);

  it('fits its table to an 80-column terminal: the long error wraps inside its cell, no line wraps on screen', async () => {
    tmuxBin = requireTmux();
    const codeFile = join(tmp, 'exit-code-width');
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: join(tmp, 'no-config') };
    for (const k of ['CI', 'NO_COLOR', 'FORCE_COLOR', 'TSNODE_NODES', 'TSNODE_PROFILE', 'TSNODE_CONFIG']) delete env[k];
    const inner = `${process.execPath} ${BIN} status --nodes http://127.0.0.1:1,http://127.0.0.1:2 --retries 0; echo $? > ${codeFile}; sleep 600`;
    execFileSync(tmuxBin, ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-x', '80', '-y', '30', '-s', 'w', 'sh', '-c', inner], { env });
    expect(await waitFor(() => existsSync(codeFile), 20_000)).toBe(true);
    // Without -J: a line the terminal had to wrap would show as two rows here.
    const screen = tmux('capture-pane', '-p', '-t', 'w').split('\n');
    const table = screen.filter((l) => /^[┌│├└]/.test(l));
    expect(table.length, screen.join('\n')).toBeGreaterThan(5);
    for (const line of table) {
      expect([...line].length, line).toBeLessThanOrEqual(80);
      expect(line, line).toMatch(/[┐│┤┘]$/);
    }
    // the message gave way, over several lines of its cell; the node URLs kept theirs
    expect(table.filter((l) => /│ http:\/\/127\.0\.0\.1:[12] +│ unreachable │ - +│ - +│ - +│ \S/.test(l))).toHaveLength(2);
    expect(table.some((l) => /│ (\(ECONNREFUSED\)|refused) +│$/.test(l)), screen.join('\n')).toBe(true);
    expect(readFileSync(codeFile, 'utf8').trim()).toBe('1');
  }, 40_000);
});

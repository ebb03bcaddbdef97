import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { killMentioning } from '../helpers/procs.js';
import { startStubNode, type StubNode } from '../helpers/stub-node.js';
import { closeTerminals, openTerminal, terminalEnv } from '../helpers/tmux.js';

// A node's strings on a real terminal: `status --watch` redraws its lines in place on a TTY, the
// one path the pipe-based tests cannot see. If an escape got through, tmux would show it: the
// pane's title would change, the screen would be cleared. Fails (never skips) without tmux.
const tmp = mkdtempSync(join(tmpdir(), 'tsnode-status-tty-'));
let node: StubNode | undefined;

afterAll(async () => {
  closeTerminals();
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
    const codeFile = join(tmp, 'exit-code');
    // A marker line first: a clear-screen escape that got through would wipe it.
    const inner = `echo MARKER-BEFORE; ${process.execPath} ${BIN} status --nodes ${node.url} --watch 100ms; echo $? > ${codeFile}; sleep 600`;
    const term = openTerminal(inner, { columns: 100, rows: 30 });
    let live = '';
    await term.until(
      'status --watch to end',
      () => {
        const screen = term.screen();
        if (!live && screen.includes('pwned')) live = screen;
        return existsSync(codeFile);
      },
      20_000,
    );
    const all = term.history();
    expect(readFileSync(codeFile, 'utf8').trim(), all).toBe('0');
    expect(live, all).toContain('\\x1b[2J\\x1b[H\\rFORGED');
    expect(all).toContain('MARKER-BEFORE');
    expect(term.title()).not.toContain('pwned');
  }, 40_000);

  it('fits its table to an 80-column terminal: the long error wraps inside its cell, no line wraps on screen', async () => {
    const codeFile = join(tmp, 'exit-code-width');
    const inner = `${process.execPath} ${BIN} status --nodes http://127.0.0.1:1,http://127.0.0.1:2 --retries 0; echo $? > ${codeFile}; sleep 600`;
    const term = openTerminal(inner, { columns: 80, rows: 30, env: terminalEnv({ XDG_CONFIG_HOME: join(tmp, 'no-config') }) });
    await term.until('status to end', () => existsSync(codeFile), 20_000);
    // The screen, not the history: a line the terminal had to wrap would show as two rows here.
    const screen = term.screen().split('\n');
    const table = screen.filter((l) => /^[┌│├└]/.test(l));
    expect(table.length, screen.join('\n')).toBeGreaterThan(5);
    for (const line of table) {
      expect([...line].length, line).toBeLessThanOrEqual(80);
      expect(line, line).toMatch(/[┐│┤┘]$/);
    }
    // the message gave way, over several lines of its cell; the node URLs kept theirs
    expect(table.filter((l) => /│ http:\/\/127\.0\.0\.1:[12] +│ unreachable │ - +│ - +│ - +│ \S/.test(l))).toHaveLength(2);
    expect(
      table.some((l) => /│ (\(ECONNREFUSED\)|refused) +│$/.test(l)),
      screen.join('\n'),
    ).toBe(true);
    expect(readFileSync(codeFile, 'utf8').trim()).toBe('1');
  }, 40_000);
});

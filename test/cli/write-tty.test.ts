import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { startNode, stopAllNodes } from '../helpers/nodes.js';
import { killMentioning } from '../helpers/procs.js';
import { closeTerminals, openTerminal, type Terminal } from '../helpers/tmux.js';

// `tsnode write` loads ora only when it shows a spinner: this runs it where it does, in a real
// terminal (our own tmux server, never a user's), and watches the live line while it runs.
// No tmux fails these tests (requireTmux throws): they are never skipped.
const tmp = mkdtempSync(join(tmpdir(), 'tsnode-write-tty-'));
const ID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';

afterAll(async () => {
  closeTerminals();
  killMentioning(tmp);
  rmSync(tmp, { recursive: true, force: true });
  await stopAllNodes();
});

function recordsFile(name: string, n: number): string {
  const file = join(tmp, name);
  writeFileSync(file, Array.from({ length: n }, (_, i) => JSON.stringify({ metric: `m${i % 7}`, id: ID, offset: 60 * i, count: 1, value: i })).join('\n') + '\n');
  return file;
}

/** Starts `inner` in a 100x30 terminal, as a user's terminal would run it (no CI, colour allowed). */
const session = (inner: string): Terminal => openTerminal(inner, { columns: 100, rows: 30 });

describe('tsnode write in a real terminal (tmux, 100x30)', () => {
  it('shows the spinner with live progress, then the summary', async () => {
    const node = await startNode({ memory: true });
    const n = 3000;
    const file = recordsFile('records.ndjson', n);
    const codeFile = join(tmp, 'exit-code');
    // --rate keeps the run going for ~3 s, long enough to see the live line; batches of 100 move it.
    const term = session(`${process.execPath} ${BIN} write ${file} --node ${node.url} --rate 1000 --batch-size 100; echo $? > ${codeFile}; sleep 600`);

    let live = '';
    await term.until(
      'the write to end',
      () => {
        const screen = term.screen();
        // The spinner's line: progress redrawn in place, no timestamp in front of it.
        const m = /^\S+ (\d+(\.\d)?% .*records read, [\d,]+ written.*)$/m.exec(screen);
        if (m && !live) live = m[0];
        return existsSync(codeFile);
      },
      30_000,
    );
    const all = term.history();
    expect(readFileSync(codeFile, 'utf8').trim(), all).toBe('0');
    expect(live, all).not.toBe('');
    expect(live).not.toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(all).toContain(`read ${n.toLocaleString('en-US')} records from 1 input, wrote ${n.toLocaleString('en-US')} in 30 batches to 1 node (--to any)`);
  }, 60_000);

  it('Ctrl-C typed in the terminal stops the write: exit 130, position saved, the command to continue shown', async () => {
    const node = await startNode({ memory: true });
    const n = 20_000;
    const file = recordsFile('interrupt.ndjson', n);
    const state = `${file}.tsnode-state.json`;
    const codeFile = join(tmp, 'interrupt-exit-code');
    // `trap : INT`: the shell survives the Ctrl-C to record the exit code. 20,000 records at
    // 1,000/s: without a working Ctrl-C the run would go on for 20 s and end with 0.
    const term = session(`trap : INT; ${process.execPath} ${BIN} write ${file} --node ${node.url} --rate 1000 --batch-size 100; echo $? > ${codeFile}; sleep 600`);
    // Wait until batches are acknowledged (the state file holds a position), then type Ctrl-C.
    await term.until('acknowledged batches', () => existsSync(state) && /written/.test(term.history()), 20_000);
    term.keys('C-c');
    await term.until('the write to stop', () => existsSync(codeFile), 10_000);
    const all = term.history();
    expect(readFileSync(codeFile, 'utf8').trim(), all).toBe('130');
    expect(all).toContain('interrupted: acknowledged records are saved');
    expect(all).toContain(`to continue: tsnode write ${file} --node ${node.url} --rate 1000 --batch-size 100 --resume`);
    const saved = JSON.parse(readFileSync(state, 'utf8')).inputs[file];
    expect(saved.done).toBe(false);
    expect(saved.record).toBeGreaterThan(0);
    expect(saved.record).toBeLessThan(n);
  }, 60_000);
});

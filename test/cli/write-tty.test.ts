import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { startNode, stopAllNodes } from '../helpers/nodes.js';
import { killMentioning, waitFor } from '../helpers/procs.js';

// `tsnode write` loads ora only when it shows a spinner: this runs it where it does, in a real
// terminal (our own tmux server, never a user's), and watches the live line while it runs.
const TMUX = '/usr/bin/tmux';
const socket = `tsnode-write-tty-${process.pid}`;
const tmp = mkdtempSync(join(tmpdir(), 'tsnode-write-tty-'));
const tmux = (...args: string[]): string => execFileSync(TMUX, ['-L', socket, ...args], { encoding: 'utf8' });

afterAll(async () => {
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  killMentioning(tmp);
  rmSync(tmp, { recursive: true, force: true });
  await stopAllNodes();
});

describe.skipIf(!existsSync(TMUX))('tsnode write in a real terminal (tmux, 100x30)', () => {
  it('shows the spinner with live progress, then the summary', async () => {
    const node = await startNode({ memory: true });
    const file = join(tmp, 'records.ndjson');
    const id = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
    const n = 3000;
    writeFileSync(file, Array.from({ length: n }, (_, i) => JSON.stringify({ metric: `m${i % 7}`, id, offset: 60 * i, count: 1, value: i })).join('\n') + '\n');
    const codeFile = join(tmp, 'exit-code');
    // --rate keeps the run going for ~3 s, long enough to see the live line; batches of 100 move it.
    const inner = `${process.execPath} ${BIN} write ${file} --node ${node.url} --rate 1000 --batch-size 100; echo $? > ${codeFile}; sleep 600`;
    const env = { ...process.env };
    for (const k of ['CI', 'NO_COLOR', 'FORCE_COLOR', 'TSNODE_NODES']) delete env[k];
    execFileSync(TMUX, ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-x', '100', '-y', '30', '-s', 'w', 'sh', '-c', inner], { env });

    let live = '';
    const done = await waitFor(() => {
      const screen = tmux('capture-pane', '-p', '-t', 'w');
      // The spinner's line: progress redrawn in place, no timestamp in front of it.
      const m = /^\S+ (\d+(\.\d)?% .*records read, [\d,]+ written.*)$/m.exec(screen);
      if (m && !live) live = m[0];
      return existsSync(codeFile);
    }, 30_000);
    expect(done).toBe(true);
    const all = tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'w');
    expect(readFileSync(codeFile, 'utf8').trim(), all).toBe('0');
    expect(live, all).not.toBe('');
    expect(live).not.toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(all).toContain(`read ${n.toLocaleString('en-US')} records from 1 input, wrote ${n.toLocaleString('en-US')} in 30 batches to 1 node (--to any)`);
  }, 60_000);
});

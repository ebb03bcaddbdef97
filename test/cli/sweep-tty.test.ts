import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import type { NntRecord } from '../../src/protocol/index.js';
import { BIN } from '../helpers/cli.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';

// A real pseudo-terminal: tmux on its own socket, so nothing else's tmux is touched.
const TMUX = '/usr/bin/tmux';
const SOCKET = `tsnode-sweep-test-${process.pid}`;
const tmux = (...args: string[]): string => execFileSync(TMUX, ['-L', SOCKET, ...args], { encoding: 'utf8' });
const screen = (): string => tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'sweep');

async function until(what: string, cond: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; screen:\n${screen()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const agent = new Agent();
// The sweep journals itself: into a temp state dir, never the user's.
const STATE = mkdtempSync(join(tmpdir(), 'tsnode-tty-state-'));
const NOW_S = Math.floor(Date.now() / 1000);
const BEFORE = NOW_S - 86_400 - ((NOW_S - 86_400) % 3600);

async function seed(url: string, series: number): Promise<void> {
  const recs: NntRecord[] = Array.from({ length: series }, (_, i) => ({
    metric: 'cpu',
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    offset: BEFORE - 600,
    count: 1,
    value: 1,
    derivative: 0,
    counter: 0,
    stddev: 0,
    derivative_stddev: 0,
    counter_stddev: 0,
  }));
  await new NodeClient(url, { dispatcher: agent }).writeNnt(recs);
}

let quick: TestNode;
let paced: TestNode;
beforeAll(async () => {
  [quick, paced] = await Promise.all([startNode({ memory: true }), startNode({ memory: true, sweepPaceMs: 50 })]);
});
afterAll(async () => {
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  await stopAllNodes();
  await agent.close();
});

describe.skipIf(!existsSync(TMUX))('tsnode sweep on a terminal', () => {
  it('asks for confirmation, redraws one line per node in place, and prints the final table once', async () => {
    await Promise.all([seed(quick.url, 3), seed(paced.url, 60)]);
    const cmd = [
      `env -u CI -u NO_COLOR FORCE_COLOR=0 TERM=xterm-256color XDG_STATE_HOME=${STATE}`,
      process.execPath,
      BIN,
      'sweep',
      '--before',
      String(BEFORE),
      '--nodes',
      `${quick.url},${paced.url}`,
      '--poll-interval',
      '100ms',
      '; echo EXIT=$?; sleep 60',
    ].join(' ');
    tmux('new-session', '-d', '-s', 'sweep', '-x', '160', '-y', '40', cmd);

    // 1. the TTY confirmation, with time in ISO and epoch and the node count
    await until('the prompt', () => /\[y\/N\]/.test(screen()));
    // what goes (types and spans), how many nodes and where the list came from
    expect(screen()).toMatch(new RegExp(`Delete data before [0-9T:-]+Z \\(${BEFORE}\\) \\(nnt all spans\\) on 2 nodes \\(nodes: --nodes, 2 nodes\\)\\? \\[y/N\\]`));
    tmux('send-keys', '-t', 'sweep', 'y', 'Enter');

    // 2. live per-node lines: the paced node shows a spinner, `running` and what it works on
    const spinner = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/.source;
    await until('a running line for the paced node', () => new RegExp(`${spinner} ${paced.url}\\s+running\\s+\\d+s\\s+nnt 0000`).test(screen()));

    // 3. the end: exit 0, each node's line drawn in place (it appears once), the table once
    await until('the exit line', () => /EXIT=\d+/.test(screen()), 20_000);
    const out = screen();
    expect(out).toMatch(/EXIT=0/);
    for (const url of [quick.url, paced.url]) {
      const progressLines = out.split('\n').filter((l) => new RegExp(`^. ${url}\\s+(done|running|started|sending)`).test(l));
      expect(progressLines, out).toHaveLength(1);
      expect(progressLines[0]).toMatch(/^✔ .* done/);
    }
    expect(out.match(/│ node\s+│ types │ state/g), out).toHaveLength(1);
    expect(out).toMatch(new RegExp(`│ ${paced.url}\\s+│ nnt\\s+│ done`));
    // the cursor was shown again
    expect(out).not.toMatch(/\u001b\[\?25l/);
    // and the run was journaled in the state dir it was given
    expect(existsSync(join(STATE, 'tsnode', 'sweeps.jsonl'))).toBe(true);
  });
});

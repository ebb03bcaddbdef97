/**
 * `retention apply` of a rule kept less than an hour, on a real terminal (tmux): a yes is not
 * enough, the rule must be typed back; anything else stops the run with nothing sent.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import { BIN } from '../helpers/cli.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { closeTerminals, openTerminal } from '../helpers/tmux.js';

const agent = new Agent();
const STATE = mkdtempSync(join(tmpdir(), 'tsnode-short-age-tty-'));
const UUID = '00000000-0000-4000-8000-000000000026';
const OFFSET = Math.floor(Date.now() / 1000 / 60) * 60 - 7200;
const client = (url: string): NodeClient => new NodeClient(url, { dispatcher: agent, retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0 } });

async function hasPoint(url: string): Promise<boolean> {
  const r = await client(url).readRollup({ uuid: UUID, metric: 'short', startMs: OFFSET * 1000, endMs: (OFFSET + 60) * 1000, spanMs: 60_000, engine: 'nnt' });
  return r.points[0]?.value != null;
}

let node: TestNode;
beforeAll(async () => {
  node = await startNode({ memory: true });
  await client(node.url).writeNnt([
    { metric: 'short', id: UUID, offset: OFFSET, count: 1, value: 1, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 },
  ]);
});
afterAll(async () => {
  closeTerminals();
  await stopAllNodes();
  await agent.close();
});

function applyIn(extra: string): ReturnType<typeof openTerminal> {
  const cmd = [
    `env -u CI -u NO_COLOR FORCE_COLOR=0 TERM=xterm-256color XDG_STATE_HOME=${STATE}`,
    process.execPath,
    BIN,
    'retention',
    'apply',
    '--rule',
    "'nnt:*=1s'",
    '--nodes',
    node.url,
    extra,
    '; echo EXIT=$?; sleep 60',
  ].join(' ');
  return openTerminal(cmd, { columns: 160, rows: 40 });
}

describe('retention apply of nnt:*=1s on a terminal', () => {
  it('a yes is not enough: anything but the rule typed back stops the run, nothing sent', async () => {
    const term = applyIn('');
    await term.until('the yes/no prompt', () => /\[y\/N\]/.test(term.history()));
    term.keys('y', 'Enter');
    await term.until('the typed confirmation', () => term.history().includes('Type nnt:*=1s to run it anyway'));
    expect(term.history()).toContain('nnt:*=1s deletes nearly everything it covers.');
    term.keys('yes', 'Enter');
    await term.until('the exit line', () => /EXIT=\d+/.test(term.history()));
    expect(term.history()).toMatch(/EXIT=2/);
    expect(term.history()).toContain('retention run not confirmed: nothing was sent');
    expect(await hasPoint(node.url)).toBe(true);
    term.close();
  }, 30_000);

  it('--yes skips the yes/no question but not the typed one; the rule typed back runs it', async () => {
    const term = applyIn('--yes');
    await term.until('the typed confirmation', () => term.history().includes('Type nnt:*=1s to run it anyway'));
    expect(term.history()).not.toMatch(/\[y\/N\]/);
    term.keys('nnt:*=1s', 'Enter');
    await term.until('the exit line', () => /EXIT=\d+/.test(term.history()), 20_000);
    expect(term.history()).toMatch(/EXIT=0/);
    expect(await hasPoint(node.url)).toBe(false);
    term.close();
  }, 30_000);
});

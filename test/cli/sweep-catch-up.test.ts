/**
 * The catch-up a sweep prints for the nodes it did not finish must run as printed on a ring: it
 * names only those nodes, so without --allow-partial the coverage check would refuse it (exit 2)
 * for missing the ring nodes the run already swept. A real three-node ring (`cluster up`); one
 * node is frozen (SIGSTOP) so the sweep skips it, then thawed and caught up with the command
 * from stderr, from `-o json` and from `tsnode history`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import { runCli, startCli } from '../helpers/cli.js';
import { killMentioning } from '../helpers/procs.js';

const agent = new Agent();
const root = mkdtempSync(join(tmpdir(), 'tsnode-catch-up-test-'));
const dir = join(root, 'ring');
const env = { XDG_STATE_HOME: join(root, 'state'), XDG_CONFIG_HOME: join(root, 'config'), HOME: root };
let nodes: Array<{ url: string; pid: number }>;

/** The node's record of its last numeric sweep (undefined: never swept). */
const lastSweep = async (url: string): Promise<unknown> =>
  (await new NodeClient(url, { dispatcher: agent, retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0 } }).sweepStatus()).nnt.last;
const swept = async (url: string): Promise<boolean> => (await lastSweep(url)) !== undefined;

/** The words of a printed command, for runCli (the catch-up quotes nothing these tests need). */
const argsOf = (command: string): string[] => command.split(' ').slice(1);

beforeAll(async () => {
  const up = await runCli(['cluster', 'up', '--count', '3', '--base-port', '0', '--dir', dir, '--detach', '-o', 'json'], { env, timeoutMs: 60_000 });
  expect(up.code, up.stderr).toBe(0);
  nodes = (JSON.parse(up.stdout) as { nodes: Array<{ url: string; pid: number }> }).nodes;
}, 90_000);

afterAll(async () => {
  for (const n of nodes ?? []) {
    try {
      process.kill(n.pid, 'SIGCONT');
    } catch {
      // already gone
    }
  }
  await runCli(['cluster', 'down', '--dir', dir, '--grace', '2s'], { env });
  await agent.close();
  killMentioning(root);
  rmSync(root, { recursive: true, force: true });
});

/** Sweeps the ring with its last node frozen; returns the run's catch-up command (stderr and JSON agree). */
async function sweepWithoutLast(before: string): Promise<string> {
  const frozen = nodes[2]!;
  process.kill(frozen.pid, 'SIGSTOP');
  try {
    const r = await runCli(
      ['sweep', '--before', before, '--nodes', nodes.map((n) => n.url).join(','), '--yes', '--skip-unreachable', '--headers-timeout', '1s', '--retries', '0', '-o', 'json'],
      { env, timeoutMs: 60_000 },
    );
    expect(r.code, r.stderr).toBe(3);
    const doc = JSON.parse(r.stdout) as { catch_up: { nodes: string[]; command: string } };
    expect(doc.catch_up.nodes).toEqual([frozen.url]);
    expect(r.stderr).toContain(doc.catch_up.command);
    return doc.catch_up.command;
  } finally {
    process.kill(frozen.pid, 'SIGCONT');
  }
}

describe('the catch-up of a sweep on a ring', () => {
  it('runs as printed: the skipped node is swept, the others are not sent anything again', async () => {
    const command = await sweepWithoutLast(String(Math.floor(Date.now() / 1000) - 400 * 86_400));
    expect(await swept(nodes[2]!.url)).toBe(false);
    const others = await Promise.all(nodes.slice(0, 2).map((n) => lastSweep(n.url)));
    const r = await runCli([...argsOf(command), '--yes'], { env, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('refusing to sweep');
    expect(await swept(nodes[2]!.url)).toBe(true);
    expect(await Promise.all(nodes.slice(0, 2).map((n) => lastSweep(n.url)))).toEqual(others);
  }, 120_000);

  it("history's catch-up command runs as printed too", async () => {
    await sweepWithoutLast(String(Math.floor(Date.now() / 1000) - 300 * 86_400));
    const h = await runCli(['history', '-o', 'json'], { env });
    expect(h.code, h.stderr).toBe(0);
    const runs = (JSON.parse(h.stdout) as { runs: Array<{ pending: string[]; catch_up: { command: string } | null }> }).runs;
    const pending = runs.filter((run) => run.pending.length > 0);
    expect(pending.length).toBe(1);
    const r = await runCli([...argsOf(pending[0]!.catch_up!.command), '--yes'], { env, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const after = await runCli(['history', '-o', 'json'], { env });
    expect((JSON.parse(after.stdout) as { runs: Array<{ pending: string[] }> }).runs.filter((run) => run.pending.length > 0)).toEqual([]);
  }, 120_000);
});

describe('the cancel hint of a sweep on a ring', () => {
  it('runs as printed for the nodes that may still sweep', async () => {
    const frozen = nodes[2]!;
    const run = startCli(
      [
        'sweep',
        '--before',
        String(Math.floor(Date.now() / 1000) - 200 * 86_400),
        '--nodes',
        nodes.map((n) => n.url).join(','),
        '--yes',
        '--lost-after',
        '1s',
        '--headers-timeout',
        '500ms',
        '--retries',
        '0',
      ],
      { env, timeoutMs: 60_000 },
    );
    // Frozen once its DELETE was answered and before the first poll (2s later): it is lost, the others done.
    try {
      await run.waitForStderr(new RegExp(`${frozen.url}: started`), 30_000);
      process.kill(frozen.pid, 'SIGSTOP');
      const r = await run.done;
      expect(r.code, r.stderr).toBe(3);
      const hint = /cancel with: (tsnode sweep cancel [^)]*)\)/.exec(r.stderr)?.[1];
      expect(hint, r.stderr).toBeDefined();
      expect(hint).toContain(`--nodes ${frozen.url}`);
      process.kill(frozen.pid, 'SIGCONT');
      const c = await runCli([...argsOf(hint!), '--yes'], { env, timeoutMs: 60_000 });
      expect(c.code, c.stderr).toBe(0);
      expect(c.stderr).not.toContain('refusing to cancel');
    } finally {
      process.kill(frozen.pid, 'SIGCONT');
    }
  }, 120_000);
});

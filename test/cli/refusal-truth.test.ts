/**
 * Issue 25: what a refused run says, and leaves. The `--skip-unreachable` hint only where skipping
 * leaves nodes to run on; a refused run in `history` is `refused` with its reason, no node "left".
 * Real reference nodes; a stopped node stands for an unreachable one.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import { BIN, runCli, type CliResult } from '../helpers/cli.js';
import { closeTerminals, openTerminal } from '../helpers/tmux.js';
import { startNode, startNodes, stopAllNodes, type TestNode } from '../helpers/nodes.js';

const agent = new Agent();
let live: TestNode;
let dead: string[];
const env = (): Record<string, string> => {
  const state = mkdtempSync(join(tmpdir(), 'tsnode-refusal-'));
  return { XDG_STATE_HOME: state, HOME: state };
};

beforeAll(async () => {
  live = await startNode({ memory: true });
  const stopped = await startNodes(2, { memory: true });
  dead = stopped.map((n) => n.url);
  await Promise.all(stopped.map((n) => n.stop()));
}, 30_000);
afterAll(async () => {
  closeTerminals();
  await stopAllNodes();
  await agent.close();
});

describe('the --skip-unreachable hint', () => {
  const sweep = (nodes: string[]): Promise<CliResult> => runCli(['sweep', '--nodes', nodes.join(','), '--before', '30d', '--yes', '--retries', '0'], { env: env() });
  const apply = (nodes: string[]): Promise<CliResult> =>
    runCli(['retention', 'apply', '--nodes', nodes.join(','), '--rule', 'nnt:*=30d', '--yes', '--retries', '0'], { env: env() });

  it('is given when other nodes answered (sweep, retention apply)', async () => {
    for (const r of await Promise.all([sweep([live.url, dead[0]!]), apply([live.url, dead[0]!])])) {
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--skip-unreachable');
    }
  });

  it('is not given when every listed node is unreachable (skipping them leaves nothing)', async () => {
    for (const r of await Promise.all([sweep(dead), apply(dead)])) {
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('nothing was sent');
      expect(r.stderr).not.toContain('--skip-unreachable');
    }
  });
});

describe('sweep --before less than an hour ago', () => {
  const journal = (e: Record<string, string>): Array<Record<string, unknown>> =>
    readFileSync(join(e.XDG_STATE_HOME!, 'tsnode', 'sweeps.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it('is refused off a terminal without --allow-short-age: exit 2, nothing sent, the refusal journaled', async () => {
    const e = env();
    const r = await runCli(['sweep', '--nodes', live.url, '--before', '30m', '--yes'], { env: e });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/--before 30m is .*, less than 1h ago/);
    expect(r.stderr).toContain('--allow-short-age');
    expect(r.stderr).toContain('nothing was sent');
    const kinds = journal(e).map((x) => x.kind);
    expect(kinds).toEqual(['run.refused']);
    expect(journal(e)[0]).toMatchObject({ command: 'sweep', codes: ['check'] });
    // no sweep ran on the node
    const status = await new NodeClient(live.url, { dispatcher: agent }).sweepStatus();
    expect(status.nnt.running).toBe(false);
    expect(status.nnt.last).toBeUndefined();
  });

  it('runs with --allow-short-age, and the catch-up carries the flag', async () => {
    const e = env();
    const r = await runCli(['sweep', '--nodes', `${live.url},${dead[0]}`, '--before', '30m', '--yes', '--allow-short-age', '--skip-unreachable', '--poll-interval', '100ms'], {
      env: e,
    });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(new RegExp(`tsnode sweep --before \\d+ --types nnt --nodes ${dead[0]} --yes --allow-short-age`));
    expect(journal(e).map((x) => x.kind)).toContain('sweep.end');
  });
});

describe('sweep --before less than an hour ago on a terminal', () => {
  it('asks for the --before value typed back, even with --yes; anything else sends nothing', async () => {
    const state = env().XDG_STATE_HOME!;
    const run = (typed: string): Promise<string> => {
      const cmd = [`env -u CI -u NO_COLOR FORCE_COLOR=0 TERM=xterm-256color XDG_STATE_HOME=${state} HOME=${state}`, process.execPath, BIN];
      cmd.push('sweep', '--nodes', live.url, '--before', '45m', '--yes', '--poll-interval', '100ms', '; echo EXIT=$?; sleep 60');
      const term = openTerminal(cmd.join(' '), { columns: 200, rows: 40 });
      return (async () => {
        await term.until('the typed prompt', () => /Type 45m to sweep anyway/.test(term.history()), 20_000);
        term.keys(typed, 'Enter');
        await term.until('the exit line', () => /EXIT=\d+/.test(term.history()), 20_000);
        return term.history();
      })();
    };
    const last = async (): Promise<unknown> => (await new NodeClient(live.url, { dispatcher: agent }).sweepStatus()).nnt.last;
    const before = await last();
    const declined = await run('yes');
    expect(declined).toMatch(/less than 1h ago/);
    expect(declined).toMatch(/EXIT=2/);
    expect(await last()).toEqual(before);
    const typed = await run('45m');
    expect(typed).toMatch(/EXIT=0/);
  });
});

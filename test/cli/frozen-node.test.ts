/**
 * A frozen node (a real node stopped with SIGSTOP: it accepts connections and never answers):
 * one probe per phase, visible "waiting for <node>" lines instead of silence, a hint that fits
 * (wait, restart; --skip-unreachable only when other nodes answered), and timeouts named by what
 * fired: "the overall deadline of the command" only with --deadline.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterState } from '../../src/cli/local-cluster/state.js';
import { NodeClient } from '../../src/client/node-client.js';
import { pollUntilIdle } from '../../src/client/sweep-poll.js';
import { runCli } from '../helpers/cli.js';
import { killMentioning } from '../helpers/procs.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-frozen-'));
const dir = join(root, 'ring');
const stateDir = join(root, 'state');
let urls: string[];
let frozenPid: number;

beforeAll(async () => {
  const up = await runCli(['cluster', 'up', '--count', '2', '--base-port', '0', '--dir', dir, '--detach'], { timeoutMs: 60_000 });
  expect(up.code, up.stderr).toBe(0);
  const state = JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as ClusterState;
  urls = state.nodes.map((n) => n.url);
  frozenPid = state.nodes[1]!.pid;
  process.kill(frozenPid, 'SIGSTOP');
}, 90_000);

afterAll(async () => {
  try {
    process.kill(frozenPid, 'SIGCONT');
  } catch {
    // gone already
  }
  await runCli(['cluster', 'down', '--dir', dir, '--grace', '1s']);
  killMentioning(root);
  rmSync(root, { recursive: true, force: true });
});

const env = { XDG_STATE_HOME: stateDir };
const waitingLines = (stderr: string): string[] => stderr.split('\n').filter((l) => l.includes('waiting for '));

describe('a frozen node', () => {
  it('retention apply: one probe per phase, "waiting for" lines, the hint to wait or restart and to skip it, in bounded time', async () => {
    const started = Date.now();
    const r = await runCli(['retention', 'apply', '--rule', 'nnt:60=30d', '--nodes', `${urls[0]},${urls[1]}`, '--yes', '--headers-timeout', '2s'], { env, timeoutMs: 60_000 });
    const took = Date.now() - started;
    expect(r.code, r.stderr).toBe(2);
    const waiting = waitingLines(r.stderr);
    expect(waiting.length).toBeGreaterThan(0);
    for (const line of waiting) expect(line).toContain(`waiting for ${urls[1]} (no answer for 1 s; giving up at 2 s, --headers-timeout)`);
    // One probe per phase (/state, clock, lag, preflight): four tries of each would print four times as many.
    expect(waiting.length).toBeLessThanOrEqual(5);
    expect(r.stderr).toContain(`error: ${urls[1]} does not answer: no answer within 2s (--headers-timeout)`);
    expect(r.stderr).toMatch(
      /hint: .*accepts connections but does not answer \(frozen or overloaded\): wait and run again, or restart it; --skip-unreachable to run on the others/,
    );
    expect(r.stderr).not.toContain('overall deadline');
    // Four tries per phase took ~8 s a phase; one try is ~2 s.
    expect(took).toBeLessThan(20_000);
  }, 60_000);

  it('sweep of the frozen node alone: no --skip-unreachable (there is no other node), the hint to wait or restart', async () => {
    const r = await runCli(['sweep', '--nodes', urls[1]!, '--before', '30d', '--yes', '--headers-timeout', '2s'], { env, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(2);
    expect(waitingLines(r.stderr)).toEqual([expect.stringContaining(`waiting for ${urls[1]} (no answer for 1 s`)]);
    expect(r.stderr).toMatch(/hint: http:\S+ accepts connections but does not answer \(frozen or overloaded\): wait and run again, or restart it$/m);
    expect(r.stderr).not.toContain('--skip-unreachable');
  }, 40_000);

  it('"the overall deadline of the command" only with --deadline; otherwise the timeout that fired, with its flag', async () => {
    const withDeadline = await runCli(['status', '--nodes', urls[1]!, '--deadline', '1s', '-o', 'json'], { env });
    expect(withDeadline.stdout).toContain('the overall deadline of the command (--deadline 1s) passed before the node answered');

    const without = await runCli(['status', '--nodes', urls[1]!, '--headers-timeout', '1s', '--retries', '0', '-o', 'json'], { env });
    expect(without.stdout).toContain('no answer within 1s (--headers-timeout)');
    expect(without.stdout + without.stderr).not.toContain('deadline');

    // A sweep's poll bounds each status request with its own limit: that limit is named, not a deadline.
    const dispatcher = new Agent();
    try {
      const client = new NodeClient(urls[1]!, { dispatcher });
      const lost = await pollUntilIdle(client, { pollTimeoutMs: 300, lostAfterMs: 700, intervalMs: 50 });
      expect(lost.state).toBe('lost');
      expect(lost.reason).toContain('no answer within 0.3s (the limit of one status poll)');
      expect(lost.reason).not.toContain('deadline');
    } finally {
      await dispatcher.close();
    }
  }, 40_000);
});

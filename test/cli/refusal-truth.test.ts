/**
 * Issue 25: what a refused run says, and leaves. The `--skip-unreachable` hint only where skipping
 * leaves nodes to run on; a refused run in `history` is `refused` with its reason, no node "left".
 * Real reference nodes; a stopped node stands for an unreachable one.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.js';
import { startNode, startNodes, stopAllNodes, type TestNode } from '../helpers/nodes.js';

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
afterAll(stopAllNodes);

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

// A sweep across more nodes than Node's default listener limit (10) prints no runtime warning: every
// node's poll pauses on the run's one signal at once, which is expected, and an operator reading
// stderr at 3 a.m. must not be told about a "possible memory leak".
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningNode } from '../../src/server/server.js';
import { runCli } from '../helpers/cli.js';

const state = mkdtempSync(join(tmpdir(), 'tsnode-many-'));
const env = { XDG_STATE_HOME: state, HOME: state };
const nodes: RunningNode[] = [];

beforeAll(async () => {
  // A paced sweeper keeps each node's sweep running long enough for the polls to overlap.
  for (let i = 0; i < 14; i++) nodes.push(await startServer({ host: '127.0.0.1', port: 0, dataDir: null, sweepPaceMs: 300 }));
});
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.close()));
});

describe('a sweep across 14 nodes', () => {
  it('prints no MaxListenersExceededWarning and every node ends done', async () => {
    const urls = nodes.map((n) => n.url).join(',');
    const r = await runCli(['sweep', '--before', '90d', '--types', 'nnt', '--nodes', urls, '--yes', '--poll-interval', '100ms', '--output', 'json'], { env, timeoutMs: 60_000 });
    expect(r.stderr).not.toMatch(/Warning/);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { nodes: Array<{ state: string }> };
    expect(out.nodes.map((n) => n.state)).toEqual(nodes.map(() => 'done'));
  }, 90_000);
});

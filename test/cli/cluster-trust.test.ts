/**
 * A local ring that rehearses production: span flags reach every node, and `cluster down`
 * signals only processes it can prove are the recorded nodes, whatever cluster.json says.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-cluster-trust-'));
let n = 0;
const freshDir = (): string => join(root, `c${++n}`);
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

describe('cluster up passes span flags to every node', () => {
  it('--rollups and --histogram-rollups', async () => {
    const dir = freshDir();
    const up = await runCli(['cluster', 'up', '--count', '2', '--base-port', '0', '--dir', dir, '--detach', '--rollups', '60,3600', '--histogram-rollups', '1m', '-o', 'json']);
    cleanups.push(() => runCli(['cluster', 'down', '--dir', dir]));
    expect(up.code).toBe(0);
    const nodes = JSON.parse(up.stdout).nodes as Array<{ url: string }>;
    for (const node of nodes) {
      const state = JSON.stringify(await (await fetch(`${node.url}/state`)).json());
      expect(state).toMatch(/3600/);
      expect(state).not.toMatch(/10800/);
    }
  });
});

describe('cluster down with a hostile cluster.json', () => {
  it('signals no process that is not the recorded node: empty, relative or other data dirs', async () => {
    // A decoy whose command line says "serve" and names a data dir, as a user's own process might.
    const decoyDir = join(root, 'decoy-data');
    const decoy = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'serve', '--data-dir', decoyDir], { stdio: 'ignore' });
    cleanups.push(async () => decoy.kill('SIGKILL'));
    await new Promise((r) => decoy.once('spawn', r));
    for (const dataDir of ['', 'decoy-data', '/', join(root, 'other')]) {
      const dir = freshDir();
      mkdirSync(dir, { recursive: true });
      const state = {
        version: 1,
        dir,
        host: '127.0.0.1',
        startedAt: new Date().toISOString(),
        managerPid: 1,
        detached: true,
        nodes: [{ index: 1, url: 'http://127.0.0.1:1', port: 1, pid: decoy.pid, dataDir, logFile: join(dir, 'node-1.log') }],
      };
      writeFileSync(join(dir, 'cluster.json'), JSON.stringify(state));
      const down = await runCli(['cluster', 'down', '--dir', dir, '--grace', '100ms']);
      expect(down.code).toBe(0);
      expect(down.stdout).toMatch(/was not running/);
      expect(decoy.exitCode).toBeNull();
      expect(decoy.signalCode).toBeNull();
    }
  });
});

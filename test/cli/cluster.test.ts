import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import type { ClusterState } from '../../src/cli/local-cluster/state.js';
import { BIN, runCli } from '../helpers/cli.js';
import { isAlive, killMentioning, processGroupOf, processesMentioning } from '../helpers/procs.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-cluster-test-'));
let n = 0;
const freshDir = (): string => join(root, `c${++n}`);

afterAll(async () => {
  // Belt and braces: whatever a failed test left running under our temp root is stopped.
  killMentioning(root);
  rmSync(root, { recursive: true, force: true });
});

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/sweep_delete`);
    await res.text();
    return res.ok;
  } catch {
    return false;
  }
}

function state(dir: string): ClusterState {
  return JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as ClusterState;
}

describe('tsnode cluster up/down', () => {
  it('refuses ports in use, naming the port, before starting anything', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const busy = (blocker.address() as { port: number }).port;
    const dir = freshDir();
    try {
      // The busy port is the second of three: the first must not be started either.
      const r = await runCli(['cluster', 'up', '--count', '3', '--base-port', String(busy - 1), '--dir', dir, '--detach']);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      // (another process on this shared machine may hold a neighbour too: then both are named)
      expect(r.stderr).toMatch(new RegExp(`ports? (\\d+, )*${busy}\\b`));
      expect(r.stderr).toMatch(/in use/);
      expect(r.stderr).toMatch(/no node was started/);
      expect(existsSync(join(dir, 'cluster.json'))).toBe(false);
      expect(existsSync(join(dir, 'nodes.txt'))).toBe(false);
      expect(processesMentioning(dir)).toEqual([]);
    } finally {
      blocker.close();
    }
  });

  it('leaves no half-started cluster when a node fails to start', async () => {
    const dir = freshDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'node-2'), 'not a directory'); // node 2 cannot have its data dir
    const r = await runCli(['cluster', 'up', '--count', '3', '--base-port', '0', '--dir', dir, '--detach']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/node 2/);
    expect(r.stderr).toMatch(/node 1 ready/); // node 1 did start ...
    expect(processesMentioning(dir)).toEqual([]); // ... and was stopped again
    expect(existsSync(join(dir, 'cluster.json'))).toBe(false);
  });

  it('--detach leaves the nodes running; down stops them, reports it, and is idempotent', async () => {
    const dir = freshDir();
    const up = await runCli(['cluster', 'up', '--count', '2', '--base-port', '0', '--dir', dir, '--detach', '-o', 'json']);
    expect(up.stderr).toContain('cluster down');
    expect(up.code).toBe(0);
    const doc = JSON.parse(up.stdout) as { dir: string; nodes_file: string; nodes: Array<{ url: string; pid: number; index: number }>; profile: null };
    expect(doc).toMatchObject({ dir, nodes_file: join(dir, 'nodes.txt'), profile: null });
    const urls = doc.nodes.map((x) => x.url);
    expect(urls).toHaveLength(2);
    for (const u of urls) expect(u).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const listed = readFileSync(join(dir, 'nodes.txt'), 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
    expect(listed).toEqual(urls);
    const pids = state(dir).nodes.map((x) => x.pid);
    for (const u of urls) expect(await answers(u)).toBe(true);
    for (const pid of pids) expect(isAlive(pid)).toBe(true);
    // The nodes serve the node list the other commands read.
    const status = await runCli(['status', '--nodes', join(dir, 'nodes.txt')]);
    expect(status.code).toBe(0);

    // Starting a second cluster in the same dir is refused while the first runs.
    const again = await runCli(['cluster', 'up', '--count', '2', '--base-port', '0', '--dir', dir, '--detach']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already runs/);

    const down = await runCli(['cluster', 'down', '--dir', dir, '-o', 'json']);
    expect(down.code).toBe(0);
    expect(JSON.parse(down.stdout)).toEqual({ dir, found: true, nodes: pids.map((pid, i) => ({ index: i + 1, url: urls[i], pid, outcome: 'stopped' })) });
    expect(down.stderr).toMatch(/stopped 2 of 2 nodes/);
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    for (const u of urls) expect(await answers(u)).toBe(false);
    expect(processesMentioning(dir)).toEqual([]);

    const twice = await runCli(['cluster', 'down', '--dir', dir]);
    expect(twice.code).toBe(0);
    expect(twice.stderr).toMatch(/nothing to stop/);
  });

  it('down handles stale pids: a recorded node that is gone is reported, not signalled', async () => {
    const dir = freshDir();
    mkdirSync(dir, { recursive: true });
    // A pid that certainly exists but is not a node of this dir: this test process.
    const fake: ClusterState = {
      version: 1,
      dir,
      host: '127.0.0.1',
      startedAt: new Date().toISOString(),
      managerPid: 1,
      detached: true,
      nodes: [{ index: 1, url: 'http://127.0.0.1:1', port: 1, pid: process.pid, dataDir: join(dir, 'node-1'), logFile: join(dir, 'node-1.log') }],
    };
    writeFileSync(join(dir, 'cluster.json'), JSON.stringify(fake));
    const down = await runCli(['cluster', 'down', '--dir', dir]);
    expect(down.code).toBe(0);
    expect(down.stdout).toMatch(new RegExp(`│ +1 │ http://127\\.0\\.0\\.1:1 │ +${process.pid} │ was not running`));
    expect(down.stderr).toMatch(/stopped 0 of 1 node/);
    expect(existsSync(join(dir, 'cluster.json'))).toBe(false);
  });

  it('in the foreground, Ctrl-C stops every node and says so', async () => {
    const dir = freshDir();
    const env = { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' };
    const child = spawn(process.execPath, [BIN, 'cluster', 'up', '--count', '2', '--base-port', '0', '--dir', dir, '-o', 'csv'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const urls: string[] = [];
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (l) => {
      const url = /^\d+,(http:\/\/[^,]+),/.exec(l)?.[1];
      if (url) urls.push(url);
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await expect.poll(() => urls.length === 2 && /Ctrl-C/.test(stderr), { timeout: 20_000 }).toBe(true);
    const pids = state(dir).nodes.map((x) => x.pid);
    for (const u of urls) expect(await answers(u)).toBe(true);
    // Nodes run in their own process groups: a Ctrl-C typed in the terminal reaches only the
    // manager, which stops them and reports it (tty.test.ts types a real one).
    for (const pid of pids) expect(processGroupOf(pid)).not.toBe(processGroupOf(child.pid!));

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/stopping every node/);
    expect(stderr).toMatch(/node 1 .* stopped/);
    expect(stderr).toMatch(/node 2 .* stopped/);
    expect(stderr).toMatch(/cluster stopped/);
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    expect(processesMentioning(dir)).toEqual([]);
    expect(existsSync(join(dir, 'cluster.json'))).toBe(false);
  });

  it('a foreground cluster stopped by `cluster down` from elsewhere exits 0 and says so', async () => {
    const dir = freshDir();
    const env = { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' };
    const child = spawn(process.execPath, [BIN, 'cluster', 'up', '--count', '2', '--base-port', '0', '--dir', dir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.resume();
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await expect.poll(() => stderr, { timeout: 20_000 }).toMatch(/Ctrl-C/);
    const down = await runCli(['cluster', 'down', '--dir', dir]);
    expect(down.code).toBe(0);
    expect(down.stderr).toMatch(/stopped 2 of 2 nodes/);
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/stopped with `tsnode cluster down`/);
    expect(stderr).not.toMatch(/exited on its own/);
    expect(processesMentioning(dir)).toEqual([]);
  });

  it('--profile lab registers the cluster, so status --profile lab reaches it; the old --nodes <n> works, with a warning', async () => {
    const dir = freshDir();
    const home = join(root, `home-${n}`);
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
    const up = await runCli(['--profile', 'lab', 'cluster', 'up', '--nodes', '2', '--base-port', '0', '--dir', dir, '--detach', '-o', 'json'], { env });
    expect(up.code, up.stderr).toBe(0);
    try {
      expect(up.stderr).toContain('warning: cluster up --nodes 2 is deprecated: use --count 2');
      expect(up.stderr).toContain(`created profile lab in ~/.config/tsnode/config.yaml: nodes_file ${join(dir, 'nodes.txt')}`);
      expect(up.stderr).toContain('try:   tsnode status --profile lab');
      const doc = JSON.parse(up.stdout) as { profile: string; nodes: Array<{ url: string }> };
      expect(doc.profile).toBe('lab');
      expect(readFileSync(join(home, '.config', 'tsnode', 'config.yaml'), 'utf8')).toBe(`profiles:\n  lab:\n    nodes_file: ${join(dir, 'nodes.txt')}\n`);
      const status = await runCli(['status', '--profile', 'lab', '-o', 'json'], { env });
      expect(status.code, status.stderr).toBe(0);
      expect(status.stderr).toContain(`nodes: profile lab (${join(dir, 'nodes.txt')}), 2 nodes`);
      expect(JSON.parse(status.stdout).nodes.map((x: { node: string }) => x.node)).toEqual(doc.nodes.map((x) => x.url));
    } finally {
      await runCli(['cluster', 'down', '--dir', dir]);
    }
  });

  it('cluster up --profile with a broken config file starts nothing (exit 2)', async () => {
    const dir = freshDir();
    const config = join(root, `broken-${n}.yaml`);
    writeFileSync(config, 'profiles:\n  lab:\n    nodes_fil: x\n');
    const up = await runCli(['--profile', 'lab', 'cluster', 'up', '--count', '1', '--base-port', '0', '--dir', dir, '--detach'], { env: { TSNODE_CONFIG: config } });
    expect(up.code).toBe(2);
    expect(up.stderr).toMatch(/broken-\d+\.yaml:3: profiles\.lab\.nodes_fil: is not a profile key/);
    expect(up.stdout).toBe('');
    expect(existsSync(join(dir, 'cluster.json'))).toBe(false);
    expect(processesMentioning(dir)).toEqual([]);
  });

  it('cluster up --profile that cannot write the config stops its nodes again (exit 1): no cluster nobody can name', async () => {
    const dir = freshDir();
    // A config path under a file: reading it finds nothing (an empty config), writing it fails.
    const up = await runCli(['--profile', 'lab', 'cluster', 'up', '--count', '1', '--base-port', '0', '--dir', dir, '--detach'], {
      env: { TSNODE_CONFIG: '/dev/null/config.yaml' },
    });
    expect(up.code).toBe(1);
    expect(up.stderr).toContain('error: cannot write /dev/null/config.yaml');
    expect(up.stderr).toContain('stopped the 1 node again: the cluster could not be registered as profile lab');
    expect(up.stdout).toBe('');
    expect(existsSync(join(dir, 'cluster.json'))).toBe(false);
    expect(processesMentioning(dir)).toEqual([]);
  });

  it('rejects a bad node count or port with exit 2 naming the flag', async () => {
    const a = await runCli(['cluster', 'up', '--count', 'three', '--dir', freshDir()]);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('--count: "three" is not a whole number');
    const old = await runCli(['cluster', 'up', '--nodes', 'db1:8112', '--dir', freshDir()]);
    expect(old.code).toBe(2);
    expect(old.stderr).toContain('--nodes: "db1:8112" is not a node count (this command starts nodes; --nodes <n> is the old spelling of --count <n>)');
    const both = await runCli(['cluster', 'up', '--nodes', '2', '--count', '2', '--dir', freshDir()]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--count and --nodes both given to cluster up');
    const b = await runCli(['cluster', 'up', '--base-port', '70000', '--dir', freshDir()]);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('--base-port');
  });
});

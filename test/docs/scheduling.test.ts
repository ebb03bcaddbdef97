/**
 * docs/commands/retention.md's cron lines and systemd units, run as printed (only the paths under
 * /etc, /tmp and /usr/local/bin moved into a temporary directory) against a local ring with one
 * node down: the plain line is refused and journaled, the `--skip-unreachable` line sweeps the
 * others (exit 3, the node left), and the next night, with the node back, catches it up.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterState } from '../../src/cli/local-cluster/state.js';
import { BIN, NO_USER_CONFIG, runCli } from '../helpers/cli.js';
import { killMentioning } from '../helpers/procs.js';
import { eventually } from '../helpers/ring.js';

const page = readFileSync(fileURLToPath(new URL('../../docs/commands/retention.md', import.meta.url)), 'utf8');
const blocks = (lang: string): string[] => [...page.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
/** The command of each cron line (the five schedule fields dropped). */
const cronLines = blocks('cron').flatMap((b) =>
  b
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => l.trim().split(/\s+/).slice(5).join(' ')),
);
/** A unit's last `ExecStart=` with a command, and its `Environment=` assignments. */
function unit(text: string): { exec: string; env: Record<string, string> } {
  const exec = text
    .split('\n')
    .filter((l) => /^ExecStart=./.test(l))
    .at(-1)!
    .slice('ExecStart='.length);
  const env = Object.fromEntries(
    text
      .split('\n')
      .filter((l) => l.startsWith('Environment='))
      .flatMap((l) => l.slice('Environment='.length).split(/\s+/))
      .map((kv) => kv.split('=') as [string, string]),
  );
  return { exec, env };
}

const root = mkdtempSync(join(tmpdir(), 'tsnode-scheduling-'));
const etc = join(root, 'etc');
const home = join(root, 'home');
const shim = join(root, 'bin', 'tsnode');
const ringDir = join(root, 'ring');
/** The printed paths, moved under the temporary directory. */
const moved = (text: string): string =>
  text.replaceAll('/etc/tsnode/', `${etc}/`).replaceAll('/tmp/tsnode-retention.lock', join(root, 'lock')).replaceAll('/usr/local/bin/tsnode', shim);
const env: Record<string, string | undefined> = { ...NO_USER_CONFIG, HOME: home, TSNODE_CONFIG: join(etc, 'config.yaml'), XDG_STATE_HOME: join(root, 'state') };
let urls: string[];

function sh(line: string, extra: Record<string, string> = {}): Promise<number> {
  const full: Record<string, string | undefined> = { ...process.env, ...env, PATH: `${join(root, 'bin')}:${process.env.PATH ?? ''}`, NO_COLOR: '1', ...extra };
  for (const k of Object.keys(full)) if (full[k] === undefined) delete full[k];
  return new Promise((resolve) => execFile('sh', ['-c', moved(line)], { env: full, timeout: 120_000 }, (err) => resolve(err ? ((err as { code?: number }).code ?? -1) : 0)));
}

interface HistoryRun {
  run: string;
  exit_code: number | null;
  pending: string[];
  nodes: Array<{ node: string; state: string }>;
}
async function history(state = join(root, 'state')): Promise<HistoryRun[]> {
  const r = await runCli(['history', '-o', 'json'], { env: { ...env, XDG_STATE_HOME: state } });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { runs: HistoryRun[] }).runs;
}

beforeAll(async () => {
  mkdirSync(etc, { recursive: true });
  mkdirSync(home, { recursive: true });
  mkdirSync(join(root, 'bin'), { recursive: true });
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(shim, 0o755);
  writeFileSync(join(etc, 'retention.yaml'), 'nnt:\n  "*": 30d\ntext: 90d\n');
  const up = await runCli(['cluster', 'up', '--count', '3', '--base-port', '0', '--dir', ringDir, '--detach', '--profile', 'prod'], { env, timeoutMs: 60_000 });
  expect(up.code, up.stderr).toBe(0);
  const state = JSON.parse(readFileSync(join(ringDir, 'cluster.json'), 'utf8')) as ClusterState;
  urls = state.nodes.map((n) => n.url);
  await killNode(state.nodes[2]!.pid);
}, 90_000);

/** SIGKILL, and wait until the node's port refuses (a night must find it down). */
async function killNode(pid: number): Promise<void> {
  process.kill(pid, 'SIGKILL');
  await eventually('the node refuses connections', () =>
    fetch(`${urls[2]}/state`).then(
      () => false,
      () => true,
    ),
  );
}

afterAll(async () => {
  await runCli(['cluster', 'down', '--dir', ringDir, '--grace', '1s']);
  killMentioning(root);
  rmSync(root, { recursive: true, force: true });
});

describe('retention.md scheduling, as printed, with a node down', () => {
  it('the docs print a plain cron line, one with --skip-unreachable, a unit and a drop-in with it', () => {
    expect(cronLines).toHaveLength(2);
    expect(cronLines[0]).not.toContain('--skip-unreachable');
    expect(cronLines[1]).toBe(cronLines[0]!.replace('--yes', '--yes --skip-unreachable'));
    const units = blocks('ini').filter((b) => b.includes('ExecStart='));
    expect(units).toHaveLength(2);
    expect(unit(units[1]!).exec).toBe(unit(units[0]!).exec.replace('--yes', '--yes --skip-unreachable'));
  });

  it('cron: the plain line is refused and journaled; --skip-unreachable sweeps the others (exit 3, the node left); the next night catches it up', async () => {
    const log = join(home, 'tsnode-retention.log');
    expect(await sh(cronLines[0]!), readFileSync(log, 'utf8')).toBe(2);
    expect(readFileSync(log, 'utf8')).toContain('refusing to apply the retention policy: nothing was sent');
    expect(readFileSync(log, 'utf8')).toContain(`${urls[2]} is unreachable`);
    const refused = await history();
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ exit_code: 2 });
    expect(refused[0]!.nodes.map((n) => n.state)).toEqual(['refused', 'refused', 'refused']);

    expect(await sh(cronLines[1]!)).toBe(3);
    const runs = await history();
    const skipped = runs.find((r) => r.run !== refused[0]!.run)!;
    expect(skipped.exit_code).toBe(3);
    expect(skipped.pending).toEqual([urls[2]]);

    // The next night, with the node back on its port.
    const back = await runCli(['cluster', 'up', '--dir', ringDir], { env, timeoutMs: 60_000 });
    expect(back.code, back.stderr).toBe(0);
    expect(await sh(cronLines[1]!)).toBe(0);
    const after = await history();
    expect(after.find((r) => r.run === skipped.run)!.pending).toEqual([]);
    // The JSON results of every night were appended where the line says.
    expect(readFileSync(join(home, 'tsnode-retention.json'), 'utf8')).toContain('"skipped"');
  }, 180_000);

  it('systemd: the unit as printed fails the night (exit 2); with the drop-in, or skip_unreachable in the profile, it runs on the others (exit 3)', async () => {
    const ring = JSON.parse(readFileSync(join(ringDir, 'cluster.json'), 'utf8')) as ClusterState;
    await killNode(ring.nodes[2]!.pid);
    const [service, dropIn] = blocks('ini').filter((b) => b.includes('ExecStart='));
    const { exec, env: unitEnv } = unit(service!);
    const state = join(root, 'var-lib');
    // %S is systemd's state directory root (/var/lib); StateDirectory=tsnode makes /var/lib/tsnode.
    const withUnitEnv = Object.fromEntries(Object.entries(unitEnv).map(([k, v]) => [k, moved(v.replaceAll('%S', state))]));
    expect(withUnitEnv).toEqual({ XDG_STATE_HOME: state, TSNODE_CONFIG: join(etc, 'config.yaml') });
    expect(await sh(exec, withUnitEnv)).toBe(2);
    expect(await sh(unit(dropIn!).exec, withUnitEnv)).toBe(3);
    // The choice in the profile instead: the unit as printed then runs on the others too, and says why.
    const set = await runCli(['profile', 'set', 'prod', '--skip-unreachable'], { env });
    expect(set.code, set.stderr).toBe(0);
    expect(readFileSync(join(etc, 'config.yaml'), 'utf8')).toContain('skip_unreachable: true');
    expect(await sh(`${exec} 2>${join(root, 'profile-night.log')}`, withUnitEnv)).toBe(3);
    expect(readFileSync(join(root, 'profile-night.log'), 'utf8')).toMatch(
      /skip_unreachable from profiles\.prod\.skip_unreachable \(.*config\.yaml:\d+\): nodes that do not answer are left out/,
    );
    const runs = await history(state);
    expect(runs.map((r) => r.exit_code)).toEqual([2, 3, 3]);
    expect(runs[1]!.pending).toEqual([urls[2]]);
  }, 120_000);
});

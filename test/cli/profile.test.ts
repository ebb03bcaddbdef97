import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startRecordingNode } from '../helpers/recording-node.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-profile-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
/** A fresh home and config dir per test: the CLI run as a user with nothing configured yet. */
function user(): { env: Record<string, string | undefined>; file: string; home: string } {
  const home = join(root, `u${n++}`);
  return { env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), PROD_TOKEN: 'never-printed-token' }, file: join(home, '.config', 'tsnode', 'config.yaml'), home };
}

/** stderr without the timestamps non-interactive logs carry. */
const lines = (stderr: string): string[] =>
  stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(/^\S+Z /, ''));

describe('tsnode profile', () => {
  it('set creates the file 0600; list, show, use and remove work on it', async () => {
    const u = user();
    const set = await runCli(
      [
        'profile',
        'set',
        'prod',
        '--nodes',
        'db1:8112,https://db2:8443',
        '--header-prefix',
        'X-Snowth',
        '--header',
        'Authorization: Bearer ${PROD_TOKEN}',
        '--nnt-rollups',
        '60,300',
      ],
      { env: u.env, cwd: root },
    );
    expect(set.code).toBe(0);
    expect(set.stdout).toBe('');
    expect(lines(set.stderr)).toEqual(['created profile prod in ~/.config/tsnode/config.yaml', 'make it the default target with: tsnode profile use prod']);
    expect(statSync(u.file).mode & 0o777).toBe(0o600);
    expect(readFileSync(u.file, 'utf8')).toBe(
      'profiles:\n  prod:\n    nodes: [http://db1:8112, https://db2:8443]\n    header_prefix: X-Snowth\n    headers:\n      Authorization: Bearer ${PROD_TOKEN}\n    nnt_rollups: [60, 300]\n',
    );

    const lab = await runCli(['profile', 'set', 'lab', '--nodes-file', 'tsnode-cluster/nodes.txt'], { env: u.env, cwd: root });
    expect(lab.code).toBe(0);
    expect(readFileSync(u.file, 'utf8')).toContain(`nodes_file: ${join(root, 'tsnode-cluster/nodes.txt')}`);

    const use = await runCli(['profile', 'use', 'prod'], { env: u.env });
    expect(use.code).toBe(0);
    expect(lines(use.stderr)).toEqual(['current profile: prod (~/.config/tsnode/config.yaml)']);

    const names = await runCli(['profile', 'list', '--names'], { env: u.env });
    expect(names.stdout).toBe('prod\nlab\n');

    const list = await runCli(['profile', 'list', '--output', 'json'], { env: u.env });
    expect(list.code).toBe(0);
    const doc = JSON.parse(list.stdout) as { current: string; profiles: Array<Record<string, unknown>> };
    expect(doc.current).toBe('prod');
    expect(doc.profiles.map((p) => [p.name, p.current])).toEqual([
      ['prod', true],
      ['lab', false],
    ]);

    const table = await runCli(['profile', 'list'], { env: u.env });
    expect(table.stdout).toMatch(/\*\s+│ prod\s+│ 2 nodes: http:\/\/db1:8112, https:\/\/db2:8443/);

    const removed = await runCli(['profile', 'remove', 'prod'], { env: u.env });
    expect(removed.code).toBe(0);
    expect(lines(removed.stderr)[0]).toMatch(/removed profile prod .*it was the current profile, so there is none now/);
    expect(readFileSync(u.file, 'utf8')).not.toMatch(/current|prod/);
  });

  it("show lists a profile's nodes one per row (not as one cell with an escaped \\n)", async () => {
    const u = user();
    await runCli(['profile', 'set', 'two', '--nodes', 'db1:8112,db2:8112'], { env: u.env });
    const r = await runCli(['profile', 'show', 'two'], { env: u.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/│ nodes +│ http:\/\/db1:8112 │\n│ +│ http:\/\/db2:8112 │/);
    expect(r.stdout).not.toContain('\\n');
  });

  it('show never prints a secret: literal values redacted, ${VAR} shown as written, in table and JSON', async () => {
    const u = user();
    writeFileSync(
      join(root, 'cfg-secret.yaml'),
      'profiles:\n  prod:\n    seed: https://db1:8443\n    headers:\n      Authorization: "Bearer ${PROD_TOKEN}"\n      X-Api-Key: sk-live-123456\n',
      { mode: 0o600 },
    );
    const env = { ...u.env, TSNODE_CONFIG: join(root, 'cfg-secret.yaml') };
    for (const output of ['table', 'json']) {
      const r = await runCli(['profile', 'show', 'prod', '--output', output], { env });
      expect(r.code).toBe(0);
      expect(r.stdout + r.stderr).not.toContain('sk-live-123456');
      expect(r.stdout + r.stderr).not.toContain('never-printed-token');
      expect(r.stdout).toContain('Bearer ${PROD_TOKEN}');
      expect(r.stdout).toContain('[redacted]');
    }
    const json = JSON.parse((await runCli(['profile', 'show', 'prod', '-o', 'json'], { env })).stdout) as Record<string, unknown>;
    expect(json).toEqual({
      config_file: join(root, 'cfg-secret.yaml'),
      name: 'prod',
      current: false,
      seed: 'https://db1:8443',
      headers: { Authorization: 'Bearer ${PROD_TOKEN}', 'X-Api-Key': '[redacted]' },
    });
  });

  it('show without a name shows --profile, else TSNODE_PROFILE, else current', async () => {
    const u = user();
    writeFileSync(join(root, 'cfg-three.yaml'), 'current: a\nprofiles:\n  a:\n    seed: db1\n  b:\n    seed: db2\n  c:\n    seed: db3\n');
    const env = { ...u.env, TSNODE_CONFIG: join(root, 'cfg-three.yaml') };
    const name = async (args: string[], extra: Record<string, string> = {}): Promise<unknown> =>
      JSON.parse((await runCli([...args, 'profile', 'show', '-o', 'json'], { env: { ...env, ...extra } })).stdout).name;
    expect(await name([])).toBe('a');
    expect(await name([], { TSNODE_PROFILE: 'b' })).toBe('b');
    expect(await name(['--profile', 'c'], { TSNODE_PROFILE: 'b' })).toBe('c');
  });

  it('an unknown profile is exit 2 with a suggestion and the profiles there are', async () => {
    const u = user();
    await runCli(['profile', 'set', 'prod', '--seed', 'db1'], { env: u.env });
    const r = await runCli(['profile', 'use', 'prdo'], { env: u.env });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(lines(r.stderr)).toEqual([
      'error: profile use: no profile named "prdo" in ~/.config/tsnode/config.yaml',
      '  hint: did you mean prod? profiles in ~/.config/tsnode/config.yaml: prod',
    ]);
  });

  it('a broken config file: exit 2 naming file, line, key and the expected value; nothing written', async () => {
    const u = user();
    const path = join(root, 'cfg-broken.yaml');
    const text = 'profiles:\n  prod:\n    nodes: [db1]\n    smallest_span: sixty\n';
    writeFileSync(path, text);
    const r = await runCli(['profile', 'set', 'prod', '--seed', 'db2'], { env: { ...u.env, TSNODE_CONFIG: path } });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual([`error: ${path}:4: profiles.prod.smallest_span: "sixty" is not a span`, '  hint: expected whole seconds: 60, 300 (or 60s, 5m, 1h, 1d)']);
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it('warns when a file others can read holds a literal secret (and names no secret)', async () => {
    const u = user();
    const path = join(root, 'cfg-open.yaml');
    writeFileSync(path, 'profiles:\n  prod:\n    headers:\n      Authorization: Bearer abcdef123\n');
    chmodSync(path, 0o644);
    const r = await runCli(['profile', 'list'], { env: { ...u.env, TSNODE_CONFIG: path } });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: .*cfg-open\.yaml is readable by other users \(mode 644\) and holds a literal secret in profiles\.prod\.headers\.Authorization \(line 4\)/);
    expect(r.stderr).not.toContain('abcdef123');
  });

  it('set refuses bad values before writing anything', async () => {
    const u = user();
    const bad = await runCli(['profile', 'set', 'prod', '--nodes', 'ftp://x'], { env: u.env });
    expect(bad.code).toBe(2);
    expect(lines(bad.stderr)[0]).toBe('error: --nodes item 1: "ftp://x": only http and https nodes are supported');
    const nothing = await runCli(['profile', 'set', 'prod'], { env: u.env });
    expect(nothing.code).toBe(2);
    expect(lines(nothing.stderr)[0]).toBe('error: profile set prod: nothing to set');
    const name = await runCli(['profile', 'set', 'my prod', '--seed', 'db1'], { env: u.env });
    expect(name.code).toBe(2);
    expect(lines(name.stderr)[0]).toBe('error: profile name "my prod" is not valid');
    expect(() => statSync(u.file)).toThrow();
  });

  it('-q keeps stderr to warnings and errors', async () => {
    const u = user();
    const r = await runCli(['-q', 'profile', 'set', 'lab', '--seed', 'db1'], { env: u.env });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const err = await runCli(['profile', 'use', 'nope', '--quiet'], { env: u.env });
    expect(err.code).toBe(2);
    expect(lines(err.stderr)).toEqual(['error: profile use: no profile named "nope" in ~/.config/tsnode/config.yaml', '  hint: profiles in ~/.config/tsnode/config.yaml: lab']);
  });
});

describe("commander's errors in tsnode's style", () => {
  it('unknown command and option: error + hint on stderr, nothing on stdout, exit 2', async () => {
    const r = await runCli(['swep', '--before', '1d']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(lines(r.stderr)).toEqual(['error: unknown command "swep" for tsnode', '  hint: did you mean sweep? (tsnode --help lists the commands)']);
    const o = await runCli(['status', '--outptu', 'json']);
    expect(o.code).toBe(2);
    expect(lines(o.stderr)).toEqual(['error: unknown option --outptu for tsnode status', '  hint: did you mean --output? (tsnode status --help lists the options)']);
  });

  it('a bad choice names the flag, the value and the allowed ones', async () => {
    const r = await runCli(['status', '--output', 'yaml']);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(['error: --output: "yaml" is not one of table, json, csv', '  hint: use one of: table, json, csv']);
  });
});

describe('sweep and sweep cancel read profiles', () => {
  it('--profile names the nodes over TSNODE_NODES; TSNODE_PROFILE too; the profile is said on stderr', async () => {
    const node = await startRecordingNode();
    const other = await startRecordingNode();
    try {
      const u = user();
      await runCli(['profile', 'set', 'prod', '--nodes', node.url], { env: u.env });
      const flag = await runCli(['--profile', 'prod', 'sweep', '--before', '1d', '--dry-run'], { env: { ...u.env, TSNODE_NODES: other.url } });
      expect(flag.code).toBe(0);
      expect(lines(flag.stderr)[0]).toBe('nodes: profile prod, 1 node');
      expect(flag.stdout).toMatch(new RegExp(`^DELETE ${node.url}/sweep_delete\n`));
      const env = await runCli(['sweep', 'cancel', '--dry-run'], { env: { ...u.env, TSNODE_PROFILE: 'prod' } });
      expect(env.code).toBe(0);
      expect(env.stdout).toBe(`GET ${node.url}/sweep_delete/cancel\n`);
      expect(node.requests).toEqual([]);
      expect(other.requests).toEqual([]);
    } finally {
      await node.close();
      await other.close();
    }
  });
});

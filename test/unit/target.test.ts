import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/cli/config/file.js';
import { resolveTarget, type TargetFs, type TargetInputs } from '../../src/cli/config/target.js';
import { CliError } from '../../src/cli/errors.js';

const CONFIG_PATH = '/home/op/.config/tsnode/config.yaml';
const CONFIG = parseConfig(
  `current: prod
profiles:
  prod:
    nodes: [https://db1:8443, https://db2:8443]
    header_prefix: X-Snowth
    cacert: ca.pem
    cert: ~/me.pem
    key: ~/me.key
    headers:
      Authorization: "Bearer \${PROD_TOKEN}"
      X-Tenant: acme
    smallest_span: 60
    nnt_rollups: [60, 300]
  lab:
    nodes_file: ./tsnode-cluster/nodes.txt
  ring:
    seed: https://seed:8443
  settings-only:
    header_prefix: X-Snowth
`,
  CONFIG_PATH,
  '~/.config/tsnode/config.yaml',
);
const NO_CURRENT = parseConfig('profiles:\n  prod:\n    nodes: [db9]\n', CONFIG_PATH, '~/.config/tsnode/config.yaml');

/** An in-memory file system: path -> text. */
function memFs(files: Record<string, string>): TargetFs {
  return {
    exists: (p) => p in files,
    readText: (p) => {
      if (!(p in files)) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
      return files[p]!;
    },
  };
}

const FILES = {
  '/home/op/.config/tsnode/tsnode-cluster/nodes.txt': 'http://127.0.0.1:8112\nhttp://127.0.0.1:8113\n# comment\nhttp://127.0.0.1:8114\n',
  '/work/mine.txt': 'a:1\nb:2\n',
};

function target(over: Partial<TargetInputs> = {}) {
  return resolveTarget({
    flags: {},
    env: { PROD_TOKEN: 't0k3n' },
    config: CONFIG,
    cwd: '/work',
    home: '/home/op',
    fs: memFs(FILES),
    ...over,
  });
}

function refused(over: Partial<TargetInputs>): CliError {
  try {
    target(over);
  } catch (err) {
    expect(err).toBeInstanceOf(CliError);
    return err as CliError;
  }
  throw new Error('expected resolution to fail');
}

describe('where the nodes come from (flag > environment > profile > default)', () => {
  it('the current profile when nothing else names them', () => {
    const t = target();
    expect(t.source).toEqual({ kind: 'list', nodes: ['https://db1:8443', 'https://db2:8443'] });
    expect(t.describe()).toBe('nodes: profile prod, 2 nodes');
    expect(t.profile).toEqual({ name: 'prod', via: 'current' });
    expect(t.layer).toBe('profile');
  });

  it('--nodes (a list or a file) wins over everything, and then `current` lends nothing', () => {
    const list = target({ flags: { nodes: 'x:1,y:2' }, env: { TSNODE_NODES: 'z:3', PROD_TOKEN: 't' } });
    expect(list.source).toEqual({ kind: 'list', nodes: ['http://x:1', 'http://y:2'] });
    expect(list.describe()).toBe('nodes: --nodes, 2 nodes');
    expect(list.profile).toBeUndefined();
    expect(list.headers).toEqual({});
    expect(list.headerPrefix).toEqual({ value: 'X-Service', from: 'default' });
    const file = target({ flags: { nodes: 'mine.txt' } });
    expect(file.describe()).toBe('nodes: --nodes mine.txt, 2 nodes');
    expect(file.source).toEqual({ kind: 'list', nodes: ['http://a:1', 'http://b:2'] });
  });

  it('--seed is a node source of its own; --nodes and --seed together are refused', () => {
    const t = target({ flags: { seed: 'db1:8112' } });
    expect(t.source).toEqual({ kind: 'seed', seed: 'http://db1:8112' });
    expect(t.describe()).toBe('nodes: --seed db1:8112, ring not discovered yet');
    expect(t.describe(6)).toBe('nodes: --seed db1:8112, 6 nodes discovered');
    expect(refused({ flags: { seed: 'a', nodes: 'b' } }).message).toBe('--nodes and --seed both name the nodes');
    expect(refused({ flags: { seed: 'ftp://x' } }).message).toMatch(/^--seed: "ftp:\/\/x": only http and https/);
  });

  it('an explicit --profile names the whole target: its nodes win over TSNODE_NODES', () => {
    const t = target({ flags: { profile: 'lab' }, env: { TSNODE_NODES: 'z:3' } });
    expect(t.source).toEqual({ kind: 'list', nodes: ['http://127.0.0.1:8112', 'http://127.0.0.1:8113', 'http://127.0.0.1:8114'] });
    expect(t.describe()).toBe('nodes: profile lab (~/.config/tsnode/tsnode-cluster/nodes.txt), 3 nodes');
    expect(t.profile).toEqual({ name: 'lab', via: '--profile' });
  });

  it('--nodes still wins over --profile, whose settings then apply to those nodes', () => {
    const t = target({ flags: { profile: 'prod', nodes: 'x:1' } });
    expect(t.source).toEqual({ kind: 'list', nodes: ['http://x:1'] });
    expect(t.profile).toEqual({ name: 'prod', via: '--profile' });
    expect(t.headerPrefix.value).toBe('X-Snowth');
    expect(t.headers.Authorization).toBe('Bearer t0k3n');
  });

  it('TSNODE_NODES wins over the current profile (which then lends nothing)', () => {
    const t = target({ env: { TSNODE_NODES: 'z:3', PROD_TOKEN: 't' } });
    expect(t.source).toEqual({ kind: 'list', nodes: ['http://z:3'] });
    expect(t.describe()).toBe('nodes: TSNODE_NODES, 1 node');
    expect(t.layer).toBe('env');
    expect(t.profile).toBeUndefined();
    expect(t.headers).toEqual({});
  });

  it('TSNODE_PROFILE selects a profile; TSNODE_NODES (more specific) still names the nodes; --profile beats it', () => {
    expect(target({ env: { TSNODE_PROFILE: 'ring' } }).source).toEqual({ kind: 'seed', seed: 'https://seed:8443' });
    expect(target({ env: { TSNODE_PROFILE: 'ring' } }).describe()).toBe('nodes: profile ring (seed https://seed:8443), ring not discovered yet');
    const both = target({ env: { TSNODE_PROFILE: 'prod', TSNODE_NODES: 'z:3', PROD_TOKEN: 't' } });
    expect(both.source).toEqual({ kind: 'list', nodes: ['http://z:3'] });
    expect(both.profile).toEqual({ name: 'prod', via: 'TSNODE_PROFILE' });
    expect(both.headerPrefix.value).toBe('X-Snowth');
    expect(target({ flags: { profile: 'lab' }, env: { TSNODE_PROFILE: 'ring' } }).profile).toEqual({ name: 'lab', via: '--profile' });
  });

  it('read-only commands fall back to ./nodes.txt, then the default node', () => {
    const local = target({ config: NO_CURRENT, fs: memFs({ '/work/nodes.txt': 'l1:1\n' }) });
    expect(local.describe()).toBe('nodes: ./nodes.txt, 1 node');
    expect(local.layer).toBe('fallback');
    const none = target({ config: NO_CURRENT, fs: memFs({}) });
    expect(none.source).toEqual({ kind: 'list', nodes: ['http://127.0.0.1:8112'] });
    expect(none.layer).toBe('default');
    expect(none.describe()).toBe('nodes: default http://127.0.0.1:8112 (no --nodes, --seed, --profile, TSNODE_NODES or profile nodes)');
  });

  it('a profile without nodes falls through to the next source', () => {
    const t = target({ flags: { profile: 'settings-only' }, env: { TSNODE_NODES: 'z:3' } });
    expect(t.source).toEqual({ kind: 'list', nodes: ['http://z:3'] });
    expect(t.headerPrefix).toEqual({ value: 'X-Snowth', from: 'profiles.settings-only.header_prefix (~/.config/tsnode/config.yaml:19)' });
  });
});

describe('destructive commands never fall back', () => {
  it('no source anywhere: exit 2, code no_target, says how to give one', () => {
    const e = refused({ config: NO_CURRENT, destructive: true, command: 'tsnode sweep', fs: memFs({}) });
    expect(e.exitCode).toBe(2);
    expect(e.code).toBe('no_target');
    expect(e.message).toMatch(/^tsnode sweep acts on every node it is given, and was given none/);
    expect(e.hint).toMatch(/--nodes <file\|list>, --seed <url>, or --profile <name>/);
  });

  it('not even to an existing ./nodes.txt (the hint points at it)', () => {
    const e = refused({ config: NO_CURRENT, destructive: true, command: 'tsnode sweep', fs: memFs({ '/work/nodes.txt': 'a:1\n' }) });
    expect(e.hint).toContain('./nodes.txt exists: pass --nodes nodes.txt to use it');
  });

  it('a profile without nodes is not a target', () => {
    const e = refused({ flags: { profile: 'settings-only' }, destructive: true, command: 'tsnode sweep cancel' });
    expect(e.message).toContain('profile settings-only names no nodes');
  });

  it('any explicit source is enough', () => {
    expect(target({ destructive: true }).describe()).toBe('nodes: profile prod, 2 nodes');
    expect(target({ destructive: true, config: NO_CURRENT, env: { TSNODE_NODES: 'a:1' } }).describe()).toBe('nodes: TSNODE_NODES, 1 node');
  });
});

describe('profiles that are not there', () => {
  it('--profile and TSNODE_PROFILE naming no profile: exit 2 with the profiles there are', () => {
    const e = refused({ flags: { profile: 'prdo' } });
    expect([e.code, e.exitCode]).toEqual(['profile_not_found', 2]);
    expect(e.message).toBe('--profile: no profile named "prdo" in ~/.config/tsnode/config.yaml');
    expect(e.hint).toBe('did you mean prod? profiles in ~/.config/tsnode/config.yaml: prod, lab, ring, settings-only');
    expect(refused({ env: { TSNODE_PROFILE: 'x' } }).message).toMatch(/^TSNODE_PROFILE: no profile named "x"/);
  });

  it('current naming a removed profile says where current is set', () => {
    const c = parseConfig('current: gone\nprofiles:\n  a:\n    seed: db1\n', CONFIG_PATH, '~/c.yaml');
    expect(refused({ config: c }).message).toBe('current (~/c.yaml:1): no profile named "gone" in ~/c.yaml');
  });

  it('a nodes_file that does not exist names the key and the resolved path', () => {
    const e = refused({ flags: { profile: 'lab' }, fs: memFs({}) });
    expect(e.message).toBe('profiles.lab.nodes_file (~/.config/tsnode/config.yaml:15): node list file ~/.config/tsnode/tsnode-cluster/nodes.txt does not exist');
  });
});

describe('settings, each on its own: flag > environment > profile > default', () => {
  it('headers: profile, then TSNODE_HEADERS, then --header; ${VAR}s expanded', () => {
    const t = target({
      env: { PROD_TOKEN: 't0k3n', TSNODE_HEADERS: 'X-Tenant: from-env; X-Env: 1' },
      flags: { header: ['x-env: 2'] },
    });
    expect(t.headers).toEqual({ Authorization: 'Bearer t0k3n', 'X-Tenant': 'from-env', 'x-env': '2' });
  });

  it('an unset ${VAR} is an error naming the file, line and variable, never a header sent empty', () => {
    const e = refused({ env: {} });
    expect([e.code, e.exitCode]).toEqual(['config_variable_unset', 2]);
    expect(e.message).toBe('profiles.prod.headers.Authorization (~/.config/tsnode/config.yaml:10) uses ${PROD_TOKEN}, which is not set');
    expect(e.hint).toContain('export PROD_TOKEN=');
  });

  it('header prefix: --header-prefix (any case) > profile > X-Service', () => {
    expect(target().headerPrefix).toEqual({ value: 'X-Snowth', from: 'profiles.prod.header_prefix (~/.config/tsnode/config.yaml:5)' });
    expect(target({ flags: { headerPrefix: 'x-service' } }).headerPrefix).toEqual({ value: 'X-Service', from: '--header-prefix' });
    expect(refused({ flags: { headerPrefix: 'X-Snoth' } }).hint).toBe('did you mean X-Snowth?');
  });

  it("TLS files: flags from the working directory, the profile's from the config directory or ~", () => {
    expect(target().tls).toEqual({
      cacert: { value: '/home/op/.config/tsnode/ca.pem', from: 'profiles.prod.cacert (~/.config/tsnode/config.yaml:6)' },
      cert: { value: '/home/op/me.pem', from: 'profiles.prod.cert (~/.config/tsnode/config.yaml:7)' },
      key: { value: '/home/op/me.key', from: 'profiles.prod.key (~/.config/tsnode/config.yaml:8)' },
    });
    expect(target({ flags: { cacert: 'my-ca.pem' } }).tls.cacert).toEqual({ value: '/work/my-ca.pem', from: '--cacert' });
    expect(refused({ config: NO_CURRENT, flags: { cert: 'c.pem' } }).message).toMatch(/^--cert needs a private key too/);
  });

  it('spans: flags > profile', () => {
    expect(target().spans).toEqual({
      smallestSpan: { value: 60, from: 'profiles.prod.smallest_span (~/.config/tsnode/config.yaml:12)' },
      nntRollups: { value: [60, 300], from: 'profiles.prod.nnt_rollups (~/.config/tsnode/config.yaml:13)' },
    });
    expect(target({ flags: { smallestSpan: 10, histogramRollups: [10] } }).spans).toMatchObject({
      smallestSpan: { value: 10, from: '--smallest-span' },
      histogramRollups: { value: [10], from: '--histogram-rollups' },
    });
  });
});

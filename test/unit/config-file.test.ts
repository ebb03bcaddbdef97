import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigFileError, parseConfig, type ConfigFile } from '../../src/cli/config/file.js';
import { loadConfig, loadConfigFile, permissionWarnings } from '../../src/cli/config/load.js';
import { configPath, expandHome, resolveConfigRelative, showPath } from '../../src/cli/config/paths.js';
import { expandTemplate, hasLiteralSecret, redactTemplate, templateProblem } from '../../src/cli/config/secrets.js';
import { removeProfileText, setProfileText, useProfileText, writeConfigFile } from '../../src/cli/config/write.js';

const ISSUE_EXAMPLE = `current: prod
profiles:
  prod:
    nodes: [https://db1.example.net:8443, https://db2.example.net:8443]   # or nodes_file: <path>, or seed: <url>
    header_prefix: X-Snowth
    cacert: /etc/tsnode/prod-ca.pem
    cert: ~/.tsnode/me.pem
    key: ~/.tsnode/me.key
    headers:
      Authorization: "Bearer \${PROD_TOKEN}"     # \${VAR} is read from the environment when used
    smallest_span: 60
    nnt_rollups: [60, 300, 1800, 10800]        # optional: checks spans when nodes do not report them (GET /state)
    histogram_rollups: [60, 300, 1800, 10800]
  lab:
    nodes_file: ./tsnode-cluster/nodes.txt
`;

const FILE = '/home/op/.config/tsnode/config.yaml';
const parse = (text: string): ConfigFile => parseConfig(text, FILE, '~/.config/tsnode/config.yaml');

function configError(text: string): ConfigFileError {
  try {
    parse(text);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigFileError);
    expect((err as ConfigFileError).exitCode).toBe(2);
    expect((err as ConfigFileError).code).toBe('config_invalid');
    return err as ConfigFileError;
  }
  throw new Error('expected the config to be refused');
}

describe('config file paths', () => {
  const home = '/home/op';
  it('TSNODE_CONFIG, else XDG_CONFIG_HOME, else ~/.config', () => {
    expect(configPath({ env: { TSNODE_CONFIG: '~/t.yaml', XDG_CONFIG_HOME: '/x' }, home, cwd: '/w' })).toBe('/home/op/t.yaml');
    expect(configPath({ env: { TSNODE_CONFIG: 'rel.yaml' }, home, cwd: '/w' })).toBe('/w/rel.yaml');
    expect(configPath({ env: { XDG_CONFIG_HOME: '/x' }, home, cwd: '/w' })).toBe('/x/tsnode/config.yaml');
    expect(configPath({ env: { XDG_CONFIG_HOME: 'relative' }, home, cwd: '/w' })).toBe('/home/op/.config/tsnode/config.yaml');
    expect(configPath({ env: {}, home, cwd: '/w' })).toBe('/home/op/.config/tsnode/config.yaml');
  });

  it("paths in the file: ~ expanded, relative ones from the file's directory", () => {
    expect(expandHome('~', home)).toBe(home);
    expect(expandHome('~/a', home)).toBe('/home/op/a');
    expect(expandHome('~bob/a', home)).toBe('~bob/a');
    expect(resolveConfigRelative('./tsnode-cluster/nodes.txt', FILE, home)).toBe('/home/op/.config/tsnode/tsnode-cluster/nodes.txt');
    expect(resolveConfigRelative('~/.tsnode/me.pem', FILE, home)).toBe('/home/op/.tsnode/me.pem');
    expect(resolveConfigRelative('/etc/ca.pem', FILE, home)).toBe('/etc/ca.pem');
    expect(showPath('/home/op/x', home)).toBe('~/x');
    expect(showPath('/home/opera/x', home)).toBe('/home/opera/x');
  });
});

describe('parsing the config file', () => {
  it('reads the example from the issue exactly', () => {
    const c = parse(ISSUE_EXAMPLE);
    expect(c.current).toEqual({ name: 'prod', line: 1 });
    expect([...c.profiles.keys()]).toEqual(['prod', 'lab']);
    const prod = c.profiles.get('prod')!;
    expect(prod).toMatchObject({
      nodes: ['https://db1.example.net:8443', 'https://db2.example.net:8443'],
      headerPrefix: 'X-Snowth',
      cacert: '/etc/tsnode/prod-ca.pem',
      cert: '~/.tsnode/me.pem',
      key: '~/.tsnode/me.key',
      headers: [{ name: 'Authorization', template: 'Bearer ${PROD_TOKEN}', line: 10 }],
      smallestSpan: 60,
      nntRollups: [60, 300, 1800, 10800],
      histogramRollups: [60, 300, 1800, 10800],
    });
    expect(prod.lines.cacert).toBe(6);
    expect(c.profiles.get('lab')).toMatchObject({ nodesFile: './tsnode-cluster/nodes.txt', headers: [] });
  });

  it('an empty file, a comment-only file and empty profiles are fine', () => {
    expect(parse('').profiles.size).toBe(0);
    expect(parse('# nothing yet\n').profiles.size).toBe(0);
    expect(parse('profiles:\n').profiles.size).toBe(0);
    expect(parse('profiles:\n  bare:\n').profiles.get('bare')).toMatchObject({ name: 'bare', headers: [] });
  });

  it('accepts comma strings for nodes and spans, span units, and anchors', () => {
    const c = parse(
      'profiles:\n  a:\n    nodes: db1, db2:9000\n    nnt_rollups: "1m,5m"\n    smallest_span: 1m\n    headers: &h {X-Tenant: acme}\n  b:\n    seed: db1\n    headers: *h\n',
    );
    expect(c.profiles.get('a')).toMatchObject({ nodes: ['http://db1:8112', 'http://db2:9000'], nntRollups: [60, 300], smallestSpan: 60 });
    expect(c.profiles.get('b')).toMatchObject({ seed: 'http://db1:8112', headers: [{ name: 'X-Tenant', template: 'acme' }] });
  });

  it("reads write_to, tsnode write's default --to", () => {
    expect(parse('profiles:\n  a:\n    seed: db1\n    write_to: owners\n').profiles.get('a')).toMatchObject({ writeTo: 'owners' });
  });

  it("reads allow_lag with the flags' duration grammar", () => {
    expect(parse('profiles:\n  a:\n    seed: db1\n    allow_lag: 5m\n').profiles.get('a')).toMatchObject({ allowLag: 300_000 });
    expect(parse('profiles:\n  a:\n    seed: db1\n    allow_lag: 1.5h\n').profiles.get('a')).toMatchObject({ allowLag: 5_400_000 });
  });

  it('reads skip_unreachable, a YAML boolean', () => {
    expect(parse('profiles:\n  a:\n    seed: db1\n    skip_unreachable: true\n').profiles.get('a')).toMatchObject({ skipUnreachable: true });
    expect(parse('profiles:\n  a:\n    seed: db1\n    skip_unreachable: false\n').profiles.get('a')).toMatchObject({ skipUnreachable: false });
  });

  it.each([
    ['unknown top-level key', 'curent: prod\n', '~/.config/tsnode/config.yaml:1: curent: is not a config key', 'expected one of current, profiles (did you mean current?)'],
    ['unknown profile key', 'profiles:\n  prod:\n    node: [db1]\n', ':3: profiles.prod.node: is not a profile key', '(did you mean nodes or nodes_file?)'],
    ['bad span', 'profiles:\n  prod:\n    smallest_span: sixty\n', ':3: profiles.prod.smallest_span: "sixty" is not a span', 'expected whole seconds'],
    ['bad span in a list', 'profiles:\n  prod:\n    nnt_rollups:\n      - 60\n      - 0\n', ':5: profiles.prod.nnt_rollups: "0" is not a span', 'expected whole seconds'],
    [
      'bad node',
      'profiles:\n  p:\n    nodes:\n      - db1\n      - ftp://db2\n',
      ':5: profiles.p.nodes[1]: "ftp://db2": only http and https nodes are supported',
      'expected http(s)://host:port',
    ],
    ['bad write_to', 'profiles:\n  p:\n    write_to: everywhere\n', ':3: profiles.p.write_to: "everywhere" is not a write target', 'expected one of primary, owners, any, all'],
    ['bad allow_lag', 'profiles:\n  p:\n    allow_lag: soon\n', ':3: profiles.p.allow_lag: "soon" is not a duration', 'expected a number and a unit: 500ms, 2s, 30m, 6h, 1d, 1w'],
    [
      'allow_lag without a unit',
      'profiles:\n  p:\n    allow_lag: 30\n',
      ':3: profiles.p.allow_lag: "30" is not a duration (a bare number has no unit: 30s or 30ms?)',
      'expected a number',
    ],
    ['skip_unreachable not a boolean', 'profiles:\n  p:\n    skip_unreachable: "yes"\n', ':3: profiles.p.skip_unreachable: "yes" is not true or false', 'expected true or false'],
    ['allow_lag of zero', 'profiles:\n  p:\n    allow_lag: 0s\n', ':3: profiles.p.allow_lag: "0s" must be longer than zero', 'expected a number'],
    ['allow_lag as a list', 'profiles:\n  p:\n    allow_lag: [5m]\n', ':3: profiles.p.allow_lag: a list is not a duration', 'expected a number'],
    ['bad prefix', 'profiles:\n  p:\n    header_prefix: X-Foo\n', ':3: profiles.p.header_prefix: "X-Foo" is not a header prefix', 'expected one of X-Service, X-Snowth'],
    ['two node sources', 'profiles:\n  p:\n    nodes: [db1]\n    seed: db2\n', ':4: profiles.p.seed: is given beside nodes', 'expected one of nodes, nodes_file, seed per profile'],
    ['cert without key', 'profiles:\n  p:\n    cert: a.pem\n', ':3: profiles.p.cert: is given without key', 'expected both cert and key'],
    [
      'bad ${',
      'profiles:\n  p:\n    headers:\n      Authorization: "Bearer ${1TOKEN}"\n',
      ':4: profiles.p.headers.Authorization: has a "${" that is not a ${NAME} reference',
      'expected ${NAME} references',
    ],
    ['bad header name', 'profiles:\n  p:\n    headers:\n      "X Bad": v\n', ':4: profiles.p.headers.X Bad: "X Bad" is not a valid header name', 'expected a valid header name'],
    [
      'managed header',
      'profiles:\n  p:\n    headers:\n      Content-Length: "5"\n',
      ':4: profiles.p.headers.Content-Length: "Content-Length" is managed by the HTTP layer',
      'expected a valid header name',
    ],
    ['header twice', 'profiles:\n  p:\n    headers:\n      A: x\n      a: y\n', ':5: profiles.p.headers.a: is given twice', 'expected each header once'],
    ['bad profile name', 'profiles:\n  "my prod":\n    nodes: [db1]\n', ':2: profiles.my prod: is not a valid profile name', 'expected letters, digits'],
    ['profiles not a map', 'profiles: [a, b]\n', ':1: profiles: a list is not a mapping', 'expected a mapping of profile names'],
    ['top level not a map', '- a\n', ':1: (top level): is not a mapping', 'expected a mapping with the keys current and profiles'],
    ['duplicate key', 'profiles:\n  p:\n    seed: db1\n  p:\n    seed: db2\n', ':4: (yaml): Map keys must be unique', 'expected valid YAML'],
    ['broken yaml', 'profiles:\n  p: [db1\n', '(yaml):', 'expected valid YAML'],
    ['two documents', 'current: a\n---\ncurrent: b\n', '(yaml): Source contains multiple documents', 'expected valid YAML'],
    ['current not a name', 'current: [a]\n', ':1: current: a list is not a profile name', 'expected the name of a profile'],
  ])('refuses %s, naming file, line, key and what was expected', (_what, text, message, hint) => {
    const e = configError(text);
    expect(e.message).toContain(message);
    expect(e.message.startsWith('~/.config/tsnode/config.yaml')).toBe(true);
    expect(e.hint).toContain(hint);
  });

  it('never echoes a header value in an error (it may be a secret)', () => {
    const e = configError('profiles:\n  p:\n    headers:\n      Authorization: "Bearer s3cr3t\\nX-Injected: 1"\n');
    expect(e.message).toMatch(/line break/);
    expect(`${e.message} ${e.hint}`).not.toContain('s3cr3t');
  });
});

describe('${VAR} and literal secrets', () => {
  it('expands references from the environment, refusing unset or empty ones', () => {
    expect(expandTemplate('Bearer ${T}', { T: 'abc' })).toEqual({ ok: true, value: 'Bearer abc' });
    expect(expandTemplate('${U}:${P}', { U: 'u', P: 'p' })).toEqual({ ok: true, value: 'u:p' });
    expect(expandTemplate('Bearer ${T}', {})).toEqual({ ok: false, missing: 'T' });
    expect(expandTemplate('Bearer ${T}', { T: '' })).toEqual({ ok: false, missing: 'T' });
    expect(expandTemplate('plain $HOME text', {})).toEqual({ ok: true, value: 'plain $HOME text' });
    expect(templateProblem('${T')).toBeDefined();
    expect(templateProblem('a ${T} b')).toBeUndefined();
  });

  it('a value made only of references (and an auth scheme) is no literal secret; anything else is', () => {
    expect(hasLiteralSecret('Bearer ${PROD_TOKEN}')).toBe(false);
    expect(hasLiteralSecret('${TOKEN}')).toBe(false);
    expect(hasLiteralSecret('${U}:${P}')).toBe(false);
    expect(hasLiteralSecret('Bearer abc123')).toBe(true);
    expect(hasLiteralSecret('acme')).toBe(true);
    expect(hasLiteralSecret('key-${X}')).toBe(true);
  });

  it('redacts literal parts and shows references as written', () => {
    expect(redactTemplate('Bearer ${PROD_TOKEN}')).toBe('Bearer ${PROD_TOKEN}');
    expect(redactTemplate('Bearer abc123')).toBe('Bearer [redacted]');
    expect(redactTemplate('s3cr3t')).toBe('[redacted]');
    expect(redactTemplate('pre-${X}-post')).toBe('[redacted]${X}[redacted]');
  });
});

describe('loading from disk', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a missing file is an empty config; the environment names the file', () => {
    const loaded = loadConfig({ env: { XDG_CONFIG_HOME: dir }, cwd: dir, home: dir });
    expect(loaded.config.exists).toBe(false);
    expect(loaded.config.path).toBe(join(dir, 'tsnode', 'config.yaml'));
    expect(loaded.config.shown).toBe('~/tsnode/config.yaml');
  });

  it('warns about a file others can read that holds a literal secret, not about ${VAR}s', () => {
    const path = join(dir, 'open.yaml');
    writeFileSync(path, 'profiles:\n  p:\n    headers:\n      Authorization: Bearer s3cr3t\n      X-Other: "${TOK}"\n');
    chmodSync(path, 0o644);
    const loaded = loadConfigFile(path, dir);
    expect(loaded.warnings).toHaveLength(1);
    expect(loaded.warnings[0]).toContain('readable by other users (mode 644)');
    expect(loaded.warnings[0]).toContain('profiles.p.headers.Authorization (line 4)');
    expect(loaded.warnings[0]).not.toContain('X-Other');
    expect(loaded.warnings[0]).not.toContain('s3cr3t');
    chmodSync(path, 0o600);
    expect(loadConfigFile(path, dir).warnings).toEqual([]);
    const refsOnly = parseConfig('profiles:\n  p:\n    headers:\n      Authorization: "Bearer ${T}"\n', path);
    expect(permissionWarnings(refsOnly, 0o644)).toEqual([]);
  });

  it('an unreadable file is an error naming it', () => {
    const sub = join(dir, 'isdir.yaml');
    mkdirSync(sub);
    expect(() => loadConfigFile(sub, dir)).toThrow(/isdir\.yaml: \(file\): cannot be read: is a directory/);
  });
});

describe('writing the config file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-config-w-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const COMMENTED = `# my clusters
current: lab   # the default

profiles:
  # production: careful
  prod:
    nodes: [https://db1.example.net:8443]   # one for now
    headers:
      Authorization: "Bearer \${PROD_TOKEN}"
  lab:
    nodes_file: ./tsnode-cluster/nodes.txt  # from cluster up
`;

  it('set keeps the comments and the other settings, and the result parses back', () => {
    const c = parse(COMMENTED);
    const text = setProfileText(c, 'prod', { headerPrefix: 'X-Snowth', nntRollups: [60, 300], headers: [['authorization', 'Bearer ${NEW}']] });
    expect(text).toContain('# my clusters');
    expect(text).toContain('# the default');
    expect(text).toContain('# production: careful');
    expect(text).toContain('# one for now');
    expect(text).toContain('# from cluster up');
    expect(text).toContain('nnt_rollups: [60, 300]');
    const back = parse(text).profiles.get('prod')!;
    expect(back).toMatchObject({ headerPrefix: 'X-Snowth', nntRollups: [60, 300], nodes: ['https://db1.example.net:8443'] });
    // the header was replaced whatever its case, not added twice
    expect(back.headers).toEqual([expect.objectContaining({ name: 'authorization', template: 'Bearer ${NEW}' })]);
  });

  it('a new node source replaces the old one; --unset removes keys and single headers', () => {
    const c = parse(COMMENTED);
    const text = setProfileText(c, 'prod', { seed: 'https://db1.example.net:8443', unset: ['headers.Authorization'] });
    const back = parse(text).profiles.get('prod')!;
    expect(back.nodes).toBeUndefined();
    expect(back.seed).toBe('https://db1.example.net:8443');
    expect(back.headers).toEqual([]);
    expect(text).not.toContain('headers:');
    expect(() => setProfileText(c, 'prod', { unset: ['colour'] })).toThrow(/--unset: "colour" is not a profile key/);
    expect(() => setProfileText(c, 'prod', { nodes: ['http://a:1'], seed: 'http://b:1' })).toThrow(/both name the nodes/);
  });

  it("creates the file's structure from nothing; refuses names a shell cannot complete", () => {
    const text = setProfileText(parse(''), 'lab', { nodesFile: '/tmp/nodes.txt' });
    expect(text).toBe('profiles:\n  lab:\n    nodes_file: /tmp/nodes.txt\n');
    expect(() => setProfileText(parse(''), 'my lab', { seed: 'http://a:1' })).toThrow(/profile name "my lab" is not valid/);
  });

  it('never writes a file that would not load (the edit is validated first)', () => {
    expect(() => setProfileText(parse('profiles:\n  p:\n    cert: a.pem\n    key: b.pem\n'), 'p', { unset: ['key'] })).toThrow(/cert: is given without key/);
  });

  it('use puts current first without losing the opening comment; remove drops current when it named the profile', () => {
    const noCurrent = parse('# opening words\nprofiles:\n  a:\n    seed: db1\n');
    const used = useProfileText(noCurrent, 'a');
    expect(used).toBe('# opening words\ncurrent: a\nprofiles:\n  a:\n    seed: db1\n');
    expect(() => useProfileText(noCurrent, 'b')).toThrow(/no profile named "b"/);
    const { text, wasCurrent } = removeProfileText(parse(COMMENTED), 'lab');
    expect(wasCurrent).toBe(true);
    expect(text).toContain('# my clusters');
    expect(parse(text).current).toBeUndefined();
    expect([...parse(text).profiles.keys()]).toEqual(['prod']);
  });

  it('writes atomically with mode 0600, through a symlink, creating the directory', () => {
    const path = join(dir, 'nested', 'tsnode', 'config.yaml');
    writeConfigFile(path, 'profiles: {}\n');
    expect(readFileSync(path, 'utf8')).toBe('profiles: {}\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    chmodSync(path, 0o644);
    writeConfigFile(path, 'current: x\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const real = join(dir, 'real.yaml');
    writeFileSync(real, 'old\n');
    const link = join(dir, 'link.yaml');
    symlinkSync(real, link);
    writeConfigFile(link, 'new: 1\n');
    expect(readFileSync(real, 'utf8')).toBe('new: 1\n');
    expect(() => writeConfigFile(join(dir, 'real.yaml', 'x.yaml'), 'x')).toThrow(/cannot write/);
  });
});

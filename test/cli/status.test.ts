/**
 * `tsnode status` on profiles, end to end: which nodes it asks and which headers reach them, from
 * the flags, the environment and the config file (flag > environment > profile > default), with
 * nodes that record every request. Plus its views (one line per node, --per-type) and -q.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startRecordingNode, type RecordingNode } from '../helpers/recording-node.js';

const IDLE = JSON.stringify({ nnt: { running: 'false' }, text: { running: 'false' }, histogram: { running: 'false' } });
const TOKEN = 'tok-3f9a-never-printed';

const root = mkdtempSync(join(tmpdir(), 'tsnode-status-'));
const home = join(root, 'home');
const configFile = join(home, '.config', 'tsnode', 'config.yaml');
/** One node per way of naming it: the current profile, --profile prod, TSNODE_NODES, --nodes. */
let current: RecordingNode;
let prod: RecordingNode;
let fromEnv: RecordingNode;
let fromFlag: RecordingNode;
const all = (): RecordingNode[] => [current, prod, fromEnv, fromFlag];

beforeAll(async () => {
  [current, prod, fromEnv, fromFlag] = (await Promise.all([0, 1, 2, 3].map(() => startRecordingNode({ body: IDLE })))) as [
    RecordingNode,
    RecordingNode,
    RecordingNode,
    RecordingNode,
  ];
  mkdirSync(join(home, '.config', 'tsnode'), { recursive: true });
  writeFileSync(
    configFile,
    [
      'current: cur',
      'profiles:',
      '  cur:',
      `    nodes: [${current.url}]`,
      '    headers:',
      '      X-Team: current-team',
      '  prod:',
      `    nodes: [${prod.url}]`,
      '    headers:',
      '      Authorization: "Bearer ${PROD_TOKEN}"',
      '      X-Team: prod-team',
      '  empty:',
      '    header_prefix: X-Snowth',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
});
beforeEach(() => {
  for (const n of all()) n.requests.length = 0;
});
afterAll(async () => {
  await Promise.all(all().map((n) => n.close()));
  rmSync(root, { recursive: true, force: true });
});

/** Runs status as the user whose config is above, with the token in the environment. */
const status = (args: string[], env: Record<string, string | undefined> = {}) =>
  runCli(['status', '--retries', '0', ...args], { env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), PROD_TOKEN: TOKEN, ...env } });

type Asked = Record<string, Array<Record<string, unknown>>>;

/** Which of the four nodes were asked, for what (status reads /sweep_delete and /state, for the lag), and the headers each got. */
function asked(): Record<string, Asked> {
  const names = ['current', 'prod', 'env', 'flag'] as const;
  const out: Record<string, Asked> = {};
  all().forEach((n, i) => {
    if (!n.requests.length) return;
    const byPath: Asked = {};
    for (const r of n.requests) (byPath[`${r.method} ${r.rawUrl}`] ??= []).push({ authorization: r.headers.authorization, team: r.headers['x-team'] });
    out[names[i]!] = byPath;
  });
  return out;
}

/** One run per item: each asked for its status and its state with these headers. */
const each = (...headers: Array<Record<string, unknown>>): Asked => ({ 'GET /sweep_delete': headers, 'GET /state': headers });

/** stderr without the timestamps of non-interactive logs. */
const lines = (stderr: string): string[] =>
  stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(/^\S+Z /, ''));

describe('status: where the nodes come from (flag > environment > profile > default)', () => {
  it('nothing given: the current profile, with its headers', async () => {
    const r = await status([]);
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stderr)).toEqual(['nodes: profile cur, 1 node']);
    expect(asked()).toEqual({ current: each({ team: 'current-team' }) });
  });

  it('TSNODE_NODES beats the current profile, which then lends it nothing (no headers)', async () => {
    const r = await status([], { TSNODE_NODES: fromEnv.url });
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stderr)).toEqual(['nodes: TSNODE_NODES, 1 node']);
    expect(asked()).toEqual({ env: each({}) });
  });

  it('--profile beats TSNODE_NODES, and its ${VAR} header reaches the node expanded', async () => {
    const r = await status(['--profile', 'prod'], { TSNODE_NODES: fromEnv.url });
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stderr)).toEqual(['nodes: profile prod, 1 node']);
    expect(asked()).toEqual({ prod: each({ authorization: `Bearer ${TOKEN}`, team: 'prod-team' }) });
  });

  it('--nodes beats --profile; the profile named on the command line still gives the settings', async () => {
    const r = await status(['--nodes', fromFlag.url], { TSNODE_PROFILE: 'cur', TSNODE_NODES: fromEnv.url });
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stderr)).toEqual(['nodes: --nodes, 1 node']);
    expect(asked()).toEqual({ flag: each({ team: 'current-team' }) });
    const p = await status(['--profile', 'prod', '--nodes', fromFlag.url]);
    expect(p.code).toBe(0);
    expect(asked()).toEqual({ flag: each({ team: 'current-team' }, { authorization: `Bearer ${TOKEN}`, team: 'prod-team' }) });
  });

  it('TSNODE_NODES beats TSNODE_PROFILE for the nodes; TSNODE_PROFILE gives the settings', async () => {
    const r = await status([], { TSNODE_PROFILE: 'prod', TSNODE_NODES: fromEnv.url });
    expect(r.code, r.stderr).toBe(0);
    expect(asked()).toEqual({ env: each({ authorization: `Bearer ${TOKEN}`, team: 'prod-team' }) });
    // a profile without nodes: the nodes come from elsewhere, its settings still apply
    const e = await status([], { TSNODE_PROFILE: 'empty', TSNODE_NODES: fromEnv.url });
    expect(e.code).toBe(0);
  });

  it('headers: --header over TSNODE_HEADERS over the profile, name by name', async () => {
    const env = await status(['--profile', 'prod'], { TSNODE_HEADERS: 'X-Team: env-team' });
    expect(env.code).toBe(0);
    const flag = await status(['--profile', 'prod', '--header', 'X-Team: flag-team'], { TSNODE_HEADERS: 'X-Team: env-team' });
    expect(flag.code).toBe(0);
    expect(asked()).toEqual({
      prod: each({ authorization: `Bearer ${TOKEN}`, team: 'env-team' }, { authorization: `Bearer ${TOKEN}`, team: 'flag-team' }),
    });
  });

  it('the expanded secret is never printed, not even with --verbose and -o json', async () => {
    const r = await status(['--profile', 'prod', '--verbose', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/GET .*\/sweep_delete -> 200/); // the request log is there ...
    expect(`${r.stdout}${r.stderr}`).not.toContain(TOKEN); // ... without the token
  });

  it('an unset ${VAR}: exit 2 naming the file, line and variable; nothing sent', async () => {
    const r = await status(['--profile', 'prod'], { PROD_TOKEN: undefined });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)[0]).toBe('error: profiles.prod.headers.Authorization (~/.config/tsnode/config.yaml:10) uses ${PROD_TOKEN}, which is not set');
    expect(asked()).toEqual({});
  });

  it("a profile's TLS file that is not there: exit 2 naming the config key and the file; nothing sent", async () => {
    const config = join(root, 'tls.yaml');
    writeFileSync(config, `profiles:\n  tls:\n    nodes: [${prod.url}]\n    cacert: ./missing-ca.pem\n`);
    const r = await status(['--profile', 'tls'], { TSNODE_CONFIG: config });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)[0]).toBe(`error: profiles.tls.cacert (${config}:4): cannot read ${join(root, 'missing-ca.pem')}: no such file`);
    expect(asked()).toEqual({});
  });

  it('an unknown profile: exit 2 listing the profiles there are; nothing sent', async () => {
    const r = await status([], { TSNODE_PROFILE: 'prdo' });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual([
      'error: TSNODE_PROFILE: no profile named "prdo" in ~/.config/tsnode/config.yaml',
      '  hint: did you mean prod? profiles in ~/.config/tsnode/config.yaml: cur, prod, empty',
    ]);
    expect(asked()).toEqual({});
  });
});

describe('status output', () => {
  let running: RecordingNode;
  beforeAll(async () => {
    running = await startRecordingNode({
      body: JSON.stringify({
        nnt: { running: 'true', timestamp: '1787529600', rollups: '60,300', current_uuid: '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f' },
        text: { running: 'false' },
        histogram: { running: 'false', last_result: 'failed', last_error: 'disk full', last_timestamp: '1787443200', last_rollups: 'all', last_finished: '1787500000.250' },
      }),
    });
  });
  afterAll(() => running.close());

  it('one row per node by default, every type in it; --per-type gives a row per type', async () => {
    const nodes = ['--nodes', `${running.url},${current.url}`];
    const one = await status(nodes);
    expect(one.code, one.stderr).toBe(0);
    const rows = one.stdout.split('\n').filter((l) => l.startsWith('│ http'));
    expect(rows).toHaveLength(2);
    expect(one.stdout).toMatch(/│ node +│ state +│ lag +│ nnt +│ text +│ histogram +│ note +│/);
    expect(rows[0]).toMatch(
      new RegExp(
        `^│ ${running.url} │ running │ - +│ running 60,300 │ idle │ idle, failed │ before 2026-08-24T00:00:00Z \\(1787529600\\); nnt at 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f +│$`,
      ),
    );
    expect(rows[1]).toMatch(new RegExp(`^│ ${current.url} +│ idle +│ - +│ idle +│ idle │ idle +│ +│$`));
    const per = await status([...nodes, '--per-type']);
    expect(per.code).toBe(0);
    expect(per.stdout.split('\n').filter((l) => l.startsWith('│ http'))).toHaveLength(6);
    expect(per.stdout).toMatch(/│ histogram │ no +│ +│ +│ +│ failed: before 2026-08-23T00:00:00Z \(1787443200\) spans all at 2026-08-23T15:46:40\.250Z - disk full │/);
  });

  it('-o json: snake_case, booleans, times as epoch seconds and ISO, spans as numbers (null: all)', async () => {
    const r = await status(['--nodes', running.url, '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      nodes: [
        {
          node: running.url,
          ok: true,
          state: 'running',
          lag_seconds: null, // its /state is not a node state: lag unknown, not 0
          status: {
            nnt: { running: true, delete_time: 1787529600, delete_time_iso: '2026-08-24T00:00:00Z', rollups: [60, 300], current_uuid: '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f' },
            text: { running: false },
            histogram: {
              running: false,
              last: {
                result: 'failed',
                delete_time: 1787443200,
                delete_time_iso: '2026-08-23T00:00:00Z',
                rollups: null,
                finished: 1787500000.25,
                finished_iso: '2026-08-23T15:46:40.250Z',
                error: 'disk full',
              },
            },
          },
        },
      ],
    });
  });

  it('-q: the results and nothing else; warnings stay', async () => {
    const r = await status(['-q', '--nodes', `${current.url},${current.url}`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/│ node +│ state/);
    expect(lines(r.stderr)).toEqual([`warning: --nodes item 2: ${current.url} is listed twice (first at item 1); using it once`]);
    const quiet = await status(['--quiet', '--nodes', current.url, '-o', 'json']);
    expect(quiet.stderr).toBe('');
    expect(JSON.parse(quiet.stdout).nodes).toHaveLength(1);
  });
});

/**
 * Where `tsnode sweep` and `tsnode sweep cancel` take their nodes from (issue 16): never a silent
 * fallback, profiles with their header prefix, headers and declared spans, and the catch-up and
 * journal naming the profile without printing a header value. The nodes here are small fake
 * production nodes (no /state, no sweep record) that record every request, so "nothing was sent"
 * is checked, not assumed.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startRecordingNode, type Recorded, type RecordingNode, type Reply } from '../helpers/recording-node.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-sweep-target-'));
const nodes: RecordingNode[] = [];
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.close()));
  rmSync(root, { recursive: true, force: true });
});

const IDLE = JSON.stringify({ nnt: { running: 'false' }, text: { running: 'false' }, histogram: { running: 'false' } });
const RUNNING = JSON.stringify({ nnt: { running: 'true', timestamp: '1000', rollups: 'all', current_uuid: 'x' }, text: { running: 'false' }, histogram: { running: 'false' } });
const NOT_FOUND: Reply = { status: 404, body: JSON.stringify({ error: 'not found', code: 'not_found' }) };

/** A node like the production store: idle status, DELETE answered [] (or refused), no /state, no record of its sweeps. */
async function productionNode(opts: { refuseDelete?: boolean; running?: boolean } = {}): Promise<RecordingNode> {
  const n = await startRecordingNode((req: Recorded): Reply => {
    if (req.method === 'GET' && req.rawUrl === '/sweep_delete') return { body: opts.running ? RUNNING : IDLE };
    if (req.method === 'GET' && req.rawUrl === '/sweep_delete/cancel') return { body: opts.running ? RUNNING.replace('"x"}', '"x","cancelling":"true"}') : IDLE };
    if (req.method === 'DELETE' && req.rawUrl === '/sweep_delete')
      return opts.refuseDelete ? { status: 400, body: JSON.stringify({ error: 'disk is read-only', code: 'store_error' }) } : { body: '[]' };
    return NOT_FOUND;
  });
  nodes.push(n);
  return n;
}

let seq = 0;
/** A user with a config dir of their own (and nothing in it unless `config` is given), working in an empty directory. */
function user(config?: string): { env: Record<string, string | undefined>; cwd: string; journal: string } {
  const home = join(root, `u${seq++}`);
  const cwd = join(home, 'work');
  mkdirSync(cwd, { recursive: true });
  const env: Record<string, string | undefined> = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_STATE_HOME: join(home, '.state'), PROD_TOKEN: 'never-printed-token' };
  if (config !== undefined) {
    const file = join(home, 'config.yaml');
    writeFileSync(file, config, { mode: 0o600 });
    env.TSNODE_CONFIG = file;
  }
  return { env, cwd, journal: join(home, '.state', 'tsnode', 'sweeps.jsonl') };
}

const BEFORE = String(Math.floor(Date.now() / 1000) - 86_400);
const lines = (stderr: string): string[] =>
  stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(/^\S+Z /, ''));

describe('no node list from a flag, the environment or a profile', () => {
  let local: RecordingNode;
  beforeEach(async () => {
    local = await productionNode();
  });

  it('a bare tsnode sweep --before 1d --yes exits 2 and sends nothing: ./nodes.txt and the default node never apply', async () => {
    const u = user();
    writeFileSync(join(u.cwd, 'nodes.txt'), `${local.url}\n`);
    for (const argv of [
      ['sweep', '--before', '1d', '--yes'],
      ['sweep', '--before', '1d', '--dry-run'],
      ['sweep', 'cancel', '--yes'],
    ]) {
      const r = await runCli(argv, { env: u.env, cwd: u.cwd });
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      const command = argv[1] === 'cancel' ? 'tsnode sweep cancel' : 'tsnode sweep';
      expect(lines(r.stderr)).toEqual([
        `error: ${command} acts on every node it is given, and was given none: no --nodes, --seed, --profile, TSNODE_NODES or current profile names them (nothing was sent)`,
        '  hint: pass --nodes <file|list> (./nodes.txt exists: pass --nodes nodes.txt to use it), --seed <url>, or --profile <name> (create one with: tsnode profile set <name> --nodes <file|list>)',
      ]);
    }
    // Without ./nodes.txt the same: the default node (127.0.0.1:8112) is not a target either.
    const bare = await runCli(['sweep', '--before', '1d', '--yes'], { env: u.env, cwd: join(u.cwd, '..') });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/was given none/);
    expect(bare.stderr).not.toMatch(/8112/);
    expect(local.requests).toEqual([]);
    expect(() => readFileSync(u.journal)).toThrow();
  });

  it('a profile that is not the current one names nothing', async () => {
    const u = user(`profiles:\n  lab:\n    nodes: [${local.url}]\n`);
    const r = await runCli(['sweep', '--before', '1d', '--yes'], { env: u.env, cwd: u.cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/was given none/);
    expect(local.requests).toEqual([]);
  });
});

describe('nothing is sent before the command has checked its own flags', () => {
  it('a bad --before with --seed sends nothing, not even the discovery', async () => {
    const seed = await productionNode();
    const u = user();
    for (const argv of [
      ['sweep', '--before', 'junk', '--seed', seed.url, '--yes'],
      ['sweep', '--before', '2026-02-31', '--seed', seed.url, '--yes'],
      ['sweep', '--before', '1d', '--types', 'text', '--nnt-rollups', '60', '--seed', seed.url, '--yes'],
      ['sweep', '--before', '1d', '--nnt-rollups', '60,', '--seed', seed.url, '--yes'],
      ['sweep', 'cancel', '--before', '1d', '--seed', seed.url, '--yes'],
      ['sweep', 'cancel', '--types', 'nnt', '--nodes', seed.url, '--yes'],
    ]) {
      const r = await runCli(argv, { env: u.env, cwd: u.cwd });
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(lines(r.stderr)[0]).toMatch(/^error: /);
    }
    expect(seed.requests).toEqual([]);
  });

  it('without --yes off a terminal: refused before any request, naming where the nodes would come from', async () => {
    const n = await productionNode();
    const u = user(`current: prod\nprofiles:\n  prod:\n    nodes: [${n.url}]\n`);
    const r = await runCli(['sweep', '--before', '1d'], { env: u.env, cwd: u.cwd });
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual([
      'error: not on a terminal: pass --yes to confirm the sweep (nothing was sent)',
      expect.stringMatching(/^ {2}hint: it would delete data before .* \(nnt all spans\) on the nodes of profile prod$/),
    ]);
    expect(n.requests).toEqual([]);
  });
});

describe('a profile as the target', () => {
  const prodConfig = (urls: string[], extra = ''): string =>
    `current: prod\nprofiles:\n  prod:\n    nodes: [${urls.join(', ')}]\n    header_prefix: X-Snowth\n    headers:\n      Authorization: "Bearer \${PROD_TOKEN}"\n${extra}`;

  it('its nodes, header prefix and headers are used; the result, journal, catch-up and history name the profile, never a header value', async () => {
    const good = await productionNode();
    const broken = await productionNode({ refuseDelete: true });
    const u = user(prodConfig([good.url, broken.url]));
    const journal = join(u.cwd, 'j.jsonl');
    const r = await runCli(['--profile', 'prod', 'sweep', '--before', BEFORE, '--yes', '-o', 'json', '--poll-interval', '100ms', '--retries', '0', '--journal', 'j.jsonl'], {
      env: u.env,
      cwd: u.cwd,
    });
    expect(r.code).toBe(3);
    expect(lines(r.stderr)).toContain('nodes: profile prod, 2 nodes');
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({
      before: Number(BEFORE),
      types: ['nnt'],
      nnt_rollups: null,
      histogram_rollups: null,
      header_prefix: 'X-Snowth',
      node_source: 'profile prod',
      profile: 'prod',
      exit_code: 3,
    });
    expect(doc.nodes.map((n: { node: string; state: string }) => [n.node, n.state])).toEqual([
      [good.url, 'done'],
      [broken.url, 'failed'],
    ]);
    expect(doc.nodes[1].error).toEqual({ code: 'failed', message: expect.stringMatching(/disk is read-only/) });
    const catchUp = `tsnode sweep --before ${BEFORE} --types nnt --header-prefix X-Snowth --nodes ${broken.url} --profile prod --journal ${journal} --yes`;
    expect(doc.catch_up).toEqual({ nodes: [broken.url], command: catchUp, add_back: [] });
    expect(r.stderr).toContain(`to catch up (1 node(s) not done): ${catchUp}`);

    // What went on the wire: the profile's prefix and header.
    const del = good.requests.find((q) => q.method === 'DELETE')!;
    expect(del.headers['x-snowth-delete-time']).toBe(BEFORE);
    expect(del.headers['x-service-delete-time']).toBeUndefined();
    expect(del.headers.authorization).toBe('Bearer never-printed-token');

    // The journal repeats where the nodes came from; the token is nowhere.
    const entries = readFileSync(journal, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(entries.map((e) => [e.kind, e.nodeSource, e.described, e.profile])).toEqual([
      ['sweep.start', 'profile prod', 'nodes: profile prod, 2 nodes', 'prod'],
      // (the receipt: the inventories before and after, between the two)
      ['receipt', undefined, undefined, undefined],
      ['sweep.end', 'profile prod', 'nodes: profile prod, 2 nodes', 'prod'],
    ]);
    expect(readFileSync(journal, 'utf8')).not.toContain('never-printed-token');
    const history = await runCli(['history', '--journal', 'j.jsonl', '-o', 'json'], { env: u.env, cwd: u.cwd });
    expect(history.code).toBe(0);
    const run = JSON.parse(history.stdout).runs[0];
    expect(run).toMatchObject({
      kind: 'sweep',
      node_source: 'profile prod',
      profile: 'prod',
      header_prefix: 'X-Snowth',
      outcome_recorded: true,
      exit_code: 3,
      pending: [broken.url],
    });
    expect(run.catch_up.command).toBe(catchUp);
    for (const text of [r.stdout, r.stderr, readFileSync(journal, 'utf8'), history.stdout]) expect(text).not.toContain('never-printed-token');
  });

  it('--header-prefix on the command line beats the profile', async () => {
    const n = await productionNode();
    const u = user(prodConfig([n.url]));
    const r = await runCli(['sweep', '--before', BEFORE, '--dry-run', '--header-prefix', 'x-service'], { env: u.env, cwd: u.cwd });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`DELETE ${n.url}/sweep_delete\n  X-Service-Delete-Time: ${BEFORE}`);
    const profile = await runCli(['sweep', '--before', BEFORE, '--dry-run', '-o', 'json'], { env: u.env, cwd: u.cwd });
    expect(JSON.parse(profile.stdout)).toMatchObject({
      dry_run: true,
      header_prefix: 'X-Snowth',
      node_source: 'profile prod',
      requests: [{ node: n.url, method: 'DELETE', headers: { 'X-Snowth-Delete-Time': BEFORE } }],
    });
    expect(n.requests).toEqual([]);
  });

  it("spans are checked against the profile's nnt_rollups for nodes that do not report theirs", async () => {
    const n = await productionNode();
    const u = user(prodConfig([n.url], '    nnt_rollups: [60, 300]\n'));
    const refused = await runCli(['sweep', '--before', BEFORE, '--nnt-rollups', '120', '--yes', '--retries', '0'], { env: u.env, cwd: u.cwd });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /error: nnt span 120 is not among the nnt spans profiles\.prod\.nnt_rollups \(.*config\.yaml:\d+\) declares \(60, 300\), which stand for the 1 node that do not report theirs/,
    );
    expect(refused.stderr).toMatch(/refusing to sweep: nothing was sent/);
    expect(n.requests.filter((q) => q.method === 'DELETE')).toEqual([]);

    const ok = await runCli(['sweep', '--before', BEFORE, '--nnt-rollups', '300', '--yes', '--retries', '0', '--poll-interval', '100ms'], { env: u.env, cwd: u.cwd });
    expect(ok.code).toBe(0);
    expect(ok.stderr).toMatch(/nnt spans checked against profiles\.prod\.nnt_rollups .* for 1 node that do not report theirs/);
    expect(n.requests.filter((q) => q.method === 'DELETE').map((q) => q.headers['x-snowth-nnt-delete-rollups'])).toEqual(['300']);
  });
});

describe('tsnode sweep cancel', () => {
  it('--dry-run lists the requests and sends nothing; -o csv prints one row per node', async () => {
    const n = await productionNode({ running: true });
    const u = user(`current: prod\nprofiles:\n  prod:\n    nodes: [${n.url}]\n`);
    const dry = await runCli(['sweep', 'cancel', '--dry-run'], { env: u.env, cwd: u.cwd });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(`GET ${n.url}/sweep_delete/cancel\n`);
    expect(lines(dry.stderr)).toEqual(['nodes: profile prod, 1 node', 'dry run: would cancel the running sweeps on 1 node (nodes: profile prod, 1 node); nothing was sent']);
    expect(n.requests).toEqual([]);

    const csv = await runCli(['sweep', 'cancel', '--yes', '-o', 'csv', '--retries', '0'], { env: u.env, cwd: u.cwd });
    expect(csv.code).toBe(0);
    expect(csv.stdout).toBe(`node,state,cancelled,error_code,error\r\n${n.url},cancelling,nnt,,\r\n`);
    expect(n.requests.filter((q) => q.rawUrl === '/sweep_delete/cancel')).toHaveLength(1);
    const entry = JSON.parse(readFileSync(u.journal, 'utf8').trim());
    expect(entry).toMatchObject({ kind: 'sweep.cancel', nodeSource: 'profile prod', described: 'nodes: profile prod, 1 node', profile: 'prod' });
  });
});

describe('-o csv', () => {
  it('sweep: one row per node with its state, reason and the request; history: one row per run', async () => {
    const n = await productionNode();
    const u = user();
    const r = await runCli(
      ['sweep', '--before', BEFORE, '--types', 'nnt,text', '--nnt-rollups', '60', '--nodes', n.url, '--yes', '-o', 'csv', '--poll-interval', '100ms', '--retries', '0'],
      { env: u.env, cwd: u.cwd },
    );
    expect(r.code).toBe(0);
    const rows = r.stdout.trimEnd().split('\r\n');
    expect(rows[0]).toBe('node,state,reason,error_code,error,other,elapsed_ms,before,before_iso,types,nnt_rollups,histogram_rollups');
    expect(rows[1]).toMatch(new RegExp(`^${n.url},done,"idle at the first poll[^"]+",,,,\\d+,${BEFORE},[0-9T:-]+Z,nnt text,60,$`));
    expect(rows).toHaveLength(2);

    const h = await runCli(['history', '-o', 'csv'], { env: u.env, cwd: u.cwd });
    expect(h.code).toBe(0);
    const hrows = h.stdout.trimEnd().split('\r\n');
    expect(hrows[0]).toBe('run,kind,started,finished,by,before,before_iso,types,nnt_rollups,histogram_rollups,node_source,nodes,outcome,left,catch_up,steps');
    expect(hrows[1]).toMatch(new RegExp(`^[0-9a-f]+,sweep,[0-9T:.-]+Z,[0-9T:.-]+Z,[^,]+,${BEFORE},[0-9T:-]+Z,nnt text,60,,--nodes,1,1 done,,,$`));
  });
});

describe('quiet and the profile environment', () => {
  it('-q leaves the result on stdout and nothing on stderr; history reads its journal whatever TSNODE_PROFILE says', async () => {
    const n = await productionNode();
    const u = user(`profiles:\n  prod:\n    nodes: [${n.url}]\n`);
    const r = await runCli(['sweep', '--before', BEFORE, '--nodes', n.url, '--yes', '-q', '--poll-interval', '100ms', '--retries', '0'], { env: u.env, cwd: u.cwd });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(new RegExp(`│ ${n.url}\\s+│ nnt\\s+│ done`));
    const h = await runCli(['history', '-o', 'json'], { env: { ...u.env, TSNODE_PROFILE: 'prod' }, cwd: u.cwd });
    expect(h.code, h.stderr).toBe(0);
    expect(JSON.parse(h.stdout).runs).toHaveLength(1);
  });
});

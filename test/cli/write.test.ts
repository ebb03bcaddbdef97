import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import { BIN, runCli } from '../helpers/cli.js';
import { deadAddress, startNode, startNodes, stopAllNodes } from '../helpers/nodes.js';

const ID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const dispatcher = new Agent();
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsnode-write-test-'));
});
afterAll(async () => {
  await stopAllNodes();
  await dispatcher.close();
  rmSync(dir, { recursive: true, force: true });
});

const record = (i: number, metric: string): Record<string, unknown> => ({ metric, id: ID, offset: 60 * i, count: 1, value: i });

/** Writes `n` records of `metric` (offsets 0, 60, ...) as NDJSON or a pretty JSON array. */
function recordsFile(name: string, metric: string, n: number, format: 'ndjson' | 'json', mutate?: (i: number, r: Record<string, unknown>) => Record<string, unknown>): string {
  const recs = Array.from({ length: n }, (_, i) => (mutate ? mutate(i, record(i, metric)) : record(i, metric)));
  const text = format === 'ndjson' ? recs.map((r) => JSON.stringify(r)).join('\n') + '\n' : `[\n${recs.map((r) => `  ${JSON.stringify(r)}`).join(',\n')}\n]\n`;
  const path = join(dir, name);
  writeFileSync(path, name.endsWith('.gz') ? gzipSync(text) : text);
  return path;
}

/** Offsets (seconds) of `metric` that a node holds, read back through the client. */
async function offsetsOn(url: string, metric: string, n: number): Promise<Set<number>> {
  const client = new NodeClient(url, { dispatcher });
  const res = await client.readRollup({ uuid: ID, metric, startMs: 0, endMs: n * 60_000, spanMs: 60_000, engine: 'nnt', type: 'count' });
  return new Set(res.points.filter((p) => p.value !== null).map((p) => p.timestampMs / 1000));
}

async function union(urls: string[], metric: string, n: number): Promise<Set<number>> {
  const all = new Set<number>();
  for (const u of urls) for (const o of await offsetsOn(u, metric, n)) all.add(o);
  return all;
}

const every = (n: number): Set<number> => new Set(Array.from({ length: n }, (_, i) => i * 60));

describe('tsnode write', () => {
  let one: string;
  let three: string[];
  beforeAll(async () => {
    const nodes = await startNodes(4, { memory: true });
    one = nodes[0]!.url;
    three = nodes.slice(1).map((n) => n.url);
  });

  it('writes a JSON array into one node; every record reads back', async () => {
    const f = recordsFile('arr.json', 'arr', 250, 'json');
    const r = await runCli(['write', f, '--node', one, '--batch-size', '40', '--output', 'json']);
    // Two lines, and only those: where the nodes came from; where the records go and on which span, both read from the node (plain: --to any).
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(2);
    expect(r.stderr).toMatch(new RegExp(`nodes: --node ${one}, 1 node$`, 'm'));
    expect(r.stderr).toMatch(/--to any: the node runs no topology \(GET \/state says current "-".*\); each batch goes to one node; smallest span 60s \(the nodes' base_rollup\)$/m);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ read: 250, written: 250, rejected: 0, batches: 7, retries: 0, rejects: null });
    expect(await offsetsOn(one, 'arr', 250)).toEqual(every(250));
    expect(existsSync(`${f}.tsnode-state.json`)).toBe(false);
  });

  it('writes gzip NDJSON over three nodes (--to any) and stdin, spreading batches', async () => {
    const f = recordsFile('spread.ndjson.gz', 'spread', 300, 'ndjson');
    const r = await runCli(['write', f, '--nodes', three.join(','), '--batch-size', '50']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^read 300 records from 1 input, wrote 300 in 6 batches to 3 nodes \(--to any\)\nrejected 0\n/);
    const per = await Promise.all(three.map((u) => offsetsOn(u, 'spread', 300)));
    expect(per.map((s) => s.size)).toEqual([100, 100, 100]);
    expect(await union(three, 'spread', 300)).toEqual(every(300));

    const text = readFileSync(recordsFile('stdin.json', 'stdin', 120, 'json'), 'utf8');
    const s = await runCli(['write', '-', '--node', one, '--output', 'json'], { input: text, cwd: dir });
    expect(s.code).toBe(0);
    expect(JSON.parse(s.stdout)).toMatchObject({ read: 120, written: 120, inputs: [{ file: '-', format: 'json' }] });
    expect(await offsetsOn(one, 'stdin', 120)).toEqual(every(120));
  });

  it('--to all writes every batch to every node with a per-node report', async () => {
    const f = recordsFile('all.ndjson', 'all', 90, 'ndjson');
    const r = await runCli(['write', f, '--nodes', three.join(','), '--to', 'all', '--batch-size', '30', '--output', 'json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.nodes).toEqual(
      three.map((node) => ({
        node,
        batches: 3,
        records: 90,
        primary_records: 90,
        fallback_records: 0,
        handed_on: 0,
        acknowledged: { by_count: 90, bare: 0 },
        failed_batches: 0,
        failed_records: 0,
        refused: 0,
        bytes_sent: expect.any(Number),
        misdirected: 0,
        errors: 0,
        error: null,
      })),
    );
    expect(doc).toMatchObject({ kind: 'nnt', written: 90, written_to_some: 0, acknowledged: { by_count: 270, bare: 0 } });
    for (const u of three) expect(await offsetsOn(u, 'all', 90)).toEqual(every(90));
  });

  it('every record rejected means nothing was written: exit 1, not partial', async () => {
    const f = recordsFile('allbad.ndjson', 'allbad', 4, 'ndjson', (_, r) => ({ ...r, id: 'nope' }));
    const r = await runCli(['write', f, '--node', one, '--output', 'json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ read: 4, written: 0, rejected: 4 });
  });

  it('invalid records go to the rejects file and the run goes on (exit 3); the fixed rejects replay', async () => {
    const f = recordsFile('bad.ndjson', 'bad', 20, 'ndjson', (i, r) =>
      i === 3 ? { ...r, id: 'not-a-uuid' } : i === 7 ? { ...r, offset: (r.offset as number) + 1 } : i === 11 ? { ...r, value: 'high' } : r,
    );
    writeFileSync(f, readFileSync(f, 'utf8').replace(/^.*"value":15.*$/m, '{"metric": "bad", oops'));
    const r = await runCli(['write', f, '--node', one, '--batch-size', '5']);
    expect(r.code).toBe(3);
    const rejects = `${f}.rejects.ndjson`;
    expect(r.stdout).toContain(`rejected 4 (4 invalid): see ${rejects}`);
    const lines = readFileSync(rejects, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.file, l.record, l.line, l.error.split(':')[0]])).toEqual([
      [f, 4, 4, 'id'],
      [f, 8, 8, 'offset'],
      [f, 12, 12, 'value'],
      [f, 16, 16, '(record)'],
    ]);
    expect(lines[1].error).toMatch(/aligned to the smallest span 60s \(got 421/);
    expect(lines[0].input).toMatchObject({ id: 'not-a-uuid', offset: 180 });
    expect(await offsetsOn(one, 'bad', 20)).toEqual(new Set([...every(20)].filter((o) => ![180, 420, 660, 900].includes(o))));
    // Fix the rejects in place (the shape stays: file, record, error, input) and replay them.
    const fixed = lines.map((l, k) => ({ ...l, input: record([3, 7, 11, 15][k]!, 'bad') }));
    writeFileSync(rejects, fixed.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const again = await runCli(['write', rejects, '--node', one]);
    expect(again.code).toBe(0);
    expect(await offsetsOn(one, 'bad', 20)).toEqual(every(20));
  });

  it('the rejects file keeps each input as written (1e400, big integers, 1.0), on one line, and replays to the same errors', async () => {
    const f = join(dir, 'verbatim.ndjson');
    const rec = (fields: string): string => `{"metric":"verb","id":"${ID}",${fields}}`;
    const inputs = [rec('"offset":60,"count":1,"value":1e400'), rec('"offset":18014398509481985,"count":1,"value":1'), rec('"offset":61,"count":1.0,"value":-0.0')];
    writeFileSync(f, `${inputs.join('\n')}\n`);
    const r = await runCli(['write', f, '--node', one]);
    expect(r.code).toBe(1);
    const raw = readFileSync(`${f}.rejects.ndjson`, 'utf8').trim().split('\n');
    expect(raw).toHaveLength(3);
    raw.forEach((l, k) => expect(l.endsWith(`,"input":${inputs[k]}}`)).toBe(true));
    const errors = raw.map((l) => JSON.parse(l).error);
    expect(errors[0]).toBe('value: must be a finite number (got Infinity)');
    // Replaying the rejects file finds the same faults in the same records.
    const again = await runCli(['write', `${f}.rejects.ndjson`, '--node', one, '--rejects', join(dir, 'verbatim-again.ndjson')]);
    expect(again.code).toBe(1);
    const raw2 = readFileSync(join(dir, 'verbatim-again.ndjson'), 'utf8').trim().split('\n');
    expect(raw2.map((l) => JSON.parse(l).error)).toEqual(errors);
    raw2.forEach((l, k) => expect(l.endsWith(`,"input":${inputs[k]}}`)).toBe(true));

    // A pretty-printed array element spans lines; its reject is still one NDJSON line.
    const g = join(dir, 'verbatim.json');
    writeFileSync(g, `[\n  {\n    "metric": "verb",\n    "id": "${ID}",\n    "offset": 120,\n    "count": 1,\n    "value": 1e999\n  }\n]\n`);
    const a = await runCli(['write', g, '--node', one]);
    expect(a.code).toBe(1);
    const lines = readFileSync(`${g}.rejects.ndjson`, 'utf8').split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ record: 1, line: 2, error: 'value: must be a finite number (got Infinity)' });
    expect(lines[0]).toContain('"value": 1e999');
  });

  it('--strict sends nothing when any record is invalid (exit 2), naming them on stderr; --dry-run sends nothing', async () => {
    const f = recordsFile('strict.json', 'strict', 30, 'json', (i, r) => (i === 25 ? { ...r, count: -1 } : r));
    const r = await runCli(['write', f, '--node', one, '--strict']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/error: --strict: 1 invalid record, nothing was sent/);
    expect(r.stderr).toContain(`  ${f}: record 26 (line 27): count: must be a whole number >= 0`);
    expect(readFileSync(`${f}.rejects.ndjson`, 'utf8')).toMatch(/"record":26,"line":27,"error":"count: must be a whole number >= 0/);
    expect((await offsetsOn(one, 'strict', 30)).size).toBe(0);

    const g = recordsFile('dry.ndjson', 'dry', 30, 'ndjson');
    const d = await runCli(['write', g, '--nodes', three.join(','), '--dry-run', '--batch-size', '10']);
    expect(d.code).toBe(0);
    expect(d.stdout).toContain('dry run: read 30 records from 1 input, would write 30 in 3 batches to 3 nodes');
    // The per-node split as a table: one row per node.
    for (const u of three) expect(d.stdout).toMatch(new RegExp(`│ ${u} +│ +10 │`));
    expect((await union(three, 'dry', 30)).size).toBe(0);
  });

  it('bad usage and unreadable input exit 2 with a message naming the value', async () => {
    const r = await runCli(['write', join(dir, 'missing.ndjson'), '--node', one]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('missing.ndjson: no such file');
    const b = await runCli(['write', recordsFile('x.ndjson', 'x', 1, 'ndjson'), '--node', one, '--batch-bytes', 'lots']);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('--batch-bytes: "lots" is not a size');
    const t = join(dir, 'trunc.json');
    writeFileSync(t, '[{"metric":"t","id":"' + ID + '","offset":0,"count":1,"value":1},\n{"metric":"t"');
    const c = await runCli(['write', t, '--node', one]);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain(`${t}: line 2, byte`);
    expect(c.stderr).toContain('input ends inside record 2');
    const x = recordsFile('twice.ndjson', 'tw', 1, 'ndjson');
    const d = await runCli(['write', x, join(dir, '.', 'twice.ndjson'), '--node', one]);
    expect(d.code).toBe(2);
    expect(d.stderr).toContain('is named twice');
    expect(d.stdout).toBe('');
    // Stopped before anything was acknowledged: no state file, no hint to --resume.
    const e = join(dir, 'empty.json');
    writeFileSync(e, '');
    const f = await runCli(['write', e, '--node', one]);
    expect(f.code).toBe(2);
    expect(f.stderr).toContain('the input is empty');
    expect(f.stdout).not.toContain('--resume');
    expect(existsSync(`${e}.tsnode-state.json`)).toBe(false);
  });
});

/**
 * A proxy in front of `targetUrl` that forwards every request `intercept` leaves alone (it
 * returns true when it answered, or cut the connection, itself). Closed by the returned stop().
 */
async function interceptingProxy(targetUrl: string, intercept: (req: IncomingMessage, res: ServerResponse) => boolean): Promise<{ url: string; stop: () => Promise<void> }> {
  const target = new URL(targetUrl);
  const proxy = createServer((req, res) => {
    if (intercept(req, res)) return;
    const up = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    req.pipe(up);
  });
  await new Promise<void>((res) => proxy.listen(0, '127.0.0.1', res));
  return {
    url: `http://127.0.0.1:${(proxy.address() as { port: number }).port}`,
    stop: async () => {
      proxy.closeAllConnections();
      await new Promise((res) => proxy.close(res));
    },
  };
}

describe('tsnode write: faults', () => {
  afterAll(stopAllNodes);

  it('--to any: a node killed mid-run; its batches fail over and everything is written (exit 0)', async () => {
    const nodes = await startNodes(3);
    const n = 600;
    const f = recordsFile('failover.ndjson', 'fo', n, 'ndjson');
    const run = runCli(['write', f, '--nodes', nodes.map((x) => x.url).join(','), '--batch-size', '10', '--rate', '400', '--retries', '1', '--output', 'json'], {
      timeoutMs: 30_000,
    });
    await expect
      .poll(async () => (await offsetsOn(nodes[1]!.url, 'fo', n)).size, { timeout: 15_000, interval: 25, message: 'the victim to hold some records' })
      .toBeGreaterThanOrEqual(30);
    await nodes[1]!.kill();
    const r = await run;
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ read: n, written: n, rejected: 0 });
    expect(r.stderr).toMatch(/is failing .*sending to the other nodes/);
    const back = await nodes[1]!.restart();
    expect(await union([nodes[0]!.url, back.url, nodes[2]!.url], 'fo', n)).toEqual(every(n));
  });

  it('SIGKILL half-way, then --resume: every record present, none missing', async () => {
    const node = await startNode({ memory: true });
    const n = 400;
    const f = recordsFile('resume.json', 'res', n, 'json');
    const state = `${f}.tsnode-state.json`;
    const child = spawn(process.execPath, [BIN, 'write', f, '--node', node.url, '--batch-size', '10', '--rate', '300'], {
      stdio: 'ignore',
      env: { ...process.env, TSNODE_NODES: '' },
    });
    const exited = new Promise((res) => child.once('exit', res));
    const progress = (): number => {
      try {
        return JSON.parse(readFileSync(state, 'utf8')).inputs[f]?.record ?? 0;
      } catch {
        return 0; // not written yet, or caught mid-write
      }
    };
    await expect.poll(progress, { timeout: 15_000, interval: 25, message: 'the state file to show progress' }).toBeGreaterThanOrEqual(100);
    child.kill('SIGKILL');
    await exited;
    const saved = JSON.parse(readFileSync(state, 'utf8')).inputs[f];
    expect(saved.done).toBe(false);
    expect(saved.record).toBeLessThan(n);
    expect((await offsetsOn(node.url, 'res', n)).size).toBeLessThan(n);
    const r = await runCli(['write', f, '--node', node.url, '--batch-size', '50', '--resume', '--output', 'json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.inputs[0].skipped).toBe(saved.record);
    expect(doc.read).toBe(n - saved.record);
    expect(await offsetsOn(node.url, 'res', n)).toEqual(every(n));
    expect(existsSync(state)).toBe(false);
  });

  it('starting over (no --resume) forgets the old position at once: killed before its first ack, --resume loses no reject', async () => {
    const node = await startNode({ memory: true });
    const n = 40;
    const f = recordsFile('restart.ndjson', 'restart', n, 'ndjson', (i, r) => (i === 5 || i === 30 ? { ...r, id: 'bad' } : r));
    const state = `${f}.tsnode-state.json`;
    // An earlier run stopped after record 31 (its rejects file holds records 6 and 31).
    const first = await runCli(['write', f, '--node', node.url, '--max-errors', '1', '--batch-size', '5']);
    expect(first.code).toBe(3);
    expect(JSON.parse(readFileSync(state, 'utf8')).inputs[f].record).toBe(31);
    // Start over into a node that never answers, and die before anything is acknowledged.
    let got!: () => void;
    const received = new Promise<void>((res) => (got = res));
    const hang = createServer((req) => {
      req.resume();
      got();
    });
    await new Promise<void>((res) => hang.listen(0, '127.0.0.1', res));
    const child = spawn(process.execPath, [BIN, 'write', f, '--node', `http://127.0.0.1:${(hang.address() as { port: number }).port}`, '--batch-size', '5'], {
      stdio: 'ignore',
      env: { ...process.env, TSNODE_NODES: '' },
    });
    const exited = new Promise((res) => child.once('exit', res));
    try {
      await received;
      child.kill('SIGKILL');
      await exited;
    } finally {
      hang.closeAllConnections();
      await new Promise((res) => hang.close(res));
    }
    const r = await runCli(['write', f, '--node', node.url, '--resume', '--output', 'json']);
    expect(r.code).toBe(3);
    const rejected = readFileSync(`${f}.rejects.ndjson`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).record);
    expect(rejected).toEqual([6, 31]);
    expect(await offsetsOn(node.url, 'restart', n)).toEqual(new Set([...every(n)].filter((o) => o !== 300 && o !== 1800)));
  });

  it('--resume after a kill that tore the last rejects line: the torn line is dropped and written again whole', async () => {
    const node = await startNode({ memory: true });
    const f = recordsFile('torn.ndjson', 'torn', 10, 'ndjson', (i, r) => (i === 2 || i === 7 ? { ...r, id: 'bad' } : r));
    const rejects = `${f}.rejects.ndjson`;
    const first = await runCli(['write', f, '--node', node.url, '--max-errors', '0', '--batch-size', '5']);
    expect(first.code).toBe(3);
    // The run that followed was killed half-way through writing record 8's reject.
    const whole = readFileSync(rejects, 'utf8');
    writeFileSync(rejects, `${whole}{"file":${JSON.stringify(f)},"record":8,"line":8,"error":"id: must be a UU`);
    const r = await runCli(['write', f, '--node', node.url, '--resume']);
    expect(r.code).toBe(3);
    const lines = readFileSync(rejects, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l).record)).toEqual([3, 8]);
    expect(await offsetsOn(node.url, 'torn', 10)).toEqual(new Set([...every(10)].filter((o) => o !== 120 && o !== 420)));
  });

  it('a node answering 503 twice then recovering: retried, exit 0', async () => {
    const node = await startNode({ memory: true });
    let refused = 0;
    const proxy = await interceptingProxy(node.url, (req, res) => {
      if (req.method !== 'POST' || refused >= 2) return false;
      refused++;
      req.resume();
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' }).end('{"error":"overloaded","code":"internal"}');
      return true;
    });
    const url = proxy.url;
    try {
      const f = recordsFile('flaky.ndjson', 'flaky', 50, 'ndjson');
      const r = await runCli(['write', f, '--node', url, '--batch-size', '25', '--concurrency', '1', '--output', 'json']);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ read: 50, written: 50, retries: 2, rejected: 0 });
      expect(refused).toBe(2);
      expect(await offsetsOn(node.url, 'flaky', 50)).toEqual(every(50));
    } finally {
      await proxy.stop();
    }
  });

  it('--to any: a record one node refused (400) is not sent again when the batch fails over', async () => {
    // Node A keeps 300 s as its smallest span, so it refuses the record at 960 s; its next request
    // (the rest of the batch) is cut off, and the batch fails over to B.
    const a = await startNode({ memory: true, rollups: [300, 1800] });
    const b = await startNode({ memory: true });
    let posts = 0;
    const proxy = await interceptingProxy(a.url, (req) => {
      if (req.method !== 'POST' || ++posts === 1) return false;
      req.socket.destroy();
      return true;
    });
    const viaProxy = proxy.url;
    try {
      const f = recordsFile('refused-failover.ndjson', 'rf', 10, 'ndjson', (i, r) => ({ ...r, offset: i === 3 ? 960 : 300 * i }));
      // The nodes disagree on their smallest span (300 s, 60 s): without --smallest-span the write is refused before it starts.
      const r = await runCli([
        'write',
        f,
        '--nodes',
        `${viaProxy},${b.url}`,
        '--to',
        'any',
        '--smallest-span',
        '60',
        '--batch-size',
        '10',
        '--concurrency',
        '1',
        '--retries',
        '0',
        '--output',
        'json',
      ]);
      expect(r.code).toBe(3);
      expect(JSON.parse(r.stdout)).toMatchObject({ read: 10, written: 9, rejected: 1 });
      const rejects = readFileSync(`${f}.rejects.ndjson`, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(rejects).toHaveLength(1);
      expect(rejects[0]).toMatchObject({ record: 4, node: viaProxy, input: { offset: 960 } });
      expect(rejects[0].error).toContain('offset');
      expect(await offsetsOn(b.url, 'rf', 50)).toEqual(new Set([0, 1, 2, 4, 5, 6, 7, 8, 9].map((i) => 300 * i)));
    } finally {
      await proxy.stop();
    }
  });

  it('--to all with one node down: the others take every record, so partial (exit 3), not nothing written (1)', async () => {
    const node = await startNode({ memory: true });
    const dead = await deadAddress();
    const f = recordsFile('halfall.ndjson', 'halfall', 20, 'ndjson');
    const r = await runCli(['write', f, '--nodes', `${node.url},${dead}`, '--to', 'all', '--batch-size', '5', '--retries', '0', '--output', 'json']);
    expect(r.code).toBe(3);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ status: 'done', read: 20, failed_batches: 4 });
    expect(doc.nodes[1].error).toEqual({ code: 'unreachable', message: expect.stringMatching(/connection refused/) });
    expect(doc.nodes.map((n: { records: number }) => n.records)).toEqual([20, 0]);
    expect(await offsetsOn(node.url, 'halfall', 20)).toEqual(every(20));
  });

  it('every node down: stops after the first failed batch (exit 1), which goes to the rejects file; --resume finishes', async () => {
    const dead = await deadAddress();
    const f = recordsFile('down.ndjson', 'down', 50, 'ndjson');
    const r = await runCli(['write', f, '--node', dead, '--batch-size', '10', '--concurrency', '1', '--retries', '0']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('stopped: a batch failed on every node after retries');
    expect(r.stdout).toContain(`to continue: tsnode write ${f} --node ${dead} --batch-size 10 --concurrency 1 --retries 0 --resume`);
    const rejects = readFileSync(`${f}.rejects.ndjson`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rejects.map((l) => l.record)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(rejects[0].error).toMatch(/^not written: .*connection refused/);
    const node = await startNode({ memory: true });
    const again = await runCli(['write', f, '--node', node.url, '--resume', '--output', 'json']);
    // The first 10 records are still only in the rejects file: partial until they are replayed.
    expect(again.code).toBe(3);
    expect(JSON.parse(again.stdout)).toMatchObject({ read: 40, written: 40, rejected: 0, inputs: [{ skipped: 10 }], earlier: { written: 0, not_written: 10, rejected: 10 } });
    const back = await runCli(['write', `${f}.rejects.ndjson`, '--node', node.url]);
    expect(back.code).toBe(0);
    expect(await offsetsOn(node.url, 'down', 50)).toEqual(every(50));
  });
});

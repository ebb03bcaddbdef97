import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import { runCli } from '../helpers/cli.js';
import { deadAddress, startNode, stopAllNodes } from '../helpers/nodes.js';

// `tsnode write` tells the truth about what an earlier run left behind, never prints a secret,
// never trusts a hand-edited position, and keeps its own files private.

const ID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const dispatcher = new Agent();
let dir: string;
let node: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tsnode-write-safety-'));
  node = (await startNode({ memory: true })).url;
});
afterAll(async () => {
  await stopAllNodes();
  await dispatcher.close();
  rmSync(dir, { recursive: true, force: true });
});

function recordsFile(name: string, metric: string, n: number, bad: (i: number) => boolean = () => false): string {
  const text = Array.from({ length: n }, (_, i) => JSON.stringify({ metric, id: bad(i) ? 'not-a-uuid' : ID, offset: 60 * i, count: 1, value: i })).join('\n') + '\n';
  const path = join(dir, name);
  writeFileSync(path, name.endsWith('.gz') ? gzipSync(text) : text);
  return path;
}

async function countOn(url: string, metric: string, n: number): Promise<number> {
  const res = await new NodeClient(url, { dispatcher }).readRollup({ uuid: ID, metric, startMs: 0, endMs: n * 60_000, spanMs: 60_000, engine: 'nnt', type: 'count' });
  return res.points.filter((p) => p.value !== null).length;
}

describe('secrets in hints', () => {
  it('the "to continue" hint names the header to put back instead of repeating its value', async () => {
    const dead = await deadAddress();
    const f = recordsFile('secret.ndjson', 'secret', 5);
    const r = await runCli(['write', f, '--node', dead, '--retries', '0', '--header', 'Authorization: Bearer s3cr3t-t0ken-value']);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).not.toContain('s3cr3t');
    expect(r.stdout).toContain(`to continue: tsnode write ${f} --node ${dead} --retries 0 --header 'Authorization: <Authorization value>' --resume`);
    expect(r.stdout).toContain('put back the value of Authorization');
  });

  it('a node entry with a password is quoted without it', async () => {
    const r = await runCli(['status', '--nodes', 'http://admin:hunter2@db1:8112']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('"http://[redacted]@db1:8112": put credentials in --header');
    expect(r.stderr).not.toContain('hunter2');
  });
});

describe('what the headline and the exit code say', () => {
  it('--to all with one node of two down: "to some nodes only", never "wrote 0"', async () => {
    const dead = await deadAddress();
    const f = recordsFile('some.ndjson', 'some', 20);
    const r = await runCli(['write', f, '--nodes', `${node},${dead}`, '--to', 'all', '--batch-size', '5', '--retries', '0']);
    expect(r.code).toBe(3);
    const headline = r.stdout.split('\n')[0]!;
    expect(headline).toBe('read 20 records from 1 input, wrote 20 to some nodes only, none to every node, in 4 batches to 2 nodes (--to all)');
    expect(headline).not.toMatch(/wrote 0\b/);
    // Per node, in a table: what each took and what it did not (the dead one's error named).
    expect(r.stdout).toMatch(new RegExp(`│ ${node} +│ +20 │ +4 │ +0 │ +0 │ +│`));
    expect(r.stdout).toMatch(new RegExp(`│ ${dead} +│ +0 │ +0 │ +0 │ +20 │ 4 requests failed: .*connection refused`));
  });

  it('--to all to every node says so', async () => {
    const other = (await startNode({ memory: true })).url;
    const f = recordsFile('every.ndjson', 'every', 10);
    const r = await runCli(['write', f, '--nodes', `${node},${other}`, '--to', 'all', '--batch-size', '5']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('read 10 records from 1 input, wrote 10 to every node, in 2 batches to 2 nodes (--to all)');
  });

  it('a resumed run carries the earlier rejects: it exits 3 and says where they are, until they are replayed', async () => {
    // Records 2 and 9 are invalid; --max-errors 0 stops the first run after the first of them.
    const f = recordsFile('carry.ndjson', 'carry', 40, (i) => i === 1 || i === 8);
    const first = await runCli(['write', f, '--node', node, '--max-errors', '0', '--batch-size', '5', '--concurrency', '1']);
    expect(first.code).toBe(3);
    const saved = JSON.parse(readFileSync(`${f}.tsnode-state.json`, 'utf8')).inputs[f];
    expect(saved.settled).toMatchObject({ invalid: 1 });
    const again = await runCli(['write', f, '--node', node, '--resume']);
    expect(again.code).toBe(3);
    expect(again.stdout).toContain('rejected 1 (1 invalid)');
    expect(again.stdout).toMatch(
      new RegExp(`earlier run\\(s\\), up to where this one resumed: wrote ${saved.settled.written}, rejected 1 \\(1 invalid\\): in ${f}\\.rejects\\.ndjson`),
    );
    expect(
      readFileSync(`${f}.rejects.ndjson`, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).record),
    ).toEqual([2, 9]);
    expect(await countOn(node, 'carry', 40)).toBe(38);
  });
});

describe('saved positions are checked against the input', () => {
  it('a byte offset past the end of the file is an error, not "skip everything, exit 0"', async () => {
    const f = recordsFile('past.ndjson', 'past', 10);
    const size = statSync(f).size;
    writeFileSync(
      `${f}.tsnode-state.json`,
      JSON.stringify({
        version: 1,
        updated: new Date().toISOString(),
        rejects: '',
        inputs: { [f]: { record: 50, byte: size + 1000, line: 51, format: 'ndjson', size, mtimeMs: statSync(f).mtimeMs, gzip: false, done: false } },
      }),
    );
    const r = await runCli(['write', f, '--node', node, '--resume']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${f}: the saved position (record 50, byte ${size + 1000}) is past the end of the file (${size} bytes)`);
    expect(await countOn(node, 'past', 10)).toBe(0);
  });

  it('a record number past the end of a gzip input is an error too; a malformed entry is named', async () => {
    const f = recordsFile('past.ndjson.gz', 'pastgz', 10);
    const st = statSync(f);
    const state = (entry: Record<string, unknown>): void =>
      writeFileSync(
        `${f}.tsnode-state.json`,
        JSON.stringify({
          version: 1,
          updated: '',
          rejects: '',
          inputs: { [f]: { line: 1, format: 'ndjson', size: st.size, mtimeMs: st.mtimeMs, gzip: true, done: false, ...entry } },
        }),
      );
    state({ record: 500, byte: 0, line: 501 });
    const r = await runCli(['write', f, '--node', node, '--resume']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the resume position is after record 500, but the input holds only 10 records');
    state({ record: -3, byte: 0 });
    const bad = await runCli(['write', f, '--node', node, '--resume']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`input ${JSON.stringify(f)}: record -3 is not a whole number >= 0`);
    expect(await countOn(node, 'pastgz', 10)).toBe(0);
  });
});

describe('--strict names the invalid records', () => {
  it('the first ten on stderr (file, record, line, field, reason) and how many more', async () => {
    const f = recordsFile('strict12.ndjson', 'strict12', 30, (i) => i % 2 === 1 && i < 24);
    const r = await runCli(['write', f, '--node', node, '--strict']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    // Where the nodes came from and where the records would go (read from the node) come first; then the refusal.
    expect(lines[0]).toMatch(/nodes: --node /);
    expect(lines[1]).toMatch(/--to any: the node runs no topology/);
    expect(lines[2]).toMatch(/error: --strict: 12 invalid records, nothing was sent$/);
    const named = lines.filter((l) => l.includes(`  ${f}: record `));
    expect(named).toHaveLength(10);
    expect(named[0]).toMatch(new RegExp(`  ${f}: record 2 \\(line 2\\): id: must be a UUID`));
    expect(r.stderr).toContain('  ... and 2 more');
    expect(r.stderr).toContain(`every one of them is in ${f}.rejects.ndjson`);
    const json = await runCli(['write', f, '--node', node, '--strict', '--output', 'json']);
    expect(JSON.parse(json.stdout).invalid_records).toHaveLength(10);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'strict', invalid: 12, rejected: 12 });
    expect(await countOn(node, 'strict12', 30)).toBe(0);
  });
});

describe('rejects and state files', () => {
  it('a symbolic link planted at the rejects path is not followed: exit 2, nothing sent, its target untouched', async () => {
    const f = recordsFile('planted.ndjson', 'planted', 5, (i) => i === 2);
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, `${f}.rejects.ndjson`);
    const r = await runCli(['write', f, '--node', node]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`rejects file ${f}.rejects.ndjson is a symbolic link: refusing to write through it`);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(await countOn(node, 'planted', 5)).toBe(0);
  });

  it('are readable by their owner only, also when an older file was not', async () => {
    const f = recordsFile('private.ndjson', 'private', 20, (i) => i === 3);
    const rejects = `${f}.rejects.ndjson`;
    writeFileSync(rejects, 'old\n');
    chmodSync(rejects, 0o644);
    const r = await runCli(['write', f, '--node', node, '--max-errors', '0', '--batch-size', '5', '--concurrency', '1']);
    expect(r.code).toBe(3);
    expect(statSync(rejects).mode & 0o777).toBe(0o600);
    expect(readFileSync(rejects, 'utf8')).not.toContain('old');
    expect(existsSync(`${f}.tsnode-state.json`)).toBe(true);
    expect(statSync(`${f}.tsnode-state.json`).mode & 0o777).toBe(0o600);
  });
});

import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { BIN, runCli } from '../helpers/cli.js';
import { startNode, stopAllNodes } from '../helpers/nodes.js';

afterAll(stopAllNodes);

const UUID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await request(`${url}/write/nnt`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.statusCode, json: await res.body.json() };
}

async function counts(url: string, metric: string, from: number, to: number): Promise<Array<number | null>> {
  const res = await request(`${url}/rollup/${UUID}/${encodeURIComponent(metric)}?start_ts=${from}.000&end_ts=${to}.000&rollup_span=60s&type=count&get_engine=nnt`);
  return ((await res.body.json()) as Array<[number, number | null]>).map((r) => r[1]);
}

describe('tsnode serve', () => {
  it('prints exactly one ready line on stdout, stops cleanly on SIGTERM with exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-serve-'));
    const data = join(dir, 'nested', 'data');
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', data], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await expect.poll(() => stdout.includes('\n') || child.exitCode !== null, { timeout: 15_000, interval: 20 }).toBe(true);
    expect(stdout).toMatch(
      new RegExp(`^tsnode node listening on http://127\\.0\\.0\\.1:\\d+ \\(data: ${data.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, node id [0-9a-f-]{36}\\)\\n$`),
    );
    expect(existsSync(data)).toBe(true);
    expect(stderr).not.toContain('warning');
    const code = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    child.kill('SIGTERM');
    expect(await code).toBe(0);
    expect(stdout.split('\n').filter(Boolean)).toHaveLength(1);
    rmSync(dir, { recursive: true, force: true });
  });

  it('says (data: memory) with --memory and warns about a non-loopback host', async () => {
    const n = await startNode({ memory: true, args: ['--host', '0.0.0.0'] });
    // startNode passes --host 127.0.0.1 first; the later --host wins.
    expect(n.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    await n.stop();
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--memory', '--host', '0.0.0.0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    await expect.poll(() => out, { timeout: 15_000, interval: 20 }).toContain('\n');
    expect(out).toMatch(/\(data: memory, node id [0-9a-f-]{36}, new for this process\)\n$/);
    expect(err).toContain('no authentication');
    const code = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    child.kill('SIGINT');
    expect(await code).toBe(0);
  });

  it.each([
    [['--port', 'eighty'], '--port'],
    [['--rollups', '60,90'], '--rollups'],
    [['--histogram-rollups', '60,,300'], '--histogram-rollups'],
    [['--max-body', 'lots'], '--max-body'],
    [['--sweep-pace', '-1'], '--sweep-pace'],
    [['--memory', '--data-dir', '/tmp/x'], '--memory'],
    [['--bogus'], 'unknown option'],
  ])('rejects %j with exit 2 naming the flag', async (args, mention) => {
    const r = await runCli(['serve', '--port', '0', ...args]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(mention);
  });

  it('a port in use is a clear error naming the port (exit 1)', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = await runCli(['serve', '--memory', '--port', String(port)]);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`port ${port}`);
      expect(r.stderr).toContain('already in use');
    } finally {
      blocker.close();
    }
  });

  it('a port in use with a data dir is the same clear error, not a silent exit 0', async () => {
    // The store opens (and starts its WAL checkpointer thread) before the port is bound; closing it
    // again at once used to let the process run out of work and exit 0 without a word.
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-serve-busy-'));
    try {
      const r = await runCli(['serve', '--data-dir', dir, '--port', String(port)]);
      expect(r.stderr).toContain('already in use');
      expect(r.code).toBe(1);
    } finally {
      blocker.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a data dir made with other rollups', async () => {
    const n = await startNode({ rollups: [60, 300] });
    await n.kill();
    const r = await runCli(['serve', '--port', '0', '--data-dir', n.dataDir, '--rollups', '60,600']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--rollups 60,300');
    rmSync(n.dataDir, { recursive: true, force: true });
  });

  it('SIGTERM during a running sweep stops promptly with exit 0 and keeps the data consistent', async () => {
    const n = await startNode({ sweepPaceMs: 500, rollups: [60, 300] });
    const base = 1_700_000_100;
    expect(
      (
        await post(
          n.url,
          Array.from({ length: 10 }, (_, i) => ({ metric: `s${i}`, id: UUID, offset: base, count: 1, value: 1 })),
        )
      ).status,
    ).toBe(200);
    const del = await request(`${n.url}/sweep_delete`, { method: 'DELETE', headers: { 'X-Service-Delete-Time': String(base + 60) } });
    expect(del.statusCode).toBe(200);
    await del.body.text();
    const t0 = Date.now();
    const exited = new Promise<number | null>((r) => n.child.once('exit', (c) => r(c)));
    n.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(3000); // a 5 s sweep was cut short, not waited for
    const again = await n.restart();
    try {
      // The sweep stopped part-way: some series were swept, the rest kept their record.
      const left = await Promise.all(Array.from({ length: 10 }, (_, i) => counts(again.url, `s${i}`, base, base + 60)));
      expect(left.filter((c) => c[0] === null).length).toBeLessThan(10);
    } finally {
      await again.stop();
      rmSync(n.dataDir, { recursive: true, force: true });
    }
  });

  it('after SIGKILL, a restart on the same data dir finds every acknowledged write', async () => {
    const n = await startNode({ rollups: [60, 300] });
    const base = 1_700_000_100;
    const acked: number[] = [];
    // Acknowledge a series of writes, then kill -9 while more are in flight.
    for (let i = 0; i < 20; i++) {
      const r = await post(n.url, [{ metric: 'durable', id: UUID, offset: base + i * 60, count: i + 1, value: i }]);
      expect(r.status).toBe(200);
      acked.push(i);
    }
    const inflight = post(
      n.url,
      Array.from({ length: 2000 }, (_, i) => ({ metric: 'late', id: UUID, offset: base + i * 60, count: 1, value: 1 })),
    ).catch(() => undefined);
    await n.kill();
    await inflight;
    const again = await n.restart();
    try {
      expect(await counts(again.url, 'durable', base, base + 20 * 60)).toEqual(acked.map((i) => i + 1));
      // The request in flight was atomic: all of it or none of it.
      const late = await counts(again.url, 'late', base, base + 2000 * 60);
      const stored = late.filter((v) => v !== null).length;
      expect([0, 2000]).toContain(stored);
      // 300 s buckets survived too
      const res = await request(`${again.url}/rollup/${UUID}/durable?start_ts=${base}.000&end_ts=${base + 300}.000&rollup_span=300s&type=count&get_engine=nnt`);
      expect(await res.body.json()).toEqual([[base, 1 + 2 + 3 + 4 + 5]]);
      // ...including the newest one, which the node keeps in memory while it fills (recomputed from raw after the crash)
      const newest = await request(`${again.url}/rollup/${UUID}/durable?start_ts=${base + 900}.000&end_ts=${base + 1200}.000&rollup_span=300s&type=count&get_engine=nnt`);
      expect(await newest.body.json()).toEqual([[base + 900, 16 + 17 + 18 + 19 + 20]]);
    } finally {
      await again.stop();
      rmSync(n.dataDir, { recursive: true, force: true });
    }
  });

  describe('--node-id and --topology', () => {
    const ID = '1f846f26-0cfd-4df5-b4f1-e0930604e577';
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-serve-ring-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const file = (name: string, body: unknown): string => {
      const path = join(dir, name);
      writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body));
      return path;
    };
    const ring = { write_copies: 1, nodes: [{ id: ID, address: '127.0.0.1', port: 8112, apiport: 8112, weight: 8 }] };

    it('runs in the ring it is given (ids in any case) and answers /state with its identity and hash', async () => {
      const n = await startNode({ memory: true, args: ['--node-id', ID.toUpperCase(), '--topology', file('ring.json', ring)] });
      const state = await request(`${n.url}/state`);
      const body = (await state.body.json()) as { identity: string; current: string };
      expect(body.identity).toBe(ID);
      expect(body.current).toMatch(/^[0-9a-f]{64}$/);
      await n.stop();
    });

    it.each([
      [['--node-id', 'node-1'], '--node-id: "node-1" is not a node identity'],
      [['--topology', 'nope.json'], '--topology: "nope.json" does not exist'],
      [['--node-id', ID, '--topology', 'BAD'], 'nodes[0].weight: 0 is not a weight'],
      [['--node-id', ID, '--topology', 'XML'], 'line 1'],
      [['--node-id', '765ac4cc-1929-4642-9ef1-d194d08f9538', '--topology', 'OK'], 'is not in the topology'],
      [['--topology', 'OK'], "pass the topology entry's id with --node-id"],
    ])('refuses %j with exit 2 and a message naming the problem', async (args, message) => {
      const paths: Record<string, string> = {
        BAD: file('bad.json', { ...ring, nodes: [{ ...ring.nodes[0], weight: 0 }] }),
        XML: file('bad.xml', '<nodes n="1"><host/></nodes>'),
        OK: file('ok.json', ring),
      };
      const r = await runCli(['serve', '--port', '0', '--memory', ...args.map((a) => paths[a] ?? a)], { cwd: dir });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(message);
    });
  });
});

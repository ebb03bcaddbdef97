#!/usr/bin/env node
// tsnode write --to primary vs --to owners into a local replicating three-node ring, write_copies 2
// (tsnode cluster up): bytes sent (request bodies, the summary's per-node bytes_sent) and time end
// to end. Targets: primary sends at most 0.55x the bytes of owners and is at least 1.5x faster.
// Interleaved RUNS times (default 3), each run its own records; every clock stops only once every
// node's journals are empty and the last record reads back from each of its owners, each read with
// the no-proxy header (the owner's own copy), so both methods end with every copy in place.
//
//   npm run bench -- primary          (RECORDS=200000 by default; RUNS=5 for more rounds)
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, '..', 'bin', 'tsnode.js');
const { Ring, topologyFromJson } = await import(join(here, '..', 'dist', 'ring', 'index.js'));
const N = Number(process.env.RECORDS ?? 200_000);
const RUNS = Number(process.env.RUNS ?? 3);
const tmp = mkdtempSync(join(tmpdir(), 'tsnode-bench-primary-'));
const ringDir = join(tmp, 'ring');

const line = (run, i) =>
  JSON.stringify({
    metric: `cpu.${((i / 50) | 0) % 20}`,
    id: `3f2a9c1e-0b7d-4c55-${String(run).padStart(4, '0')}-${String(i % 50).padStart(12, '0')}`,
    offset: 1_700_000_040 + 60 * Math.floor(i / 1000),
    count: 1 + (i % 5),
    value: i * 0.5,
  });

async function generate(run) {
  const file = join(tmp, `records-${run}.ndjson`);
  const out = createWriteStream(file);
  for (let i = 0; i < N; i += 10_000) {
    const part = [];
    for (let k = i; k < Math.min(N, i + 10_000); k++) part.push(line(run, k));
    if (!out.write(part.join('\n') + '\n')) await new Promise((r) => out.once('drain', () => r(undefined)));
  }
  await new Promise((r) => out.end(() => r(undefined)));
  return file;
}

function tsnode(args) {
  const p = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (p.status !== 0) throw new Error(`tsnode ${args.join(' ')} exited ${p.status}: ${p.stderr}`);
  return p;
}

async function json(url, headers = {}) {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await request(url, { headers });
      return /** @type {any} */ (await res.body.json());
    } catch (err) {
      if (attempt >= 3) throw err; // a loaded node may drop a kept-alive socket: a read is safe to resend
    }
  }
}

/** Every journal empty, and the run's last record on each of its owners (their own copies). */
async function settled(run, urls, owners) {
  for (;;) {
    const pending = (await Promise.all(urls.map((u) => json(`${u}/replication/json`)))).reduce((a, r) => a + r.peers.reduce((b, p) => b + p.pending, 0), 0);
    if (pending === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const last = JSON.parse(line(run, N - 1));
  const q = `start_ts=${last.offset}.000&end_ts=${last.offset + 60}.000&rollup_span=60s&type=count`;
  for (const u of owners(last)) {
    const body = await json(`${u}/rollup/${last.id}/${encodeURIComponent(last.metric)}?${q}`, { 'X-Snowth-Proxied': '1' });
    if (body[0]?.[1] !== last.count) throw new Error(`the last record is not on ${u}: ${JSON.stringify(body)}`);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  const up = tsnode(['cluster', 'up', '--count', '3', '--write-copies', '2', '--base-port', '0', '--dir', ringDir, '--detach', '-o', 'json']);
  const urls = JSON.parse(up.stdout).nodes.map((n) => n.url);
  const topology = topologyFromJson(JSON.parse(readFileSync(join(ringDir, 'topology.json'), 'utf8')));
  const ring = Ring.compile(topology);
  const owners = (last) => ring.ownersOf(last.id, last.metric).map((n) => urls[topology.nodes.indexOf(n)]);
  const methods = ['primary', 'owners'];
  const results = methods.map(() => /** @type {any[]} */ ([]));
  const load = [loadavg()[0]];
  let run = 0;
  for (let k = 0; k < RUNS; k++) {
    for (const [m, to] of methods.entries()) {
      const file = await generate(++run);
      const t = process.hrtime.bigint();
      const p = tsnode(['write', file, '--seed', urls[0], '--to', to, '--output', 'json', '--concurrency', '4']);
      await settled(run, urls, owners);
      const seconds = Number(process.hrtime.bigint() - t) / 1e9;
      const doc = JSON.parse(p.stdout);
      if (doc.written !== N || doc.rejected !== 0) throw new Error(`--to ${to} wrote ${doc.written} of ${N}, rejected ${doc.rejected}`);
      const bytes = doc.nodes.reduce((a, n) => a + n.bytes_sent, 0);
      if (!Number.isFinite(bytes)) throw new Error(`--to ${to}: the summary's nodes carry no bytes_sent`);
      results[m].push({ seconds, bytes });
      load.push(loadavg()[0]);
      rmSync(file, { force: true });
    }
  }
  const [primary, owned] = results.map((rs) => ({ seconds: median(rs.map((r) => r.seconds)), bytes: median(rs.map((r) => r.bytes)) }));
  const mib = (b) => (b / 1024 / 1024).toFixed(1);
  console.log(`${N.toLocaleString('en-US')} records into a replicating 3-node ring, write_copies 2; medians of ${RUNS} interleaved runs`);
  console.log(`load average (1 min) during the runs: ${Math.min(...load).toFixed(2)} to ${Math.max(...load).toFixed(2)} (noisy: compare the ratios)\n`);
  console.log('| method | seconds (until every copy is in place) | records/s | bytes sent (bodies) |');
  console.log('|---|---:|---:|---:|');
  for (const [m, r] of [primary, owned].entries())
    console.log(`| --to ${methods[m]} | ${r.seconds.toFixed(2)} | ${Math.round(N / r.seconds).toLocaleString('en-US')} | ${mib(r.bytes)} MiB |`);
  const byteRatio = primary.bytes / owned.bytes;
  const speedup = owned.seconds / primary.seconds;
  console.log(`\nprimary/owners bytes: ${byteRatio.toFixed(3)} (target <= 0.55: ${byteRatio <= 0.55 ? 'met' : 'NOT met'})`);
  console.log(`owners/primary time: ${speedup.toFixed(2)}x (target >= 1.5x: ${speedup >= 1.5 ? 'met' : 'NOT met'})`);
  console.log(`per run: primary ${results[0].map((r) => r.seconds.toFixed(2)).join(', ')} s; owners ${results[1].map((r) => r.seconds.toFixed(2)).join(', ')} s`);
} finally {
  spawnSync(process.execPath, [BIN, 'cluster', 'down', '--dir', ringDir, '--grace', '5s'], { stdio: 'ignore' });
  rmSync(tmp, { recursive: true, force: true });
}

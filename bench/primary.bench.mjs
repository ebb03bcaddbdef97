#!/usr/bin/env node
// tsnode write --to primary vs --to owners into a local replicating three-node ring, write_copies 2
// (tsnode cluster up): bytes sent (request bodies, the summary's per-node bytes_sent) and time end
// to end. Targets: primary sends at most 0.55x the bytes of owners and is at least 1.5x faster.
// Interleaved RUNS times (default 3), each run its own records; every clock stops only once every
// node's journals are empty and the last record reads back from each of its owners, each read with
// the no-proxy header (the owner's own copy), so both methods end with every copy in place.
//
// Where the time goes, per method (medians): the client's run (spawn to exit), the wait after it
// until the journals are empty and the reads agree, the client's CPU and the nodes' CPU within the
// clock, and the nodes' CPU after it (their flush into the chunks, which no read waits for). Each
// run starts on a quiet ring (no node busy), so no run is billed for the previous one's flush. The
// CPU totals give the most a CPU-bound run on these shared cores can gain; the wall clock can beat
// that only while cores sit idle.
//
//   npm run bench -- primary          (RECORDS=200000 by default; RUNS=5 for more rounds;
//                                      BASE=/path/to/another/build also runs that build's client,
//                                      interleaved, against the same ring: old client vs new)
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { CLIENT_CPU_HOOK, cpuSecondsOf } from './proc-cpu.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, '..', 'bin', 'tsnode.js');
const BASE_BIN = process.env.BASE ? join(process.env.BASE, 'bin', 'tsnode.js') : null;
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

async function generate(run, n = N) {
  const file = join(tmp, `records-${run}.ndjson`);
  const out = createWriteStream(file);
  for (let i = 0; i < n; i += 10_000) {
    const part = [];
    for (let k = i; k < Math.min(n, i + 10_000); k++) part.push(line(run, k));
    if (!out.write(part.join('\n') + '\n')) await new Promise((r) => out.once('drain', () => r(undefined)));
  }
  await new Promise((r) => out.end(() => r(undefined)));
  return file;
}

/** @param {string[]} args @param {{ bin?: string, cpuFile?: string }} [opts] */
function tsnode(args, { bin = BIN, cpuFile } = {}) {
  const p = spawnSync(process.execPath, [...(cpuFile ? ['--require', CLIENT_CPU_HOOK] : []), bin, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, ...(cpuFile ? { TSNODE_BENCH_CPU: cpuFile } : {}) },
  });
  if (p.status !== 0) throw new Error(`tsnode ${args.join(' ')} exited ${p.status}: ${p.stderr}`);
  return { ...p, cpu: cpuFile ? Number(readFileSync(cpuFile, 'utf8')) / 1e6 : 0 };
}

const nodesCpu = (pids) => pids.reduce((a, pid) => a + cpuSecondsOf(pid), 0);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until the ring is quiet: the nodes used under `limit` seconds of CPU in 2.5 s (longer
 * than the nodes' flush interval, so a flush still due has started and ended; gives up after
 * 50 s). Returns their CPU then (NaN without /proc).
 */
async function quiet(pids, limit) {
  let before = nodesCpu(pids);
  for (let i = 0; i < 20; i++) {
    await sleep(2500);
    const now = nodesCpu(pids);
    // Without /proc (not Linux) there is no CPU to read: the one wait is all.
    if (!(now - before >= limit)) return now;
    before = now;
  }
  return before;
}

/**
 * What "quiet" allows: twice what the fresh ring uses idle in 2.5 s (its own timers), at least
 * 0.05 s. A fixed 0.05 s was below an idle three-node ring's ~0.08-0.15 s on this machine, so
 * every wait ran to its 50 s limit (and "nodes CPU after" counted idle time).
 */
async function quietLimit(pids) {
  const before = nodesCpu(pids);
  await sleep(2500);
  return Math.max(0.05, 2 * (nodesCpu(pids) - before));
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
  const pids = JSON.parse(readFileSync(join(ringDir, 'cluster.json'), 'utf8')).nodes.map((n) => n.pid);
  const topology = topologyFromJson(JSON.parse(readFileSync(join(ringDir, 'topology.json'), 'utf8')));
  const ring = Ring.compile(topology);
  const owners = (last) => ring.ownersOf(last.id, last.metric).map((n) => urls[topology.nodes.indexOf(n)]);
  const methods = [
    { name: '--to primary', to: 'primary', bin: BIN },
    { name: '--to owners', to: 'owners', bin: BIN },
    ...(BASE_BIN
      ? [
          { name: '--to primary (BASE client)', to: 'primary', bin: BASE_BIN },
          { name: '--to owners (BASE client)', to: 'owners', bin: BASE_BIN },
        ]
      : []),
  ];
  const results = methods.map(() => /** @type {any[]} */ ([]));
  const limit = await quietLimit(pids);
  const load = [loadavg()[0]];
  let run = 0;
  let previous = /** @type {any} */ (null);
  // Not timed: every method once, so no timed run pays for the nodes' (or a client's) first-time costs.
  for (const method of methods) {
    const file = await generate(++run, Math.min(N, 20_000));
    tsnode(['write', file, '--seed', urls[0], '--to', method.to, '--output', 'json', '--concurrency', '4'], { bin: method.bin });
    rmSync(file, { force: true });
  }
  for (let k = 0; k < RUNS; k++) {
    for (const [m, method] of methods.entries()) {
      const file = await generate(++run);
      const nodesBefore = await quiet(pids, limit);
      // What the nodes did after the previous run's clock stopped (its flush), now that they are quiet.
      if (previous) previous.nodeCpuAfter = nodesBefore - previous.nodesAtEnd;
      const t = process.hrtime.bigint();
      const p = tsnode(['write', file, '--seed', urls[0], '--to', method.to, '--output', 'json', '--concurrency', '4'], {
        bin: method.bin,
        cpuFile: join(tmp, 'client-cpu'),
      });
      const clientSeconds = Number(process.hrtime.bigint() - t) / 1e9;
      await settled(run, urls, owners);
      const seconds = Number(process.hrtime.bigint() - t) / 1e9;
      const nodesAtEnd = nodesCpu(pids);
      const doc = JSON.parse(p.stdout);
      if (doc.written !== N || doc.rejected !== 0) throw new Error(`${method.name} wrote ${doc.written} of ${N}, rejected ${doc.rejected}`);
      const bytes = doc.nodes.reduce((a, n) => a + n.bytes_sent, 0);
      if (!Number.isFinite(bytes)) throw new Error(`${method.name}: the summary's nodes carry no bytes_sent`);
      previous = { seconds, clientSeconds, bytes, clientCpu: p.cpu, nodeCpu: nodesAtEnd - nodesBefore, nodesAtEnd, nodeCpuAfter: NaN };
      results[m].push(previous);
      load.push(loadavg()[0]);
      rmSync(file, { force: true });
    }
  }
  if (previous) previous.nodeCpuAfter = (await quiet(pids, limit)) - previous.nodesAtEnd;
  const med = (rs, key) => median(rs.map((r) => r[key]));
  const rows = results.map((rs) => Object.fromEntries(['seconds', 'clientSeconds', 'bytes', 'clientCpu', 'nodeCpu', 'nodeCpuAfter'].map((key) => [key, med(rs, key)])));
  const [primary, owned] = rows;
  const mib = (b) => (b / 1024 / 1024).toFixed(1);
  console.log(`${N.toLocaleString('en-US')} records into a replicating 3-node ring, write_copies 2; medians of ${RUNS} interleaved runs, each on a quiet ring`);
  console.log(
    `load average (1 min) during the runs: ${Math.min(...load).toFixed(2)} to ${Math.max(...load).toFixed(2)}, on ${cpus().length} cores shared with the nodes (noisy: compare the ratios); quiet = nodes under ${limit.toFixed(3)} s of CPU in 2.5 s\n`,
  );
  console.log(
    '| method | seconds (until every copy is in place) | records/s | bytes sent (bodies) | client run s | then until settled s | client CPU s | nodes CPU s | nodes CPU after s |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [m, r] of rows.entries())
    console.log(
      `| ${methods[m].name} | ${r.seconds.toFixed(2)} | ${Math.round(N / r.seconds).toLocaleString('en-US')} | ${mib(r.bytes)} MiB | ${r.clientSeconds.toFixed(2)} | ${(r.seconds - r.clientSeconds).toFixed(2)} | ${r.clientCpu.toFixed(2)} | ${r.nodeCpu.toFixed(2)} | ${r.nodeCpuAfter.toFixed(2)} |`,
    );
  const byteRatio = primary.bytes / owned.bytes;
  const speedup = owned.seconds / primary.seconds;
  console.log(`\nprimary/owners bytes: ${byteRatio.toFixed(3)} (target <= 0.55: ${byteRatio <= 0.55 ? 'met' : 'NOT met'})`);
  console.log(`owners/primary time: ${speedup.toFixed(2)}x (target >= 1.5x: ${speedup >= 1.5 ? 'met' : 'NOT met'})`);
  const cpu = (r) => r.clientCpu + r.nodeCpu;
  const cpuAll = (r) => cpu(r) + r.nodeCpuAfter;
  console.log(
    `CPU within the clock, client + nodes: owners ${cpu(owned).toFixed(2)} s, primary ${cpu(primary).toFixed(2)} s (${(cpu(owned) / cpu(primary)).toFixed(2)}x: the most a CPU-bound run on shared cores can gain); with the flush after it ${(cpuAll(owned) / cpuAll(primary)).toFixed(2)}x`,
  );
  for (const [m, method] of methods.entries()) console.log(`per run: ${method.name} ${results[m].map((r) => r.seconds.toFixed(2)).join(', ')} s`);
  if (BASE_BIN) {
    const [, , basePrimary, baseOwned] = rows;
    console.log(
      `BASE client (${process.env.BASE}): owners/primary time ${(baseOwned.seconds / basePrimary.seconds).toFixed(2)}x; primary this/BASE time ${(primary.seconds / basePrimary.seconds).toFixed(2)}x, client CPU ${(primary.clientCpu / basePrimary.clientCpu).toFixed(2)}x`,
    );
  }
} finally {
  spawnSync(process.execPath, [BIN, 'cluster', 'down', '--dir', ringDir, '--grace', '5s'], { stdio: 'ignore' });
  rmSync(tmp, { recursive: true, force: true });
}

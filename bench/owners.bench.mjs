#!/usr/bin/env node
// tsnode write --to owners vs --to all into a local six-node ring with write_copies 2 (tsnode
// cluster up --no-replication: the two modes are for a store that does not copy writes between its
// nodes; on one that does, --to primary is the default, bench/primary.bench.mjs): the bytes each sends (request bodies, from the summary's per-node bytes_sent) and
// records/s end to end. Targets: owners sends at most 1/3 of the bytes of all, and is at least
// 2x faster. The two are interleaved RUNS times (default 3) so a burst of load hits both alike;
// each run writes its own records (other check ids), so no run pays for replacing another's rows.
// Every clock stops only once the last record reads back from every node it was written to.
//
//   npm run bench -- owners          (RECORDS=200000 by default; RUNS=5 for more rounds;
//                                      OWNERS_ARGS='--batch-size 10000' adds flags to the owners run)
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { CLIENT_CPU_HOOK } from './proc-cpu.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, '..', 'bin', 'tsnode.js');
const { Ring, topologyFromJson } = await import(join(here, '..', 'dist', 'ring', 'index.js'));
const N = Number(process.env.RECORDS ?? 200_000);
const RUNS = Number(process.env.RUNS ?? 3);
const NODES = 6;
const tmp = mkdtempSync(join(tmpdir(), 'tsnode-bench-owners-'));
const ringDir = join(tmp, 'ring');

function line(run, i) {
  // 50 checks x 20 metrics x N/1000 offsets per run; the run number is in the check ids.
  const id = `3f2a9c1e-0b7d-4c55-${String(run).padStart(4, '0')}-${String(i % 50).padStart(12, '0')}`;
  return JSON.stringify({
    metric: `cpu.${((i / 50) | 0) % 20}`,
    id,
    offset: 1_700_000_040 + 60 * Math.floor(i / 1000),
    count: 1 + (i % 5),
    value: i * 0.5,
    derivative: 0.25,
    counter: 3,
    stddev: 0.5,
  });
}

async function generate(run) {
  const file = join(tmp, `records-${run}.ndjson`);
  const out = createWriteStream(file);
  let buf = '';
  for (let i = 0; i < N; i++) {
    buf += line(run, i) + '\n';
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await new Promise((r) => out.once('drain', () => r(undefined)));
      buf = '';
    }
  }
  await new Promise((r) => out.end(buf, () => r(undefined)));
  return file;
}

function tsnode(args, cpuFile) {
  const p = spawnSync(process.execPath, [...(cpuFile ? ['--require', CLIENT_CPU_HOOK] : []), BIN, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, ...(cpuFile ? { TSNODE_BENCH_CPU: cpuFile } : {}) },
  });
  if (p.status !== 0) throw new Error(`tsnode ${args.join(' ')} exited ${p.status}: ${p.stderr}`);
  return { ...p, cpu: cpuFile ? Number(readFileSync(cpuFile, 'utf8')) / 1e6 : 0 };
}

/** CPU seconds (user+sys) the ring's node processes have used so far, from /proc. */
function nodesCpu(pids) {
  let ticks = 0;
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks / 100;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The last record of a run, read back from `urls` (its owners, or every node). */
async function readLast(run, urls) {
  const last = JSON.parse(line(run, N - 1));
  const q = `start_ts=${last.offset}.000&end_ts=${last.offset + 60}.000&rollup_span=60s&type=count`;
  for (const url of urls) {
    /** @type {any} */
    let body;
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await request(`${url}/rollup/${last.id}/${encodeURIComponent(last.metric)}?${q}`);
        body = await res.body.json();
        break;
      } catch (err) {
        // A loaded node may close a kept-alive socket as the request goes out: a read is safe to resend.
        if (attempt >= 3) throw err;
      }
    }
    if (body[0]?.[1] !== last.count) throw new Error(`the last record is not readable on ${url}: ${JSON.stringify(body)}`);
  }
}

let urls;
let ring;
try {
  const up = tsnode(['cluster', 'up', '--count', String(NODES), '--write-copies', '2', '--no-replication', '--base-port', '0', '--dir', ringDir, '--detach', '-o', 'json']);
  urls = JSON.parse(up.stdout).nodes.map((n) => n.url);
  const topology = topologyFromJson(JSON.parse(readFileSync(join(ringDir, 'topology.json'), 'utf8')));
  ring = Ring.compile(topology);
  const pids = JSON.parse(readFileSync(join(ringDir, 'cluster.json'), 'utf8')).nodes.map((n) => n.pid);
  const methods = [
    {
      name: '--to owners (--seed)',
      // --to named: a seed's ring defaults to --to primary.
      args: ['--seed', urls[0], '--to', 'owners', ...(process.env.OWNERS_ARGS ?? '').split(' ').filter(Boolean)],
      readBack: (last) => ring.ownersOf(last.id, last.metric).map((n) => urls[topology.nodes.indexOf(n)]),
    },
    { name: '--to all (--nodes)', args: ['--nodes', urls.join(','), '--to', 'all'], readBack: () => urls },
  ];
  const results = methods.map(() => /** @type {any[]} */ ([]));
  const load = [loadavg()[0]];
  let run = 0;
  let fileBytes = 0;
  for (let k = 0; k < RUNS; k++) {
    for (const [m, method] of methods.entries()) {
      const file = await generate(++run);
      fileBytes = statSync(file).size;
      const nodesBefore = nodesCpu(pids);
      const t = process.hrtime.bigint();
      const p = tsnode(['write', file, ...method.args, '--output', 'json', '--concurrency', '4'], join(tmp, `cpu-${run}`));
      await readLast(run, method.readBack(JSON.parse(line(run, N - 1))));
      const seconds = Number(process.hrtime.bigint() - t) / 1e9;
      const nodeCpu = nodesCpu(pids) - nodesBefore;
      const doc = JSON.parse(p.stdout);
      if (doc.written !== N || doc.rejected !== 0) throw new Error(`${method.name} wrote ${doc.written} of ${N}, rejected ${doc.rejected}`);
      const bytes = doc.nodes.reduce((a, n) => a + n.bytes_sent, 0);
      // A renamed key would make every ratio NaN and every verdict a silent "NOT met".
      if (!Number.isFinite(bytes)) throw new Error(`${method.name}: the summary's nodes carry no bytes_sent: ${JSON.stringify(doc.nodes[0])}`);
      results[m].push({ seconds, bytes, copies: doc.nodes.reduce((a, n) => a + n.records, 0), clientCpu: p.cpu, nodeCpu });
      load.push(loadavg()[0]);
      rmSync(file, { force: true });
    }
  }
  const rows = methods.map((method, m) => ({
    name: method.name,
    seconds: median(results[m].map((r) => r.seconds)),
    bytes: median(results[m].map((r) => r.bytes)),
    copies: median(results[m].map((r) => r.copies)),
    clientCpu: median(results[m].map((r) => r.clientCpu)),
    nodeCpu: median(results[m].map((r) => r.nodeCpu)),
  }));
  const [owners, all] = rows;
  const mib = (b) => (b / 1024 / 1024).toFixed(1);
  console.log(`${N.toLocaleString('en-US')} records (${mib(fileBytes)} MiB of NDJSON per run) into a ${NODES}-node ring, write_copies 2; medians of ${RUNS} interleaved runs`);
  console.log(
    `load average (1 min) during the runs: ${Math.min(...load).toFixed(2)} to ${Math.max(...load).toFixed(2)}, on ${(await import('node:os')).cpus().length} cores shared with the nodes\n`,
  );
  console.log('| method | seconds | records/s | record copies sent | bytes sent (bodies) | client CPU s | nodes CPU s |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.seconds.toFixed(2)} | ${Math.round(N / r.seconds).toLocaleString('en-US')} | ${r.copies.toLocaleString('en-US')} | ${mib(r.bytes)} MiB | ${r.clientCpu.toFixed(2)} | ${r.nodeCpu.toFixed(2)} |`,
    );
  }
  const byteRatio = owners.bytes / all.bytes;
  const speedup = all.seconds / owners.seconds;
  // 2 copies of 6 is 1/3 exactly; the bodies differ from that only by their framing (a bracket per
  // request, a comma per record), which is counted, so the verdict allows those bytes and says so.
  const framing = Math.abs(owners.bytes - all.bytes / 3);
  console.log(
    `\nowners/all record copies: ${(owners.copies / all.copies).toFixed(4)}; bytes: ${byteRatio.toFixed(5)} (${framing.toLocaleString('en-US')} bytes from 1/3: request framing)`,
  );
  console.log(`target owners bytes <= 1/3 of all: ${byteRatio <= 1 / 3 ? 'met' : framing < 16 * 1024 ? 'met but for the framing bytes' : 'NOT met'}`);
  console.log(`all/owners time: ${speedup.toFixed(2)}x (target >= 2x: ${speedup >= 2 ? 'met' : 'NOT met'})`);
  const cpuAll = all.clientCpu + all.nodeCpu;
  const cpuOwners = owners.clientCpu + owners.nodeCpu;
  console.log(
    `CPU, client + nodes: all ${cpuAll.toFixed(2)} s, owners ${cpuOwners.toFixed(2)} s (${(cpuAll / cpuOwners).toFixed(2)}x: the most a CPU-bound run on shared cores can gain)`,
  );
  console.log(`per run: owners ${results[0].map((r) => r.seconds.toFixed(2)).join(', ')} s; all ${results[1].map((r) => r.seconds.toFixed(2)).join(', ')} s`);
} finally {
  spawnSync(process.execPath, [BIN, 'cluster', 'down', '--dir', ringDir, '--grace', '5s'], { stdio: 'ignore' });
  rmSync(tmp, { recursive: true, force: true });
}

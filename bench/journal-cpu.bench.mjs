#!/usr/bin/env node
// What the replication journals cost an owner, in CPU per record: the same /write/nnt batches into
// - a single node (no ring: stored only);
// - node 1 of a 2-node ring with write_copies 2 (every metric is owned by both: node 1 stores each
//   record, journals it for node 2, and its replayer sends it on): the issue's quantity;
// - node 1 of the same kind of ring with replay towards node 2 paused (stored and journaled, nothing
//   sent): splits the journal's own cost from the sending;
// - node 1 of the same kind of ring without replication (--no-replication), the bench writing each
//   batch to both nodes at once, as `write --to owners` does: an owner without journals whose
//   neighbour ingests the same records at the same time, as node 2 does in the replicating ring
//   (on a 2-core machine the two compete for caches and cores; this side shows how much of the
//   ring's extra CPU is that, not the journals).
// The CPU is the node process's own (utime + stime from /proc/<pid>/stat, every thread), counted from
// before the first batch until node 2 has received every record (asked of node 2, so the polling
// costs node 1 nothing) and both have flushed (SETTLE_MS: the same for every side), so the replay
// sends and the database writes are counted. Node 2's own CPU is not: it is another owner, doing a
// plain ingest of what it receives.
// Target (issue 26): journals add at most 25% to an owner's ingest CPU per record.
//
// BASE_BIN=<another build's bin/tsnode.js> runs that build's sides too, in the same rounds, so an old
// and a new build compare within one run (the machine is shared: compare ratios, not absolutes).
//
//   npm run bench -- journal-cpu     (RECORDS=200000, BATCH=5000, RUNS=5, SETTLE_MS=2000)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.RECORDS ?? 200_000);
const BATCH = Number(process.env.BATCH ?? 5000);
const RUNS = Number(process.env.RUNS ?? 5);
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 2000);
const TICKS = 100; // USER_HZ on Linux
const tmp = mkdtempSync(join(tmpdir(), 'tsnode-bench-jcpu-'));
const builds = [{ name: 'new', bin: join(here, '..', 'bin', 'tsnode.js') }];
if (process.env.BASE_BIN) builds.unshift({ name: 'old', bin: process.env.BASE_BIN });

/** @param {string} bin @param {string[]} args */
function tsnode(bin, args) {
  const p = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (p.status !== 0) throw new Error(`tsnode ${args.join(' ')} exited ${p.status}: ${p.stderr}`);
  return p;
}

/** @returns {Array<{ url: string, pid: number, id: string }>} */
function up(bin, dir, count, extra = []) {
  const r = tsnode(bin, [
    'cluster',
    'up',
    '--count',
    String(count),
    '--base-port',
    '0',
    '--dir',
    dir,
    '--detach',
    '-o',
    'json',
    ...(count > 1 ? ['--write-copies', '2'] : []),
    ...extra,
  ]);
  return JSON.parse(r.stdout).nodes.map((/** @type {{ url: string, pid: number, id: string }} */ n) => ({ url: n.url, pid: n.pid, id: n.id }));
}

/** CPU seconds a process has used (user + system). */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

/** The batches, as bodies: run `run` gets its own series so no run overwrites another's. */
function bodies(run) {
  const out = [];
  for (let from = 0; from < N; from += BATCH) {
    const recs = [];
    for (let i = from; i < Math.min(N, from + BATCH); i++) {
      const id = `3f2a9c1e-0b7d-4c55-${String(run).padStart(4, '0')}-${String(i % 100).padStart(12, '0')}`;
      recs.push({ metric: `cpu.${((i / 100) | 0) % 10}`, id, offset: 1_700_000_040 + 60 * Math.floor(i / 1000), count: 1, value: i * 0.5 });
    }
    out.push(JSON.stringify(recs));
  }
  return out;
}

/** Records a node applied from its peers' replay. */
async function receivedFromPeers(url) {
  const res = await request(`${url}/replication/json`);
  return /** @type {{ received: { peers: number } }} */ (await res.body.json()).received.peers;
}

async function write(url, body) {
  const res = await request(`${url}/write/nnt`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`write answered ${res.statusCode}`);
}

/**
 * CPU microseconds per record the measured node spends on `batches` (and on its journal, if any).
 * `receiver`: the ring's node 2, polled until it has every record; `sibling`: a node fed the same
 * batches at the same time.
 */
async function feed(target, batches, receiver, sibling) {
  const had = receiver ? await receivedFromPeers(receiver.url) : 0;
  const before = cpuSeconds(target.pid);
  for (const body of batches) await Promise.all([write(target.url, body), sibling && write(sibling.url, body)]);
  const t0 = performance.now();
  while (receiver && (await receivedFromPeers(receiver.url)) < had + N) {
    if (performance.now() - t0 > 120_000) throw new Error('the journal did not drain');
    await new Promise((r) => setTimeout(r, 50));
  }
  // Acknowledged means logged: the flush into the database comes later. Every side gets the same
  // settling time, so each one's flush is counted (and the ring nodes' gossip, a request a second).
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  return ((cpuSeconds(target.pid) - before) * 1e6) / N;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const SIDES = ['single', 'ring', 'paused', 'owners'];
/** @type {Array<{ build: string, side: string, bin: string, dir: string, target?: { url: string, pid: number }, receiver?: { url: string }, sibling?: { url: string }, runs: number[] }>} */
const sides = [];
for (const b of builds) {
  for (const side of SIDES) sides.push({ build: b.name, side, bin: b.bin, dir: join(tmp, `${b.name}-${side}`), runs: [] });
}
try {
  for (const s of sides) {
    const nodes = up(s.bin, s.dir, s.side === 'single' ? 1 : 2, s.side === 'owners' ? ['--no-replication'] : []);
    s.target = nodes[0];
    if (s.side === 'ring') s.receiver = nodes[1];
    if (s.side === 'owners') s.sibling = nodes[1];
    if (s.side === 'paused') {
      const res = await request(`${nodes[0].url}/replication/pause/${nodes[1].id}`, { method: 'POST' });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`pause answered ${res.statusCode}`);
    }
  }
  // Alternating rounds, so a burst of load elsewhere hits every side alike.
  for (let run = 0; run < RUNS; run++) {
    const batches = bodies(run);
    for (const s of sides) s.runs.push(await feed(s.target, batches, s.receiver, s.sibling));
  }
} finally {
  for (const s of sides) spawnSync(process.execPath, [s.bin, 'cluster', 'down', '--dir', s.dir, '--grace', '2s']);
  rmSync(tmp, { recursive: true, force: true });
}
console.log(`journal CPU (RECORDS=${N}, BATCH=${BATCH}, RUNS=${RUNS}; node process CPU per record, medians; noisy 2-core machine)`);
const label = {
  single: 'single node, stored only',
  ring: 'ring owner, stored + journaled + sent',
  paused: 'ring owner, stored + journaled (paused)',
  owners: 'ring owner, no journals, peer fed alike',
};
for (const b of builds) {
  /** @param {string} side */
  const of = (side) => {
    const found = sides.find((s) => s.build === b.name && s.side === side);
    if (!found) throw new Error(`no ${side} side for build ${b.name}`);
    return found;
  };
  const a = median(of('single').runs);
  for (const side of SIDES) {
    const s = of(side);
    const m = median(s.runs);
    const vs = side === 'single' ? '' : `  ${m >= a ? '+' : ''}${(((m - a) / a) * 100).toFixed(1)}%`;
    console.log(
      `  ${builds.length > 1 ? `${b.name}: ` : ''}${label[side].padEnd(40)} ${m.toFixed(2)} us/record${vs.padEnd(9)}  runs: ${s.runs.map((x) => x.toFixed(2)).join(', ')}`,
    );
  }
  const o = median(of('ring').runs);
  const w = median(of('owners').runs);
  console.log(
    `  ${builds.length > 1 ? `${b.name}: ` : ''}journals add ${(((o - a) / a) * 100).toFixed(1)}% to a single node (target <= 25%), ${(((o - w) / w) * 100).toFixed(1)}% to a non-replicating owner fed alike`,
  );
}

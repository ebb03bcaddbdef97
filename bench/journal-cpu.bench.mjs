#!/usr/bin/env node
// What the replication journals cost an owner, in CPU per record: the same /write/nnt batches into
// a single node (no ring: stored only) and into node 1 of a 2-node ring with write_copies 2 (every
// metric is owned by both: node 1 stores each record and journals it for node 2, and its replayer
// sends it on). The CPU is the node process's own (utime + stime from /proc/<pid>/stat), counted
// from before the first batch until node 1's journal is empty and both have flushed (SETTLE_MS),
// so the replay sends and the database writes are included.
// Target (issue 26): journals add at most 25% to an owner's ingest CPU per record.
//
//   npm run bench -- journal-cpu     (RECORDS=200000, BATCH=5000, RUNS=3, SETTLE_MS=2000)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, '..', 'bin', 'tsnode.js');
const N = Number(process.env.RECORDS ?? 200_000);
const BATCH = Number(process.env.BATCH ?? 5000);
const RUNS = Number(process.env.RUNS ?? 3);
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 2000);
const TICKS = 100; // USER_HZ on Linux
const tmp = mkdtempSync(join(tmpdir(), 'tsnode-bench-jcpu-'));

/** @param {string[]} args */
function tsnode(args) {
  const p = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (p.status !== 0) throw new Error(`tsnode ${args.join(' ')} exited ${p.status}: ${p.stderr}`);
  return p;
}

/** @returns {Array<{ url: string, pid: number }>} */
function up(dir, count) {
  const r = tsnode(['cluster', 'up', '--count', String(count), '--base-port', '0', '--dir', dir, '--detach', '-o', 'json', ...(count > 1 ? ['--write-copies', '2'] : [])]);
  return JSON.parse(r.stdout).nodes.map((/** @type {{ url: string, pid: number }} */ n) => ({ url: n.url, pid: n.pid }));
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

async function pending(url) {
  const res = await request(`${url}/replication/json`);
  const body = /** @type {{ peers: Array<{ pending: number }> }} */ (await res.body.json());
  return body.peers.reduce((s, p) => s + p.pending, 0);
}

/** CPU microseconds per record the node at `target` spends on `batches` (and on its journal, if any). */
async function feed(target, batches, ring) {
  const before = cpuSeconds(target.pid);
  for (const body of batches) {
    const res = await request(`${target.url}/write/nnt`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    await res.body.dump();
    if (res.statusCode !== 200) throw new Error(`write answered ${res.statusCode}`);
  }
  const t0 = performance.now();
  while (ring && (await pending(target.url)) > 0) {
    if (performance.now() - t0 > 120_000) throw new Error('the journal did not drain');
    await new Promise((r) => setTimeout(r, 100));
  }
  // Acknowledged means logged: the flush into the database comes later. Both sides get the same
  // settling time, so each one's flush is counted (and the ring node's gossip, a request a second).
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  return ((cpuSeconds(target.pid) - before) * 1e6) / N;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const single = join(tmp, 'single');
const ringDir = join(tmp, 'ring');
const alone = [];
const owner = [];
try {
  const [one] = up(single, 1);
  const [first] = up(ringDir, 2);
  // Alternating rounds, so a burst of load elsewhere hits both sides alike.
  for (let run = 0; run < RUNS; run++) {
    const batches = bodies(run);
    alone.push(await feed(one, batches, false));
    owner.push(await feed(first, batches, true));
  }
} finally {
  spawnSync(process.execPath, [BIN, 'cluster', 'down', '--dir', single, '--grace', '2s']);
  spawnSync(process.execPath, [BIN, 'cluster', 'down', '--dir', ringDir, '--grace', '2s']);
  rmSync(tmp, { recursive: true, force: true });
}
const a = median(alone);
const o = median(owner);
console.log(`journal CPU (RECORDS=${N}, BATCH=${BATCH}, RUNS=${RUNS}; node process CPU per record, medians; noisy 2-core machine)`);
console.log(`  single node, stored only              ${a.toFixed(2)} us/record   runs: ${alone.map((x) => x.toFixed(2)).join(', ')}`);
console.log(`  ring owner, stored + journaled + sent ${o.toFixed(2)} us/record   runs: ${owner.map((x) => x.toFixed(2)).join(', ')}`);
console.log(`  journals add ${(((o - a) / a) * 100).toFixed(1)}% (target <= 25%)`);

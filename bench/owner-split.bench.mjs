#!/usr/bin/env node
// The client's own CPU for routing a ring write, without the network: records batched as `tsnode
// write` batches them (the reader's chunks, the batcher's byte check and ranges), then each batch
// split among its owners on a three-node ring with write_copies 2 (`--to primary`) and each node's
// slice joined into a request body. Each run is a fresh process, as a CLI run is: most of the cost
// of 100k records is the engine warming up (interpreted code, then compiling), which a loop in one
// process would hide. CPU is the process's (every thread: the compiler's and the collector's too).
//
//   node bench/owner-split.bench.mjs   (RECORDS=100000, RUNS=9; MODE=owners for every owner;
//                                       BASE=/path/to/another/build also runs that build, interleaved)
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** A fixed ring: three nodes of 64 slots each, two copies. */
const TOPOLOGY = {
  write_copies: 2,
  nodes: ['65f01069-c1b4-4fb5-b180-63e34d60a587', '74d85080-e853-4475-89f1-5bcb5126e1ff', '757d5df6-6803-4f9a-8f09-1a0fb1a57590'].map((id, k) => ({
    id,
    address: '127.0.0.1',
    port: 8112 + k,
    apiport: 8112 + k,
    weight: 64,
  })),
};

/** As bench/primary.bench.mjs writes them: 50 checks x 20 metrics, neighbours of other series. */
const line = (i) =>
  JSON.stringify({
    metric: `cpu.${((i / 50) | 0) % 20}`,
    id: `3f2a9c1e-0b7d-4c55-0007-${String(i % 50).padStart(12, '0')}`,
    offset: 1_700_000_040 + 60 * Math.floor(i / 1000),
    count: 1 + (i % 5),
    value: i * 0.5,
  });

/** In a child: batch the file, then split and join every batch; prints the CPU ms of each step. */
async function child(dist, file, primary) {
  const { Batcher } = await import(join(dist, 'records', 'batch.js'));
  const { openRecordChunks, statSource } = await import(join(dist, 'records', 'reader.js'));
  const { chunkSize } = await import(join(dist, 'records', 'splitter.js'));
  const { Ring, topologyFromJson } = await import(join(dist, 'ring', 'index.js'));
  const { OwnerRouter, joinSlices } = await import(join(dist, 'replay', 'owners.js'));
  const ring = Ring.compile(topologyFromJson(TOPOLOGY));
  const b = new Batcher({ source: file, smallestSpan: 60, batchSize: 5000, batchBytes: 4 << 20, deferCopies: true, ranges: true });
  const batches = [];
  // Bodies copied out: the batcher's pool would otherwise hand their buffers to the next batches.
  const keep = (batch) => batches.push({ ...batch, body: Buffer.from(batch.body) });
  for await (const c of (await openRecordChunks(await statSource(file), {})).chunks) {
    for (let j = 0; j < chunkSize(c); j++) {
      const added = b.addFrom(c, j);
      if (added.full) keep(added.full);
    }
    b.release();
  }
  keep(b.flush());
  const router = new OwnerRouter(ring);
  const cpu = (from) => {
    const c = process.cpuUsage(from);
    return (c.user + c.system) / 1000;
  };
  let split = 0;
  let joined = 0;
  for (const batch of batches) {
    let t = process.cpuUsage();
    const routed = router.split(batch, primary);
    split += cpu(t);
    t = process.cpuUsage();
    for (const s of routed.slices) joinSlices(s.node, [s]);
    joined += cpu(t);
  }
  process.stdout.write(JSON.stringify({ split, join: joined }));
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const n = Number(process.env.RECORDS ?? 100_000);
  const runs = Number(process.env.RUNS ?? 9);
  const mode = process.env.MODE ?? 'primary';
  const builds = [{ name: 'this build', dist: join(here, '..', 'dist') }];
  if (process.env.BASE) builds.push({ name: 'BASE', dist: join(process.env.BASE, 'dist') });
  const tmp = mkdtempSync(join(tmpdir(), 'tsnode-bench-split-'));
  try {
    const file = join(tmp, 'records.ndjson');
    const out = createWriteStream(file);
    for (let i = 0; i < n; i++) if (!out.write(line(i) + '\n')) await new Promise((r) => out.once('drain', () => r(undefined)));
    await new Promise((r) => out.end(() => r(undefined)));
    /** @type {Array<{ split: number[], join: number[] }>} */
    const got = builds.map(() => ({ split: [], join: [] }));
    for (let r = 0; r < runs; r++)
      builds.forEach((b, k) => {
        const p = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', b.dist, file, mode], { encoding: 'utf8' });
        if (p.status !== 0) throw new Error(`${b.name} exited ${p.status}: ${p.stderr}`);
        const { split, join: joined } = JSON.parse(p.stdout);
        got[k].split.push(split);
        got[k].join.push(joined);
      });
    console.log(`${n.toLocaleString('en-US')} records, --to ${mode}, 3-node ring, write_copies 2: client CPU ms, medians of ${runs} fresh processes (interleaved)`);
    builds.forEach((b, k) => {
      const s = median(got[k].split);
      const j = median(got[k].join);
      console.log(`${b.name.padEnd(11)} split ${s.toFixed(1)}  join ${j.toFixed(1)}  total ${(s + j).toFixed(1)}  (${(((s + j) * 1000) / n).toFixed(2)} us/record)`);
    });
    if (builds.length === 2) {
      const total = (k) => median(got[k].split.map((s, r) => s + got[k].join[r]));
      console.log(`this build / BASE: ${(total(0) / total(1)).toFixed(2)}x the CPU`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') await child(process.argv[3], process.argv[4], process.argv[5] !== 'owners');
else await main();

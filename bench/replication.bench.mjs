#!/usr/bin/env node
// Replication on a local ring: a 3-node `cluster up --write-copies 2` fed by `tsnode write --seed`
// (one copy per record, to its primary; the ring replicates) vs the same records into a single
// node. Reports records/s of each (the ring's clock stops when the write exits: acknowledged means
// journaled), how long after the write every journal is empty (lag back to 0), and, with one node
// paused (`tsnode cluster pause`) while the others are fed for PAUSE_S seconds (default 10, the
// issue's 30 shortened to keep the bench under a minute), how fast the backlog drains once resumed
// compared with how fast it was fed. Targets: ring >= 0.5x single; lag 0 within 2 s; catch-up >= 2x.
//
//   npm run bench -- replication     (RECORDS=100000, PAUSE_S=10)
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, '..', 'bin', 'tsnode.js');
const N = Number(process.env.RECORDS ?? 100_000);
const PAUSE_S = Number(process.env.PAUSE_S ?? 10);
const tmp = mkdtempSync(join(tmpdir(), 'tsnode-bench-repl-'));

async function generate(name, run, n) {
  const file = join(tmp, `${name}.ndjson`);
  const out = createWriteStream(file);
  let buf = '';
  for (let i = 0; i < n; i++) {
    const id = `3f2a9c1e-0b7d-4c55-${String(run).padStart(4, '0')}-${String(i % 50).padStart(12, '0')}`;
    buf += JSON.stringify({ metric: `cpu.${((i / 50) | 0) % 20}`, id, offset: 1_700_000_040 + 60 * Math.floor(i / 1000), count: 1, value: i * 0.5 }) + '\n';
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await new Promise((r) => out.once('drain', () => r(undefined)));
      buf = '';
    }
  }
  await new Promise((r) => out.end(buf, () => r(undefined)));
  return file;
}

function tsnode(args) {
  const p = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (p.status !== 0) throw new Error(`tsnode ${args.join(' ')} exited ${p.status}: ${p.stderr}`);
  return p;
}

function up(dir, count) {
  const r = tsnode(['cluster', 'up', '--count', String(count), '--base-port', '0', '--dir', dir, '--detach', '-o', 'json', ...(count > 1 ? ['--write-copies', '2'] : [])]);
  return JSON.parse(r.stdout).nodes.map((n) => n.url);
}

async function pending(urls) {
  let n = 0;
  for (const u of urls) {
    const res = await request(`${u}/replication/json`);
    const body = /** @type {{ peers: Array<{ pending: number }> }} */ (await res.body.json());
    n += body.peers.reduce((s, p) => s + p.pending, 0);
  }
  return n;
}

async function drained(urls, deadlineMs = 120_000) {
  const t0 = performance.now();
  while ((await pending(urls)) > 0) {
    if (performance.now() - t0 > deadlineMs) throw new Error('journals did not drain');
    await new Promise((r) => setTimeout(r, 20));
  }
  return performance.now() - t0;
}

const rows = [];
const single = join(tmp, 'single');
const ringDir = join(tmp, 'ring');
try {
  const [one] = up(single, 1);
  const urls = up(ringDir, 3);
  const fileA = await generate('a', 1, N);
  const fileB = await generate('b', 2, N);

  let t = performance.now();
  tsnode(['write', fileA, '--nodes', one]);
  const singleS = (performance.now() - t) / 1000;
  rows.push(['single node', `${Math.round(N / singleS)} records/s`, `${singleS.toFixed(2)} s`]);

  t = performance.now();
  tsnode(['write', fileB, '--seed', urls[0]]);
  const ringS = (performance.now() - t) / 1000;
  const lagMs = await drained(urls);
  rows.push(['3-node ring, write_copies 2', `${Math.round(N / ringS)} records/s`, `${ringS.toFixed(2)} s (ratio ${(singleS / ringS).toFixed(2)}x of single, target >= 0.5x)`]);
  rows.push(['lag back to 0 after the write', `${Math.round(lagMs)} ms`, 'target <= 2000 ms']);

  // Catch-up: node 3 paused while the ring is fed for PAUSE_S seconds.
  tsnode(['cluster', 'pause', '3', '--dir', ringDir]);
  const chunk = Math.max(1000, Math.round(N / 10));
  let fed = 0;
  let run = 10;
  t = performance.now();
  while (performance.now() - t < PAUSE_S * 1000) {
    const f = await generate(`c${run}`, run++, chunk);
    tsnode(['write', f, '--seed', urls[0]]);
    fed += chunk;
  }
  const fedS = (performance.now() - t) / 1000;
  const backlog = await pending(urls);
  t = performance.now();
  tsnode(['cluster', 'resume', '3', '--dir', ringDir]);
  await drained(urls);
  // From before the resume command (its own start-up, ~0.3 s, is counted: a conservative figure).
  const catchUpMs = performance.now() - t;
  const fedRate = backlog / fedS;
  const drainRate = backlog / (catchUpMs / 1000);
  rows.push([`node 3 paused ${PAUSE_S} s under load`, `${backlog} records journaled for it (${fed} written)`, `fed at ${Math.round(fedRate)}/s`]);
  rows.push(['catch-up once resumed', `${Math.round(catchUpMs)} ms, ${Math.round(drainRate)}/s`, `${(drainRate / fedRate).toFixed(1)}x the feed rate (target >= 2x)`]);
} finally {
  spawnSync(process.execPath, [BIN, 'cluster', 'down', '--dir', single, '--grace', '2s']);
  spawnSync(process.execPath, [BIN, 'cluster', 'down', '--dir', ringDir, '--grace', '2s']);
  rmSync(tmp, { recursive: true, force: true });
}
console.log(`replication (RECORDS=${N}, PAUSE_S=${PAUSE_S}; noisy 2-core machine shared with other work)`);
for (const r of rows) console.log(`  ${r[0].padEnd(36)} ${String(r[1]).padEnd(44)} ${r[2]}`);

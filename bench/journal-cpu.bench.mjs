#!/usr/bin/env node
// What the replication journals cost an owner, in CPU per record (issue 26: "journals add at most
// 25% to a single owner's ingest CPU per record").
//
// The quantity is one owner's ingest CPU per record with journaling on against off: the same
// records into the same kind of node, and only that node's CPU. Each measured node is node 1 of a
// 2-node ring with write_copies 2 (every metric is owned by both nodes, so node 1 stores every
// record and, replicating, journals every record for node 2). The sides, fed the same /write/nnt
// batches (KIND=text: /write/text) in interleaved rounds:
// - off: node 1 with --no-replication, fed alone: the owner's ingest without journals (the baseline);
// - journaled: node 1 replicating, replay towards node 2 paused: the owner's ingest plus the journal
//   append a 200 waits for (the headline: journaled against off is the quantity). Nothing is
//   sent while it is measured, so the CPU is node 1's ingest path and nothing else: neither the
//   replayer's sending nor node 2's apply (a process of its own, idle meanwhile) competes for it;
// - replay: the same node right after, resumed until node 2 has every record: the CPU node 1 spends
//   per record sending its journal (read back from memory and, for a backlog this long, its files). Not ingest
//   CPU, but the journals' other cost to the owner, so it is reported as well, per record and as a
//   share of the baseline; journaled + replay is everything journaling costs node 1 for a record;
// - live, owners: the realistic whole, side by side. live: node 1 replicating during the feed,
//   counted until node 2 has everything (ingest + append + replay sends, while node 2 applies on the
//   same 2 cores); owners: node 1 without journals while node 2 is fed the same batches at the same
//   time, as `write --to owners` does (the same neighbour load, without journals). On this 2-core
//   machine the two processes compete for caches and cores, so live is compared with owners, never
//   with off;
// - single: a node without a ring, for reference.
// The CPU is the node process's own (utime + stime from /proc/<pid>/stat, every thread), counted from
// before the first batch until the node has flushed (SETTLE_MS after the last answer, or after node 2
// has every record: the same for every side, so each one's flush to the database is counted).
// The machine is shared, so the sides are fed side by side: every node fed alone (off, journaled,
// single, of every build) takes each batch in turn, one write at a time, and so do the nodes with a
// busy neighbour (live, owners); a burst of load elsewhere hits every side of a round alike, and
// each comparison is the median over the rounds of the two sides' ratio within a round. Every round
// starts every ring afresh and warms it up with WARM_BATCHES batches (not counted): a node process
// keeps its own speed for its lifetime (its JIT's choices), which would otherwise bias every round alike.
//
// BASE_BIN=<another build's bin/tsnode.js> runs that build's sides too, in the same rounds, so an old
// and a new build compare within one run (the machine is shared: compare ratios, not absolutes).
//
//   npm run bench -- journal-cpu     (RECORDS=200000, BATCH=5000, RUNS=5, SETTLE_MS=2000, WARM_BATCHES=4, KIND=nnt)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { cpuSecondsOf } from './proc-cpu.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.RECORDS ?? 200_000);
const BATCH = Number(process.env.BATCH ?? 5000);
const RUNS = Number(process.env.RUNS ?? 5);
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 2000);
const WARM_BATCHES = Number(process.env.WARM_BATCHES ?? 4);
/** nnt (numeric records, /write/nnt) or text (/write/text: the general path, JSON.parse and validation). */
const KIND = process.env.KIND ?? 'nnt';
if (KIND !== 'nnt' && KIND !== 'text') throw new Error(`KIND must be nnt or text, not ${KIND}`);
const tmp = mkdtempSync(join(tmpdir(), 'tsnode-bench-jcpu-'));
const builds = [{ name: 'new', bin: join(here, '..', 'bin', 'tsnode.js') }];
if (process.env.BASE_BIN) builds.unshift({ name: 'old', bin: process.env.BASE_BIN });

/** @param {string} bin @param {string[]} args */
function tsnode(bin, args) {
  const p = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (p.status !== 0) throw new Error(`tsnode ${args.join(' ')} exited ${p.status}: ${p.stderr}`);
  return p;
}

/** @typedef {{ url: string, pid: number, id: string }} Node */

/** @returns {Node[]} */
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
  return JSON.parse(r.stdout).nodes.map((/** @type {Node} */ n) => ({ url: n.url, pid: n.pid, id: n.id }));
}

/** The batches, as bodies: run `run` gets its own series so no run overwrites another's. */
function bodies(run) {
  const out = [];
  for (let from = 0; from < N; from += BATCH) {
    const recs = [];
    for (let i = from; i < Math.min(N, from + BATCH); i++) {
      const id = `3f2a9c1e-0b7d-4c55-${String(run).padStart(4, '0')}-${String(i % 100).padStart(12, '0')}`;
      const metric = `${KIND === 'text' ? 'state' : 'cpu'}.${((i / 100) | 0) % 10}`;
      const offset = 1_700_000_040 + 60 * Math.floor(i / 1000);
      recs.push(KIND === 'text' ? { metric, id, offset, value: `state ${i % 7} of unit ${i}` } : { metric, id, offset, count: 1, value: i * 0.5 });
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
  const res = await request(`${url}/write/${KIND}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`write answered ${res.statusCode}`);
}

/** Pauses or resumes node 1's replay towards node 2. */
async function setPaused(from, to, paused) {
  const res = await request(`${from.url}/replication/${paused ? 'pause' : 'resume'}/${to.id}`, { method: 'POST' });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`${paused ? 'pause' : 'resume'} answered ${res.statusCode}`);
}

/** Waits until `receiver` (node 2, asked so the polling costs node 1 nothing) applied `count` records from its peers. */
async function drained(receiver, count) {
  const t0 = performance.now();
  while ((await receivedFromPeers(receiver.url)) < count) {
    if (performance.now() - t0 > 120_000) throw new Error('the journal did not drain');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));

/**
 * Feeds the batches to a group of sides, batch by batch in turn (one write at a time, so a burst of
 * load elsewhere hits every side of the group alike), and records the CPU microseconds per record
 * each side's node 1 spent, from before its first batch until the group settled.
 * @param {Side[]} group
 */
async function feedGroup(group, batches, turn) {
  const had = await Promise.all(group.map((s) => (s.side === 'live' ? receivedFromPeers(/** @type {Node} */ (s.receiver).url) : 0)));
  const before = group.map((s) => cpuSecondsOf(/** @type {Node} */ (s.target).pid));
  for (const [b, body] of batches.entries()) {
    for (let k = 0; k < group.length; k++) {
      const s = group[(k + b + turn) % group.length];
      await Promise.all([write(/** @type {Node} */ (s.target).url, body), s.sibling && write(s.sibling.url, body)]);
    }
  }
  await Promise.all(group.map((s, i) => (s.side === 'live' ? drained(/** @type {Node} */ (s.receiver), had[i] + N) : null)));
  await settle();
  group.forEach((s, i) => s.runs.push(((cpuSecondsOf(/** @type {Node} */ (s.target).pid) - before[i]) * 1e6) / N));
}

/** A journaled side's node 1 resumed until node 2 has every record it journaled: the CPU per record of sending them. */
async function replayed(s) {
  const { target, receiver } = /** @type {Required<Side>} */ (s);
  const res = await request(`${target.url}/replication/json`);
  const pending = /** @type {{ peers: Array<{ pending: number }> }} */ (await res.body.json()).peers[0].pending;
  const had = await receivedFromPeers(receiver.url);
  const before = cpuSecondsOf(target.pid);
  await setPaused(target, receiver, false);
  await drained(receiver, had + pending);
  await settle();
  s.replays.push(((cpuSecondsOf(target.pid) - before) * 1e6) / pending);
}

/** Starts a side's ring afresh (each round runs new processes: one process's JIT luck is not every round's). */
async function start(s, run) {
  s.dir = join(tmp, `${s.build}-${s.side}-${run}`);
  const nodes = up(s.bin, s.dir, s.side === 'single' ? 1 : 2, s.side === 'off' || s.side === 'owners' ? ['--no-replication'] : []);
  s.target = nodes[0];
  if (s.side === 'live' || s.side === 'journaled') s.receiver = nodes[1];
  if (s.side === 'owners') s.sibling = nodes[1];
  if (s.side === 'journaled') await setPaused(nodes[0], nodes[1], true);
}

function stop(s) {
  if (!s.dir) return;
  spawnSync(process.execPath, [s.bin, 'cluster', 'down', '--dir', s.dir, '--grace', '2s']);
  rmSync(s.dir, { recursive: true, force: true });
  s.dir = undefined;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const SIDES = ['off', 'journaled', 'live', 'owners', 'single'];
/** @typedef {{ build: string, side: string, bin: string, dir?: string, target?: Node, receiver?: Node, sibling?: Node, runs: number[], replays: number[] }} Side */
/** @type {Side[]} */
const sides = [];
for (const b of builds) {
  for (const side of SIDES) sides.push({ build: b.name, side, bin: b.bin, runs: [], replays: [] });
}
// The nodes fed alone (every build's off, journaled and single) take the batches in turn, as do
// the nodes with a busy neighbour (live and owners); the order turns with each batch and round.
const alone = sides.filter((s) => ['off', 'journaled', 'single'].includes(s.side));
const busy = sides.filter((s) => ['live', 'owners'].includes(s.side));
try {
  for (let run = 0; run < RUNS; run++) {
    for (const s of sides) await start(s, run);
    // Warm-up (not counted): a few batches each, so the measured ones run compiled code.
    const warm = bodies(RUNS + run).slice(0, WARM_BATCHES);
    for (const s of sides) for (const body of warm) await Promise.all([write(/** @type {Node} */ (s.target).url, body), s.sibling && write(s.sibling.url, body)]);
    const warmed = warm.reduce((n, body) => n + JSON.parse(body).length, 0);
    for (const s of busy) if (s.receiver) await drained(s.receiver, warmed);
    const batches = bodies(run);
    await feedGroup(alone, batches, run);
    for (const s of alone) if (s.side === 'journaled') await replayed(s);
    await feedGroup(busy, batches, run);
    for (const s of sides) stop(s);
  }
} finally {
  for (const s of sides) stop(s);
  rmSync(tmp, { recursive: true, force: true });
}

console.log(`journal CPU (KIND=${KIND}, RECORDS=${N}, BATCH=${BATCH}, RUNS=${RUNS}; node 1's process CPU per record, medians; noisy 2-core machine)`);
const label = {
  off: 'owner, no journals (baseline)',
  journaled: 'owner, ingest + journal append (paused)',
  replay: 'owner, sending that journal afterwards',
  owners: 'owner, no journals, peer fed alike',
  live: 'owner, replicating live (+ replay sends)',
  single: 'single node, no ring (reference)',
};
/** Median of the per-round ratios of two sides' runs, as a signed percentage (fed in the same rounds, batch by batch in turn). */
const added = (xs, base) => {
  const m = median(xs.map((x, i) => x / base[i] - 1)) * 100;
  return `${m >= 0 ? '+' : ''}${m.toFixed(1)}%`;
};
for (const b of builds) {
  const tag = builds.length > 1 ? `${b.name}: ` : '';
  /** @param {string} side */
  const of = (side) => {
    const found = sides.find((s) => s.build === b.name && s.side === side);
    if (!found) throw new Error(`no ${side} side for build ${b.name}`);
    return found.runs;
  };
  const replays = /** @type {Side} */ (sides.find((s) => s.build === b.name && s.side === 'journaled')).replays;
  const off = of('off');
  const whole = of('journaled').map((x, i) => x + replays[i]);
  /** @param {keyof typeof label} name @param {number[]} runs @param {string} vs */
  const line = (name, runs, vs) =>
    console.log(`  ${tag}${label[name].padEnd(42)} ${median(runs).toFixed(2)} us/record ${vs.padEnd(18)} runs: ${runs.map((x) => x.toFixed(2)).join(', ')}`);
  line('off', off, '');
  line('journaled', of('journaled'), `${added(of('journaled'), off)} vs off`);
  line(
    'replay',
    replays,
    `${added(
      replays.map((x, i) => x + off[i]),
      off,
    )} vs off`,
  );
  line('owners', of('owners'), '');
  line('live', of('live'), `${added(of('live'), of('owners'))} vs owners`);
  line('single', of('single'), `${added(of('single'), off)} vs off`);
  console.log(
    `  ${tag}journals add ${added(of('journaled'), off)} to the owner's ingest CPU per record (target <= +25%); with sending them, ${added(whole, off)}; ` +
      `live replication adds ${added(of('live'), of('owners'))} to an owner without journals whose peer is fed alike (medians of per-round ratios)`,
  );
}

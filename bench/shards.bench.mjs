// Listing a node's shards costs O(shards), not O(records): a store on disk filled with
// BENCH_RECORDS (default 10,000,000: 2,000 series x 5,000 records 300 s apart, 17 days) and, for scale, a tenth of
// that with the same time range (so the same shards), each timed for every inventory and against
// a scan of the raw chunks (what a listing computed from the records would cost at least).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../dist/server/sqlite-store.js';

const TOTAL = Number(process.env.BENCH_RECORDS ?? 10_000_000);
const POINTS = 5000;
const STEP = 300;
const T0 = 1_700_006_400 - (1_700_006_400 % 86_400);
const REPEAT = 20;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const uuid = (i) => `${(0x10000000 + i).toString(16)}-0000-4000-8000-000000000000`;

function fill(store, series) {
  const batch = [];
  // Time step by time step across all series: the live shape, 5,000 records a write.
  for (let m = 0; m < POINTS; m++) {
    for (let s = 0; s < series; s++) {
      batch.push({ metric: 'load', id: uuid(s), offset: T0 + m * STEP, count: 1, value: m, derivative: 0, counter: 0 });
      if (batch.length === 5000) store.writeNnt(batch.splice(0));
      // Nothing yields to the flusher's timer here: flush as a busy node would.
      if ((m * series + s) % 200_000 === 199_999) store.flush();
    }
  }
  if (batch.length) store.writeNnt(batch);
  store.flush();
}

function time(fn) {
  const times = [];
  let out;
  for (let i = 0; i < REPEAT; i++) {
    const t0 = performance.now();
    out = fn();
    times.push(performance.now() - t0);
  }
  return { ms: median(times), out };
}

const rows = [];
for (const records of [TOTAL / 10, TOTAL]) {
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-bench-shards-'));
  const store = new SqliteStore({ dataDir: dir, rollups: [60, 300, 1800, 10800, 86400], histogramRollups: [60] });
  const t0 = performance.now();
  fill(store, records / POINTS);
  const fillS = (performance.now() - t0) / 1000;
  const list = time(() => store.rollups.map((p) => store.listShards('nnt', p)).concat([store.listShards('raw', 0)]));
  const shards = list.out.reduce((n, l) => n + l.length, 0);
  // The floor of any listing computed from the records: reading every raw chunk once.
  // The store's own connection (private in TypeScript; a bench may look inside).
  const db = /** @type {{ db: import('better-sqlite3').Database }} */ (/** @type {unknown} */ (store)).db;
  const scan = time(() => db.prepare('SELECT count(*) FROM nnt_chunk WHERE span = 60').pluck().get());
  rows.push({ records, series: records / POINTS, fillS, shards, listMs: list.ms, scanMs: scan.ms, chunks: scan.out });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${POINTS} records ${STEP} s apart per series (default shard sizes), 5 rollup spans; medians of ${REPEAT} listings`);
console.log('| records | series | shards listed (5 nnt periods + raw) | list all, ms | scan of the 60 s chunks (count), ms | fill, s |');
console.log('|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(
    `| ${r.records.toLocaleString('en')} | ${r.series.toLocaleString('en')} | ${r.shards} | ${r.listMs.toFixed(3)} | ${r.scanMs.toFixed(1)} (${r.chunks.toLocaleString('en')} chunks) | ${r.fillS.toFixed(0)} |`,
  );
}

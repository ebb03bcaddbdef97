// Reference node benchmarks: HTTP ingest into /write/nnt (batches of 5,000 records, 5 spans
// materialised, on disk) and a rollup read of one year of 300 s data (105,120 buckets).
// The node runs as a real `tsnode serve` child process; this process is only the client.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { cpuSecondsOf } from './proc-cpu.mjs';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'tsnode.js');
// Data shapes: how many series share one batch. 1000 (5 consecutive minutes per series per batch)
// is the many-series live shape; 10 (500 per series per batch) is a backfill sorted per series.
// BENCH_SERIES=1000,100,10 picks them. BENCH_NODE_ARGS adds node flags to the server process,
// e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
const SHAPES = (process.env.BENCH_SERIES ?? '1000,10').split(',').map(Number);
const BATCH = 5000;
const BATCHES = Number(process.env.BENCH_BATCHES ?? 120);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const READS = 7;

// BENCH_BASELINE_BIN=/path/to/bin/tsnode.js: ingest into that build too, rounds alternating with
// this one (old vs new in one run, so the machine's load hits both alike).
const BASELINE = process.env.BENCH_BASELINE_BIN;

async function startNode(args, bin = BIN) {
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-bench-'));
  const child = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []), bin, 'serve', '--port', '0', '--data-dir', dir, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (l) => {
      const m = /listening on (http:\/\/\S+)/.exec(l);
      if (m) resolve(m[1]);
    });
    child.once('exit', (c) => reject(new Error(`node exited ${c}`)));
  });
  return {
    url,
    /** CPU seconds the node process has used so far (Linux /proc; NaN elsewhere). */
    cpuSeconds: () => cpuSecondsOf(child.pid),
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const uuid = (i) => `3f2a9c1e-0b7d-4c55-9a0e-${String(i).padStart(12, '0')}`;

/** Batch k: every series gets BATCH/SERIES consecutive minutes, continuing where batch k-1 ended. */
function makeBatches(startTs, SERIES) {
  const perSeries = BATCH / SERIES;
  const out = [];
  for (let k = 0; k < BATCHES; k++) {
    const recs = [];
    for (let s = 0; s < SERIES; s++) {
      for (let j = 0; j < perSeries; j++) {
        const minute = k * perSeries + j;
        recs.push({
          metric: `bench|ST[host:h${s % 50}]`,
          id: uuid(s),
          offset: startTs + minute * 60,
          count: 6,
          value: (s * 7 + minute) % 100,
          derivative: 0.5,
          counter: minute,
          stddev: 1.5,
          derivative_stddev: 0.1,
          counter_stddev: 0.2,
        });
      }
    }
    out.push(JSON.stringify(recs));
  }
  return out;
}

async function post(dispatcher, url, body) {
  const res = await request(`${url}/write/nnt`, { method: 'POST', dispatcher, body, headers: { 'content-type': 'application/json' } });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`write failed: ${res.statusCode} ${text}`);
}

async function ingest(series, bin = BIN, rounds = ROUNDS) {
  const rates = [];
  const cpuRates = [];
  for (let round = 0; round < rounds; round++) {
    const node = await startNode([], bin);
    const dispatcher = new Agent({ connections: 2 });
    const bodies = makeBatches(1_700_006_400 - (1_700_006_400 % 86400), series);
    const cpu0 = node.cpuSeconds();
    const t0 = performance.now();
    // Two requests in flight: the next body is on the wire while the node commits the last.
    let next = 0;
    await Promise.all(
      [0, 1].map(async () => {
        while (next < bodies.length) await post(dispatcher, node.url, bodies[next++]);
      }),
    );
    // The node acknowledges a write once it is logged and folds logs into its chunks in the
    // background: the clock stops when a read sees the last batch, so that work is counted.
    const last = JSON.parse(bodies[bodies.length - 1]).at(-1);
    const res = await request(
      `${node.url}/rollup/${last.id}/${encodeURIComponent(last.metric)}?start_ts=${last.offset}.000&end_ts=${last.offset + 60}.000&rollup_span=60s&type=count`,
      { dispatcher },
    );
    const seen = /** @type {any} */ (await res.body.json());
    if (seen[0]?.[1] !== last.count) throw new Error(`the last record is not readable: ${JSON.stringify(seen)}`);
    const secs = (performance.now() - t0) / 1000;
    rates.push((BATCHES * BATCH) / secs);
    cpuRates.push((BATCHES * BATCH) / (node.cpuSeconds() - cpu0));
    await dispatcher.close();
    await node.stop();
  }
  return { rates, cpuRates };
}

async function rollupRead() {
  const node = await startNode(['--rollups', '300,1800,10800,86400']);
  const dispatcher = new Agent({ connections: 1 });
  const start = 1_672_531_200; // 2023-01-01
  const n = 105_120;
  for (let i = 0; i < n; i += 20_000) {
    const recs = [];
    for (let j = i; j < Math.min(n, i + 20_000); j++) recs.push({ metric: 'year', id: uuid(1), offset: start + j * 300, count: 5, value: j % 97, stddev: 1 });
    await post(dispatcher, node.url, JSON.stringify(recs));
  }
  const out = {};
  for (const type of ['average', 'all']) {
    const times = [];
    let rows = 0;
    for (let r = 0; r < READS; r++) {
      const t0 = performance.now();
      const res = await request(`${node.url}/rollup/${uuid(1)}/year?start_ts=${start}.000&end_ts=${start + n * 300}.000&rollup_span=300s&type=${type}`, { dispatcher });
      const body = /** @type {unknown[]} */ (await res.body.json());
      times.push(performance.now() - t0);
      rows = body.length;
    }
    out[type] = { median: median(times), rows };
  }
  await dispatcher.close();
  await node.stop();
  return out;
}

const ingests = [];
for (const series of SHAPES) {
  if (!BASELINE) {
    ingests.push({ series, ...(await ingest(series)) });
    continue;
  }
  // One round each in turn.
  /** @type {{ series: number, label?: string, rates: number[], cpuRates: number[] }} */
  const mine = { series, rates: [], cpuRates: [] };
  /** @type {{ series: number, label?: string, rates: number[], cpuRates: number[] }} */
  const base = { series, label: 'baseline', rates: [], cpuRates: [] };
  for (let r = 0; r < ROUNDS; r++) {
    /** @type {Array<[typeof mine, string | undefined]>} */
    const turns = [
      [base, BASELINE],
      [mine, BIN],
    ];
    for (const [into, bin] of turns) {
      const one = await ingest(series, bin, 1);
      into.rates.push(...one.rates);
      into.cpuRates.push(...one.cpuRates);
    }
  }
  ingests.push(base, mine);
}
const reads = process.env.BENCH_SKIP_READ ? null : await rollupRead();
console.log('| measure | median | runs |');
console.log('|---|---|---|');
for (const { series, rates, cpuRates, label } of ingests) {
  console.log(
    `| ${label ? `${label}: ` : ''}ingest /write/nnt, ${BATCH}-record batches, ${series} series (${BATCH / series} per series per batch), 5 spans, disk | ${Math.round(median(rates)).toLocaleString('en')} records/s | ${rates.map((r) => Math.round(r / 1000) + 'k').join(', ')} |`,
  );
  console.log(
    `| same, records per CPU-second of the node process (less sensitive to a busy machine) | ${Math.round(median(cpuRates)).toLocaleString('en')} records/s | ${cpuRates.map((r) => Math.round(r / 1000) + 'k').join(', ')} |`,
  );
}
for (const [type, r] of Object.entries(reads ?? {})) {
  console.log(`| rollup read, 1 year of 300 s (${r.rows.toLocaleString('en')} buckets), type=${type} | ${r.median.toFixed(0)} ms | ${READS} |`);
}

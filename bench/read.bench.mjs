// tsnode read: one year of 300 s buckets (105,120 rows) read and rendered end to end, spawning the
// CLI with stdout to a file, against (a) a reference node holding the data and (b) a recording node
// replaying a canned answer (network + parse + render only). Prints medians.
// The target: `read -o csv` end to end within 1.5x of a separate plain Node process that
// GETs the same URL with node:http and writes the answer to a file; the two alternate run by run.
// BENCH_BASELINE_BIN=/path/to/an/older/bin/tsnode.js alternates that build's CSV read with them, from
// a reference node of that build holding the same data (a change may be in the node's answer too),
// and a plain GET from that node.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, statSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { NodeClient, createAgent } from '../dist/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, '..', 'bin', 'tsnode.js');
const U = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const SPAN = 300;
const ROWS = 105_120;
const START = 1_700_000_100 - (1_700_000_100 % SPAN);
const END = START + ROWS * SPAN;
const RUNS = Number(process.env.RUNS ?? 5);
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
const BASELINE = process.env.BENCH_BASELINE_BIN;
const dir = mkdtempSync(join(tmpdir(), 'tsnode-read-bench-'));

/** @returns {Promise<{ url: string; child: import('node:child_process').ChildProcess }>} */
function startReferenceNode(bin = BIN) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'serve', '--memory', '--host', '127.0.0.1', '--port', '0', '--rollups', '300,1800,10800,86400'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) resolve({ url: m[1], child });
    });
    child.once('exit', (code) => reject(new Error(`node exited ${code}`)));
  });
}

function startReplayNode(body) {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`, server })),
  );
}

function runToFile(args, file, bin = BIN) {
  return new Promise((resolve, reject) => {
    const fd = openSync(file, 'w');
    const t0 = performance.now();
    // /usr/bin/time reports the CLI's own CPU time (user + sys), which a loaded machine distorts
    // far less than wall time.
    const [exe, argv] = /** @type {[string, string[]]} */ (TIME ? [TIME, ['-f', 'CPU %U %S', process.execPath, bin, ...args]] : [process.execPath, [bin, ...args]]);
    const child = spawn(exe, argv, { stdio: ['ignore', fd, 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let err = '';
    child.stderr?.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      const ms = performance.now() - t0;
      closeSync(fd);
      const cpu = /CPU ([\d.]+) ([\d.]+)/.exec(err);
      if (code !== 0) reject(new Error(`exit ${code}: ${err}`));
      else resolve({ ms, cpuMs: cpu ? (Number(cpu[1]) + Number(cpu[2])) * 1000 : NaN });
    });
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** A separate plain Node process that GETs `url` with node:http and writes the answer to `file`: the floor for `read -o csv`. */
const PLAIN_GET = `const http = require('node:http'); const fs = require('node:fs');
http.get(process.argv[1], (res) => { if (res.statusCode !== 200) process.exit(1); res.pipe(fs.createWriteStream(process.argv[2])); }).on('error', () => process.exit(1));`;

function plainGetToFile(url, file) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const [exe, argv] = /** @type {[string, string[]]} */ (
      TIME ? [TIME, ['-f', 'CPU %U %S', process.execPath, '-e', PLAIN_GET, url, file]] : [process.execPath, ['-e', PLAIN_GET, url, file]]
    );
    const child = spawn(exe, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr?.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      const ms = performance.now() - t0;
      const cpu = /CPU ([\d.]+) ([\d.]+)/.exec(err);
      if (code !== 0) reject(new Error(`plain GET exit ${code}: ${err}`));
      else resolve({ ms, cpuMs: cpu ? (Number(cpu[1]) + Number(cpu[2])) * 1000 : NaN });
    });
  });
}

const readArgs = (url, output) => ['read', U, 'cpu', '--node', url, '--start', String(START), '--end', String(END), '--span', `${SPAN}s`, '--output', output, '--retries', '0'];

/** One row of the table from a side's runs. */
function row(label, output, runs, file) {
  const times = runs.map((r) => r.ms);
  return { label, output, median: median(times), min: Math.min(...times), cpu: median(runs.map((r) => r.cpuMs)), bytes: statSync(file).size };
}

/**
 * The plain GET and `read -o csv` (and the baseline build's, when given) run by run in turn, so
 * load from other processes hits every side alike: 3 x RUNS runs each after one warm-up.
 */
async function measureAgainstPlain(url, path, baseUrl) {
  const sides = [
    { label: 'plain node:http GET to a file (separate process)', output: 'raw', file: join(dir, 'plain.json'), run: (f) => plainGetToFile(url + path, f) },
    { label: 'reference node', output: 'csv', file: join(dir, 'out.csv'), run: (f) => runToFile(readArgs(url, 'csv'), f) },
    ...(BASELINE && baseUrl
      ? [
          { label: 'plain GET, baseline build node', output: 'raw', file: join(dir, 'base.json'), run: (f) => plainGetToFile(baseUrl + path, f) },
          { label: 'reference node, baseline build', output: 'csv', file: join(dir, 'base.csv'), run: (f) => runToFile(readArgs(baseUrl, 'csv'), f, BASELINE) },
        ]
      : []),
  ];
  for (const side of sides) await side.run(side.file); // warm-up (disk cache, JIT of the node)
  const runs = sides.map(() => /** @type {Array<{ ms: number; cpuMs: number }>} */ ([]));
  for (let i = 0; i < 3 * RUNS; i++) for (const [k, side] of sides.entries()) runs[k].push(await side.run(side.file));
  if (BASELINE && !readFileSync(sides[1].file).equals(readFileSync(sides[3].file))) throw new Error('the baseline build printed different CSV');
  if (BASELINE && !readFileSync(sides[0].file).equals(readFileSync(sides[2].file))) throw new Error("the baseline build's node answered different bytes");
  return sides.map((side, k) => row(side.label, side.output, runs[k], side.file));
}

async function measure(label, url, output) {
  const file = join(dir, `out.${output}`);
  const args = readArgs(url, output);
  await runToFile(args, file); // warm-up (disk cache, JIT of the node)
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await runToFile(args, file));
  return row(label, output, runs, file);
}

const rows = [];
const ref = await startReferenceNode();
const base = BASELINE ? await startReferenceNode(BASELINE) : undefined;
const agent = createAgent();

/** Writes the year of buckets (some empty) through `client`. */
async function fill(client) {
  for (let from = 0; from < ROWS; from += 20_000) {
    const batch = [];
    for (let i = from; i < Math.min(ROWS, from + 20_000); i++) {
      if (i % 97 === 13) continue; // some empty buckets
      batch.push({
        metric: 'cpu',
        id: U,
        offset: START + i * SPAN,
        count: 5,
        value: 50 + 40 * Math.sin(i / 288) + (i % 7) * 0.1,
        stddev: 1.5,
        derivative: 0.01 * (i % 11),
        counter: i,
        derivative_stddev: 0,
        counter_stddev: 0,
      });
    }
    await client.writeNnt(batch);
  }
}

try {
  const client = new NodeClient(ref.url, { dispatcher: agent });
  const t0 = performance.now();
  await fill(client);
  if (base) await fill(new NodeClient(base.url, { dispatcher: agent }));
  console.log(`wrote ${ROWS} buckets to a reference node in ${((performance.now() - t0) / 1000).toFixed(1)} s; ${RUNS} runs each after one warm-up\n`);
  const res = await client.readRollup({ uuid: U, metric: 'cpu', startMs: START * 1000, endMs: END * 1000, spanMs: SPAN * 1000 });
  if (res.points.length !== ROWS) throw new Error(`expected ${ROWS} rows, got ${res.points.length}`);
  const canned = JSON.stringify(res.points.map((p) => [p.timestampMs / 1000, p.value]));
  // The reference node's own share: fetch the answer and nothing else.
  const path = NodeClient.rollupPath({ uuid: U, metric: 'cpu', startMs: START * 1000, endMs: END * 1000, spanMs: SPAN * 1000 });
  const serverTimes = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await (await fetch(ref.url + path)).text();
    serverTimes.push(performance.now() - t);
  }
  rows.push({ label: 'reference node answer only (fetch)', output: '-', median: median(serverTimes), min: Math.min(...serverTimes), cpu: NaN, bytes: canned.length });
  const replay = await startReplayNode(canned);
  try {
    rows.push(...(await measureAgainstPlain(ref.url, path, base?.url)));
    for (const output of ['table', 'json']) rows.push(await measure('reference node', ref.url, output));
    for (const output of ['csv', 'table']) rows.push(await measure('replay node', replay.url, output));
  } finally {
    replay.server.close();
  }
} finally {
  await agent.close();
  ref.child.kill('SIGTERM');
  base?.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}

console.log('| source | output | median wall ms | min wall ms | median CLI CPU ms | bytes |');
console.log('|---|---|---:|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.label} | ${r.output} | ${r.median.toFixed(0)} | ${r.min.toFixed(0)} | ${Number.isNaN(r.cpu) ? '-' : r.cpu.toFixed(0)} | ${r.bytes} |`);
const csv = rows.find((r) => r.label === 'reference node' && r.output === 'csv');
const baseCsv = rows.find((r) => r.label === 'reference node, baseline build');
if (!csv) throw new Error('no CSV row from the reference node');
console.log(
  `load average at the end: ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
console.log(`\nCSV end to end from a reference node: median ${csv.median.toFixed(0)} ms (target < 1000 ms) ${csv.median < 1000 ? 'OK' : 'OVER'}`);
const plain = rows.find((r) => r.label.startsWith('plain node:http'));
if (!plain) throw new Error('no plain GET row');
const ratio = csv.median / plain.median;
console.log(
  `read -o csv / plain node:http GET to a file: ${ratio.toFixed(2)}x wall (${csv.median.toFixed(0)} vs ${plain.median.toFixed(0)} ms; target <= 1.5x: ${ratio <= 1.5 ? 'met' : 'NOT met'}); ` +
    `CLI CPU ${(csv.cpu / plain.cpu).toFixed(2)}x (${csv.cpu.toFixed(0)} vs ${plain.cpu.toFixed(0)} ms)`,
);
const basePlain = rows.find((r) => r.label === 'plain GET, baseline build node');
if (baseCsv && basePlain) {
  console.log(
    `baseline build (${BASELINE}) and its node: ${(baseCsv.median / basePlain.median).toFixed(2)}x wall of a plain GET from its node (${baseCsv.median.toFixed(0)} vs ${basePlain.median.toFixed(0)} ms), CLI CPU ${baseCsv.cpu.toFixed(0)} ms; ` +
      `this build / baseline: ${(csv.median / baseCsv.median).toFixed(2)}x wall, ${(csv.cpu / baseCsv.cpu).toFixed(2)}x CPU`,
  );
}

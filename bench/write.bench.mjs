#!/usr/bin/env node
// tsnode write: end-to-end replay speed and client memory, against the naive peer (a curl loop
// over pre-split batch files) and the node's own ingest ceiling (pre-serialised bodies posted
// with no client work). Every method writes the same 1,000,000 records into a fresh reference
// node (its own process, SQLite on disk) so none of them pays for replacing another's rows.
//
//   npm run bench -- write            (RECORDS=200000 for a quicker run; RUNS=5 for more rounds)
//   CLIENT_ONLY=1 npm run bench -- write   only the client's own cost: into a sink and --dry-run,
//                                          RUNS times each (default 3), CPU per record of the client
//                                          process alone (user+sys, read from inside it at exit)
//   BASELINE=/path/to/other/bin/tsnode.js   the same client runs of another build too, interleaved
//                                          with this one's, for a before/after ratio (end to end,
//                                          its writes go into this build's node, as the ceiling's do)
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { CLIENT_CPU_HOOK, cpuSecondsOf, mainThreadSchedOf } from './proc-cpu.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, '..', 'bin', 'tsnode.js');
const N = Number(process.env.RECORDS ?? 1_000_000);
const CLIENT_ONLY = process.env.CLIENT_ONLY === '1';
const RUNS = Number(process.env.RUNS ?? 3);
const BUILDS = [{ name: '', bin: BIN }, ...(process.env.BASELINE ? [{ name: ' [BASELINE]', bin: process.env.BASELINE }] : [])];
const BATCH = 5000;
const tmp = mkdtempSync(join(tmpdir(), 'tsnode-bench-write-'));

function line(i) {
  // 50 checks x 20 metrics x N/1000 offsets: every (id, metric, offset) distinct.
  const id = `3f2a9c1e-0b7d-4c55-9a0e-${String(i % 50).padStart(12, '0')}`;
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

async function generate() {
  const file = join(tmp, 'records.ndjson');
  const out = createWriteStream(file);
  let buf = '';
  for (let i = 0; i < N; i++) {
    buf += line(i) + '\n';
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await new Promise((r) => out.once('drain', () => r(undefined)));
      buf = '';
    }
  }
  await new Promise((r) => out.end(buf, () => r(undefined)));
  // The naive peer's input: the same records pre-split into 5,000-record JSON array files.
  const batches = join(tmp, 'batches');
  mkdirSync(batches);
  if (CLIENT_ONLY) return { file, batches };
  for (let b = 0; b * BATCH < N; b++) {
    const parts = [];
    for (let i = b * BATCH; i < Math.min(N, (b + 1) * BATCH); i++) parts.push(line(i));
    writeFileSync(join(batches, `b${String(b).padStart(5, '0')}.json`), `[${parts.join(',')}]`);
  }
  return { file, batches };
}

async function startNode(name) {
  const dataDir = join(tmp, name);
  const child = spawn(process.execPath, [BIN, 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (l) => {
      const m = /listening on (http:\/\/\S+)/.exec(l);
      if (m) resolve(m[1]);
    });
    child.once('exit', (c) => reject(new Error(`node exited ${c}`)));
  });
  return { url, pid: child.pid, stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Reads the last record back. The node acknowledges a write once it is logged and moves logged
 * writes into its database in bulk; every timing below stops only after this read, which makes
 * the node finish that work, so the figures are "written and readable".
 */
async function readLast(url) {
  const last = JSON.parse(line(N - 1));
  const q = `start_ts=${last.offset}.000&end_ts=${last.offset + 60}.000&rollup_span=60s&type=count`;
  const res = await request(`${url}/rollup/${last.id}/${encodeURIComponent(last.metric)}?${q}`);
  const body = /** @type {any} */ (await res.body.json());
  if (body[0]?.[1] !== last.count) throw new Error(`the last record is not readable: ${JSON.stringify(body)}`);
}

// The client's own CPU time (user+sys) is read inside its process as it exits (CLIENT_CPU_HOOK): a
// sink or node in another process, and other benchmarks on the same two cores, do not count.

/** Runs `tsnode ...args` (asynchronously: a sink in this process must keep answering); its stdout, and its CPU seconds. */
async function runClient(args, bin = BIN) {
  const cpuFile = join(tmp, `cpu-${process.hrtime.bigint()}`);
  const p = await new Promise((resolve) => {
    const c = spawn(process.execPath, ['--require', CLIENT_CPU_HOOK, bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TSNODE_BENCH_CPU: cpuFile } });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('close', (status) => resolve({ status, stdout, stderr }));
  });
  if (p.status !== 0) throw new Error(`tsnode ${args.join(' ')} exited ${p.status}: ${p.stderr}`);
  return { ...p, cpu: Number(readFileSync(cpuFile, 'utf8')) / 1e6 };
}

async function timed(fn) {
  const t = process.hrtime.bigint();
  const extra = await fn();
  return { seconds: Number(process.hrtime.bigint() - t) / 1e9, ...extra };
}

/** One row from repeated runs: median seconds and median client CPU, the largest RSS. */
function medianRow(runs) {
  return {
    seconds: median(runs.map((r) => r.seconds)),
    cpu: median(runs.map((r) => r.cpu)),
    cpuMin: Math.min(...runs.map((r) => r.cpu)),
    rss: Math.max(...runs.map((r) => r.rss ?? 0)),
    node:
      runs[0].nodeCpu === undefined ? undefined : { cpu: median(runs.map((r) => r.nodeCpu)), main: median(runs.map((r) => r.nodeMain)), wait: median(runs.map((r) => r.nodeWait)) },
    note: runs[0].note ?? '',
  };
}

/** 1. tsnode write, end to end, in its own process as a user runs it. */
async function tsnodeWrite(url, bin = BIN, input = file, records = N) {
  const p = await runClient(['--verbose', 'write', input, '--node', url, '--output', 'json', '--concurrency', '4'], bin);
  const doc = JSON.parse(p.stdout);
  if (doc.written !== records) throw new Error(`tsnode wrote ${doc.written} of ${records}`);
  // Builds before the snake_case summary called it maxRssBytes (BASELINE may be one).
  return { rss: doc.max_rss_bytes ?? doc.maxRssBytes, cpu: p.cpu };
}

/** 2. The naive peer: one curl per pre-split batch file, in a shell loop. */
async function curlLoop(url) {
  const list = join(tmp, 'list.txt');
  writeFileSync(list, files.join('\n') + '\n');
  const p = spawnSync(
    'sh',
    ['-c', `while read f; do curl -sS -f -o /dev/null -H 'content-type: application/json' --data-binary @"$f" "${url}/write/nnt" || exit 1; done < "${list}"`],
    { stdio: 'inherit' },
  );
  if (p.status !== 0) throw new Error('curl loop failed');
  return {};
}

/** 3. The node's ceiling: bodies already in memory, posted 4 at a time, no client work at all. */
async function ceiling(url) {
  const agent = new Agent({ connections: 8 });
  let retries = 0;
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < bodies.length) {
          const body = bodies[next++];
          for (let attempt = 0; ; attempt++) {
            try {
              const res = await request(`${url}/write/nnt`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
              await res.body.text();
              if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
              break;
            } catch (err) {
              // A loaded node may drop a kept-alive socket; the write is idempotent, so resend.
              if (attempt >= 3) throw err;
              retries++;
            }
          }
        }
      }),
    );
  } finally {
    await agent.close();
  }
  return { note: retries ? `${retries} resends` : '' };
}

const { file, batches } = await generate();
const files = readdirSync(batches)
  .sort()
  .map((f) => join(batches, f));
const sizeMiB = (readFileSync(file).length / 1024 / 1024).toFixed(0);
const bodies = CLIENT_ONLY ? [] : files.map((f) => readFileSync(f, 'utf8'));
/** @type {Array<ReturnType<typeof medianRow> & { method: string; fixed?: boolean; build?: string }>} */
const rows = [];

try {
  // 1-3. End to end, each method against a fresh node, the three interleaved RUNS times (default
  //      3) so a burst of load on this noisy machine hits all of them alike; medians are reported.
  if (!CLIENT_ONLY) {
    const methods = /** @type {[string, (url: string) => Promise<object>][]} */ ([
      ...BUILDS.map(
        ({ name, bin }) => /** @type {[string, (url: string) => Promise<object>]} */ ([`tsnode write (NDJSON file, 4 in flight)${name}`, (url) => tsnodeWrite(url, bin)]),
      ),
      ['curl --data-binary loop (pre-split files)', curlLoop],
      ['node ingest ceiling (pre-serialised, 4 in flight)', ceiling],
    ]);
    const runs = methods.map(() => /** @type {any[]} */ ([]));
    for (let k = 0; k < RUNS; k++) {
      for (const [m, [, run]] of methods.entries()) {
        const node = await startNode(`node-${m}-${k}`);
        try {
          // The node's own CPU (every thread), and how long its main thread waited for a CPU while
          // runnable: on two cores, what a client's work takes from the node shows as that wait.
          const cpu0 = cpuSecondsOf(node.pid);
          const sched0 = mainThreadSchedOf(node.pid);
          const r = await timed(async () => {
            const extra = await run(node.url);
            await readLast(node.url);
            return extra;
          });
          const sched = mainThreadSchedOf(node.pid);
          runs[m].push({ ...r, nodeCpu: cpuSecondsOf(node.pid) - cpu0, nodeMain: sched.run - sched0.run, nodeWait: sched.wait - sched0.wait });
        } finally {
          await node.stop();
        }
      }
    }
    for (const [m, [name]] of methods.entries()) {
      const build = name.startsWith('tsnode write') ? (BUILDS.find((b) => b.name && name.endsWith(b.name))?.name ?? '') : undefined;
      rows.push({ method: `${name}, median of ${RUNS}`, ...medianRow(runs[m]), ...(build !== undefined ? { build } : {}) });
    }
    // What every tsnode row pays whatever the input: process start, module loading, discovery,
    // the state file, the summary and exit. The ceiling pays none of it (it runs in this process).
    const one = join(tmp, 'one.ndjson');
    writeFileSync(one, line(0) + '\n');
    const node = await startNode('node-one');
    try {
      const fixed = BUILDS.map(() => /** @type {any[]} */ ([]));
      for (let k = 0; k < Math.max(RUNS, 5); k++) {
        for (const [b, build] of BUILDS.entries()) fixed[b].push(await timed(() => tsnodeWrite(node.url, build.bin, one, 1)));
      }
      for (const [b, build] of BUILDS.entries()) {
        rows.push({ method: `tsnode write of 1 record (its fixed cost), median of ${fixed[b].length}${build.name}`, ...medianRow(fixed[b]), fixed: true, build: build.name });
      }
    } finally {
      await node.stop();
    }
  }
  // 4. tsnode write into a sink that answers at once without storing: the client's own ceiling
  //    (read, split, validate, serialise, HTTP), with no database behind it.
  {
    const { createServer } = await import('node:http');
    let received = 0;
    const sink = createServer((req, res) => {
      req.on('data', (d) => (received += d.length));
      // An acknowledgement without a count (as the production store answers): a count of 0 would be a short one.
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    await new Promise((r) => sink.listen(0, '127.0.0.1', () => r(undefined)));
    const url = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (sink.address()).port}`;
    const runs = BUILDS.map(() => /** @type {any[]} */ ([]));
    for (let k = 0; k < (CLIENT_ONLY ? RUNS : 1); k++) {
      for (const [b, build] of BUILDS.entries()) {
        received = 0;
        runs[b].push(
          await timed(async () => {
            const p = await runClient(['--verbose', 'write', file, '--node', url, '--output', 'json'], build.bin);
            const doc = JSON.parse(p.stdout);
            // Builds before the snake_case summary called it maxRssBytes (BASELINE may be one).
            return { rss: doc.max_rss_bytes ?? doc.maxRssBytes, cpu: p.cpu, note: `${(received / 1048576).toFixed(0)} MiB of bodies` };
          }),
        );
      }
    }
    sink.close();
    for (const [b, build] of BUILDS.entries()) {
      rows.push({
        method: `tsnode write into a sink (no database: client ceiling)${runs[b].length > 1 ? `, median of ${runs[b].length}` : ''}${build.name}`,
        ...medianRow(runs[b]),
      });
    }
  }
  // 5. Where the client's time goes: read + split + validate + batch, nothing sent.
  {
    const runs = BUILDS.map(() => /** @type {any[]} */ ([]));
    for (let k = 0; k < (CLIENT_ONLY ? RUNS : 3); k++) {
      for (const [b, build] of BUILDS.entries()) {
        runs[b].push(
          await timed(async () => {
            const p = await runClient(['--verbose', 'write', file, '--node', 'http://127.0.0.1:9', '--dry-run', '--output', 'json'], build.bin);
            const doc = JSON.parse(p.stdout);
            return { rss: doc.max_rss_bytes ?? doc.maxRssBytes, cpu: p.cpu };
          }),
        );
      }
    }
    for (const [b, build] of BUILDS.entries()) rows.push({ method: `client only: tsnode write --dry-run (median of ${runs[b].length})${build.name}`, ...medianRow(runs[b]) });
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

/** @param {{ cpu: number; main: number; wait: number } | undefined} n */
const nodeCell = (n) => (n === undefined || Number.isNaN(n.cpu) ? '-' : `${n.cpu.toFixed(2)} (${n.main.toFixed(2)}; ${n.wait.toFixed(2)})`);
const curl = rows.find((r) => r.method.startsWith('curl'));
console.log(`${N.toLocaleString('en-US')} records, ${sizeMiB} MiB NDJSON, batches of ${BATCH}\n`);
console.log('| method | seconds | records/s | vs curl | client CPU µs/record | client peak RSS | node CPU s (main thread; its wait for a CPU) | note |');
console.log('|---|---:|---:|---:|---:|---:|---:|---|');
for (const r of rows) {
  // The 1-record row: its CPU in ms, not per record of N.
  const rate = r.fixed ? 1 / r.seconds : Math.round(N / r.seconds);
  const perRecord = (x) => (r.fixed ? `${(x * 1e3).toFixed(0)} ms` : ((x / N) * 1e6).toFixed(2));
  const cpu = r.cpu === undefined ? '-' : `${perRecord(r.cpu)}${r.cpuMin !== undefined && r.cpuMin !== r.cpu ? ` (min ${perRecord(r.cpuMin)})` : ''}`;
  console.log(
    `| ${r.method} | ${r.seconds.toFixed(2)} | ${rate.toLocaleString('en-US')} | ${curl ? `${(curl.seconds / r.seconds).toFixed(2)}x` : '-'} | ${cpu} | ${r.rss ? `${(r.rss / 1024 / 1024).toFixed(0)} MiB` : '-'} | ${nodeCell(r.node)} | ${r.note ?? ''} |`,
  );
}
const ceil = rows.find((r) => r.method.startsWith('node ingest ceiling'));
for (const { name } of BUILDS) {
  const tw = rows.find((r) => r.build === name && !r.fixed);
  const fixed = rows.find((r) => r.build === name && r.fixed);
  if (!tw || !ceil) continue;
  const ratio = ceil.seconds / tw.seconds;
  console.log(
    `\ntsnode write${name} end to end: ${Math.round(N / tw.seconds).toLocaleString('en-US')} records/s; the node's ingest ceiling: ${Math.round(N / ceil.seconds).toLocaleString('en-US')} records/s; ratio ${ratio.toFixed(2)}x (target >= 0.9x: ${ratio >= 0.9 ? 'met' : 'NOT met'})`,
  );
  if (fixed) {
    console.log(
      `  of its ${tw.seconds.toFixed(2)} s, ${fixed.seconds.toFixed(2)} s is what writing 1 record takes (process start, discovery, state file, exit); the records themselves: ${(tw.seconds - fixed.seconds).toFixed(2)} s, ${(ceil.seconds / (tw.seconds - fixed.seconds)).toFixed(2)}x the ceiling's rate`,
    );
  }
}

#!/usr/bin/env node
// Retention apply: a 3-step policy (nnt:60=30d, text=90d, histogram:60=1y: one data type per step)
// with `tsnode retention apply` on 1, 10 and 100 reference nodes, versus a barrier script that runs
// step 1 on every node, waits until every node is idle, then step 2, then step 3 (what a careful
// shell loop does).
//
// Hosting and pacing as bench/sweep.bench.mjs: the nodes are real in-process servers (the server's
// own startServer, in-memory SQLite, each on its own port with its own store and sweeper), spread
// over HOSTS child processes; each node's sweeper pauses PACE ms per series it walks, standing in for
// a node sweeping on its own machine. A step's time on node i is pace_i x (series of that step's
// type on node i).
//
// Two scenarios:
// - uniform: every node has the same pace and the same data. Measures how apply scales from 1 to
//   100 nodes (target: 100 nodes within 1.25x of 1 node).
// - skewed: node speeds differ (paces spread over 10x, geometric) AND node i holds more series of
//   type i mod 3 (HEAVY of that type, LIGHT of the other two). With the same data on every node
//   the barrier and apply tie: the slowest node is the slowest at every step, and apply waits for it
//   too. Only when different nodes are the slowest at different steps does waiting for everybody at
//   every step cost time: then the barrier pays the sum of the per-step maxima, apply the maximum of
//   the per-node sums (target: apply at least 1.3x faster).
// The barrier is a small Node script (this file with --barrier, its own process as apply is) using
// fetch rather than curl, so both sides pay similar HTTP costs and mostly the sequencing differs; it
// polls every node at the same 100 ms interval as apply. Apply's times include the CLI's start-up,
// its GET /state and preflight, and its run file and journal writes (on tmpfs when /dev/shm exists,
// so the shared disk's fsync latency is not measured; RETENTION_BENCH_STATE_DIR overrides).
// Env: RETENTION_BENCH_RUNS (default 5), RETENTION_BENCH_PACE_MS (uniform pace, default 20),
// RETENTION_BENCH_SERIES (uniform series per type, default 50: 1 s per step), RETENTION_BENCH_SKEW_MIN_PACE_MS
// (default 5), RETENTION_BENCH_HEAVY (default 50), RETENTION_BENCH_LIGHT (default 3), RETENTION_BENCH_ARGS
// (extra `retention apply` flags, e.g. "--concurrency 64"), RETENTION_BENCH_ONLY=uniform|skewed|receipts.
//
// receipts (run with RETENTION_BENCH_ONLY=receipts, or after the others): what the receipt costs a
// 100-node apply (target: under 10%). Rounds alternate an apply with its receipt (two inventory
// looks per node: before the first DELETE and after the last step) and one with the hidden
// `--no-receipt`; each run's journal is checked to hold a receipt exactly when asked. The two
// looks are also timed alone (the library's takeLook on the same 100 nodes, holding the data).
// RETENTION_BENCH_BASELINE=<dir of an older checkout, built> adds that build's apply with its
// receipt to the same rounds (old against new in one run). Besides wall time, each apply's CPU is
// counted: the CLI's own (user + system, written as it exits: proc-cpu.mjs CLIENT_CPU_HOOK) and
// the node hosts' meanwhile. On a loaded machine wall times swing by a third from run to run, CPU
// much less, and CPU is what the looks add (they overlap the preflight and the other nodes' steps).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CLIENT_CPU_HOOK, cpuSecondsOf } from './proc-cpu.mjs';

const BIN = fileURLToPath(new URL('../bin/tsnode.js', import.meta.url));
const RULES = ['--rule', 'nnt:60=30d', '--rule', 'text=90d', '--rule', 'histogram:60=1y'];
const TYPES = ['nnt', 'text', 'histogram'];
const DAY = 86_400;
/** The CPU of the last cliApply's process, ms (NaN when it did not say). */
let lastCliCpuMs = NaN;

async function host(paces) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--host', JSON.stringify(paces)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`node host exited with ${code}`)));
  });
  return { child, urls: JSON.parse(line) };
}

/** 100 nodes with the given paces over HOSTS processes; node i is urls[i]. */
async function hostNodes(paces, HOSTS = 4) {
  const groups = Array.from({ length: HOSTS }, () => /** @type {any[]} */ ([]));
  paces.forEach((p, i) => groups[i % HOSTS].push(p));
  const hosts = await Promise.all(groups.map((g) => host(g)));
  const urls = paces.map((_, i) => hosts[i % HOSTS].urls[Math.floor(i / HOSTS)]);
  return { hosts, urls };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const uuid = (i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

async function post(url, path, body) {
  // A kept-alive socket the node closed meanwhile can reset: writes replace, so try again.
  for (let attempt = 1; ; attempt++) {
    try {
      const r = await fetch(`${url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      if (!r.ok) throw new Error(`seeding ${url}${path}: ${r.status} ${await r.text()}`);
      return;
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}

/** Old data of every type (older than every cut-off): counts[t] series of type t on that node. */
async function seed(url, counts) {
  const offset = Math.floor((Date.now() / 1000 - 400 * DAY) / DAY) * DAY;
  const ids = (n) => Array.from({ length: n }, (_, i) => uuid(i));
  await post(url, '/write/nnt', JSON.stringify(ids(counts.nnt).map((id) => ({ metric: 'cpu', id, offset, count: 1, value: 1 }))));
  await post(url, '/write/text', JSON.stringify(ids(counts.text).map((id) => ({ metric: 'version', id, offset, value: 'v1' }))));
  await post(url, '/histogram/write', JSON.stringify(ids(counts.histogram).map((id) => ({ metric: 'latency', id, offset, period: 60, histogram: 'AAA=' }))));
}

function cliApply(urls, stateDir, args = [], bin = BIN) {
  // The CLI writes its own CPU here as it exits (proc-cpu.mjs CLIENT_CPU_HOOK).
  const cpuFile = join(stateDir, 'cli-cpu');
  rmSync(cpuFile, { force: true });
  const start = performance.now();
  const extra = (process.env.RETENTION_BENCH_ARGS ?? '').split(' ').filter(Boolean);
  const r = spawnSync(
    process.execPath,
    ['--require', CLIENT_CPU_HOOK, bin, 'retention', 'apply', ...RULES, '--nodes', urls.join(','), '--yes', '-o', 'json', '--poll-interval', '100ms', '-q', ...extra, ...args],
    {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', XDG_STATE_HOME: stateDir, TSNODE_CONFIG: join(stateDir, 'none.yaml'), TSNODE_BENCH_CPU: cpuFile },
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const ms = performance.now() - start;
  if (r.status !== 0) throw new Error(`tsnode retention apply exited ${r.status}: ${r.stderr}`);
  lastCliCpuMs = existsSync(cpuFile) ? Number(readFileSync(cpuFile, 'utf8')) / 1000 : NaN;
  rmSync(cpuFile, { force: true });
  const doc = JSON.parse(r.stdout);
  if (doc.outcome !== 'complete') throw new Error(`not complete: ${doc.outcome}`);
  return ms;
}

/** Whether the journal's last run holds a receipt (`receipt` lines name their run). */
function lastRunHasReceipt(stateDir) {
  const lines = readFileSync(join(stateDir, 'tsnode', 'sweeps.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const run = lines.filter((l) => l.kind === 'retention.start').at(-1).run;
  return lines.some((l) => l.kind === 'receipt' && l.run === run);
}

/**
 * The receipt's cost on 100 nodes: applies with and without it in alternating rounds (the first
 * pair warms up), and the two looks alone, timed with the library on the same nodes.
 */
async function receiptsCost(urls, counts, stateDir, RUNS, hostPids) {
  const lib = await import('../dist/index.js');
  const { createAgent, NodeClient, takeLook } = lib;
  // What the run's looks read: only the lists its steps can change, where the build knows how (lookScopeOf).
  const scopeOf = /** @type {any} */ (await import('../dist/client/receipt.js')).lookScopeOf;
  const scope = scopeOf ? scopeOf([{ types: ['nnt'], nntRollups: [60] }, { types: ['text'] }, { types: ['histogram'], histogramRollups: [60] }]) : undefined;
  const on = [];
  const off = [];
  const base = [];
  const looks = [];
  /** CPU ms per apply, by the times array it goes with: the CLI's, and the node hosts' meanwhile. */
  const cpu = new Map([on, off, base].map((t) => [t, { cli: /** @type {number[]} */ ([]), hosts: /** @type {number[]} */ ([]) }]));
  const hostCpu = () => hostPids.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0) * 1000;
  const dispatcher = createAgent();
  const clients = urls.map((u) => new NodeClient(u, { dispatcher }));
  // RETENTION_BENCH_BASELINE=<an older checkout, built>: its apply with receipt, in the same rounds.
  const baseRoot = process.env.RETENTION_BENCH_BASELINE;
  const baseBin = baseRoot ? join(baseRoot, 'bin', 'tsnode.js') : undefined;
  for (let r = 0; r <= RUNS; r++) {
    for (const [times, args, want, bin] of /** @type {Array<[number[], string[], boolean, string]>} */ ([
      [on, [], true, BIN],
      [off, ['--no-receipt'], false, BIN],
      ...(baseBin ? [[base, [], true, baseBin]] : []),
    ])) {
      await Promise.all(urls.map((u) => seed(u, counts)));
      if (times === on) {
        // Two looks, as the run takes them, on the data the run will remove.
        const t = performance.now();
        for (let k = 0; k < 2; k++) await takeLook(clients, { concurrency: 16, now: () => Date.now(), ...(scope ? { scope } : {}) });
        if (r > 0) looks.push(performance.now() - t);
      }
      const h0 = hostCpu();
      const ms = cliApply(urls, stateDir, args, bin);
      const hosts = hostCpu() - h0;
      if (lastRunHasReceipt(stateDir) !== want) throw new Error(`a run ${want ? 'without' : 'with'} a receipt: ${args.join(' ') || 'default'}`);
      if (r > 0) {
        times.push(ms);
        cpu.get(times)?.cli.push(lastCliCpuMs);
        cpu.get(times)?.hosts.push(hosts);
      }
    }
  }
  await dispatcher.close();
  const cpuOf = (/** @type {number[]} */ t) => {
    const c = cpu.get(t);
    return c && c.cli.length ? { cli: median(c.cli), hosts: median(c.hosts), total: median(c.cli.map((x, i) => x + c.hosts[i])) } : null;
  };
  return {
    on: median(on),
    off: median(off),
    base: base.length ? median(base) : null,
    looks: median(looks),
    onAll: on,
    offAll: off,
    baseAll: base,
    cpuOn: cpuOf(on),
    cpuOff: cpuOf(off),
    cpuBase: cpuOf(base),
  };
}

/** The barrier: every node's DELETE for step k, then poll every node until all are idle, then step k+1. */
async function barrier(urls, cutoffs) {
  const idle = async (u) => {
    const s = /** @type {any} */ (await (await fetch(`${u}/sweep_delete`)).json());
    return TYPES.every((t) => s[t].running === 'false');
  };
  for (const [k, type] of TYPES.entries()) {
    const headers = { 'X-Service-Delete-Time': String(cutoffs[k]), 'X-Service-Delete-Data-Types': type };
    if (type !== 'text') headers[`X-Service-${type === 'nnt' ? 'NNT' : 'Histogram'}-Delete-Rollups`] = '60';
    await Promise.all(
      urls.map(async (u) => {
        const r = await fetch(`${u}/sweep_delete`, { method: 'DELETE', headers });
        if ((await r.text()).trim() !== '[]') throw new Error(`${u}: DELETE not started`);
      }),
    );
    let waiting = [...urls];
    for (;;) {
      await new Promise((r) => setTimeout(r, 100));
      const still = await Promise.all(waiting.map(async (u) => ((await idle(u)) ? null : u)));
      waiting = still.filter(Boolean);
      if (waiting.length === 0) break;
    }
  }
}

/** The barrier script as its own process (as a shell loop would be), timed from spawn to exit. */
function barrierProcess(urls) {
  const now = Math.floor(Date.now() / 1000);
  const cutoffs = [now - 30 * DAY, now - 90 * DAY, now - 365 * DAY];
  const start = performance.now();
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--barrier', JSON.stringify({ urls, cutoffs })], { encoding: 'utf8' });
  const ms = performance.now() - start;
  if (r.status !== 0) throw new Error(`barrier exited ${r.status}: ${r.stderr}`);
  return ms;
}

async function main() {
  const RUNS = Number(process.env.RETENTION_BENCH_RUNS ?? 5);
  const PACE = Number(process.env.RETENTION_BENCH_PACE_MS ?? 20);
  const SERIES = Number(process.env.RETENTION_BENCH_SERIES ?? 50);
  const MIN_PACE = Number(process.env.RETENTION_BENCH_SKEW_MIN_PACE_MS ?? 5);
  const HEAVY = Number(process.env.RETENTION_BENCH_HEAVY ?? 50);
  const LIGHT = Number(process.env.RETENTION_BENCH_LIGHT ?? 3);
  const stateDir = mkdtempSync(join(process.env.RETENTION_BENCH_STATE_DIR ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir()), 'tsnode-retention-bench-'));
  const load0 = loadavg();
  const t0 = performance.now();
  const uniform = await hostNodes(Array(100).fill(PACE));
  const skewPaces = Array.from({ length: 100 }, (_, i) => Math.round(MIN_PACE * 10 ** (i / 99) * 10) / 10);
  const only = process.env.RETENTION_BENCH_ONLY;
  const skewed = only === 'uniform' || only === 'receipts' ? { hosts: [], urls: [] } : await hostNodes(skewPaces);
  console.log(
    `started ${uniform.urls.length + skewed.urls.length} in-process nodes in ${uniform.hosts.length + skewed.hosts.length} processes in ${Math.round(performance.now() - t0)} ms; 3-step policy ${RULES.filter((x) => x !== '--rule').join(' ')}; poll interval 100 ms\n` +
      `uniform: pace ${PACE} ms/series, ${SERIES} series of each type on every node (~${PACE * SERIES} ms per step)\n` +
      `skewed: paces ${MIN_PACE}..${MIN_PACE * 10} ms/series (10x, geometric); node i: ${HEAVY} series of type i mod 3 (nnt, text, histogram), ${LIGHT} of the others\n` +
      `run files and journal in ${stateDir}`,
  );

  const uniformCounts = { nnt: SERIES, text: SERIES, histogram: SERIES };
  const skewCounts = (i) => Object.fromEntries(TYPES.map((t, k) => [t, k === i % 3 ? HEAVY : LIGHT]));

  const results = [];
  const measure = async (what, urls, counts, fn) => {
    const times = [];
    for (let r = 0; r <= RUNS; r++) {
      await Promise.all(urls.map((u, i) => seed(u, counts(i))));
      const ms = await fn();
      if (r > 0) times.push(ms); // the first run warms up
    }
    results.push({ what, median: median(times), min: Math.min(...times) });
    return median(times);
  };

  let u1 = NaN;
  let u100 = NaN;
  let b100u = NaN;
  if (only !== 'skewed' && only !== 'receipts') {
    u1 = await measure(
      'apply, 1 node (uniform)',
      uniform.urls.slice(0, 1),
      () => uniformCounts,
      () => cliApply(uniform.urls.slice(0, 1), stateDir),
    );
    await measure(
      'apply, 10 nodes (uniform)',
      uniform.urls.slice(0, 10),
      () => uniformCounts,
      () => cliApply(uniform.urls.slice(0, 10), stateDir),
    );
    u100 = await measure(
      'apply, 100 nodes (uniform)',
      uniform.urls,
      () => uniformCounts,
      () => cliApply(uniform.urls, stateDir),
    );
    b100u = await measure(
      'barrier, 100 nodes (uniform)',
      uniform.urls,
      () => uniformCounts,
      () => barrierProcess(uniform.urls),
    );
  }
  let receipts = null;
  if (only === undefined || only === 'receipts')
    receipts = await receiptsCost(
      uniform.urls,
      uniformCounts,
      stateDir,
      RUNS,
      uniform.hosts.map((h) => h.child.pid),
    );
  const skew = [];
  if (only !== 'uniform' && only !== 'receipts') {
    // 10 nodes across the pace range, and all 100
    const s10 = skewPaces.map((_, i) => i).filter((i) => i % 11 === 0);
    const s10urls = s10.map((i) => skewed.urls[i]);
    const a10 = await measure(
      'apply, 10 nodes (skewed)',
      s10urls,
      (k) => skewCounts(s10[k]),
      () => cliApply(s10urls, stateDir),
    );
    const b10 = await measure(
      'barrier, 10 nodes (skewed)',
      s10urls,
      (k) => skewCounts(s10[k]),
      () => barrierProcess(s10urls),
    );
    const a100 = await measure('apply, 100 nodes (skewed)', skewed.urls, skewCounts, () => cliApply(skewed.urls, stateDir));
    const b100 = await measure('barrier, 100 nodes (skewed)', skewed.urls, skewCounts, () => barrierProcess(skewed.urls));
    skew.push([10, a10, b10], [100, a100, b100]);
  }
  const load1 = loadavg();

  console.log('');
  console.log('| run | median ms | min ms |');
  console.log('|---|---:|---:|');
  for (const r of results) console.log(`| ${r.what} | ${r.median.toFixed(0)} | ${r.min.toFixed(0)} |`);
  console.log('');
  if (receipts) {
    const cost = receipts.on / receipts.off - 1;
    console.log(
      `receipts, 100 nodes (uniform): apply ${receipts.on.toFixed(0)} ms with, ${receipts.off.toFixed(0)} ms without (--no-receipt): +${(cost * 100).toFixed(1)}% (target < 10%) ${cost < 0.1 ? 'OK' : 'MISSED'}; ` +
        `the two looks alone ${receipts.looks.toFixed(0)} ms (${((receipts.looks / receipts.off) * 100).toFixed(1)}% of an apply without them); ` +
        `runs with: ${receipts.onAll.map((x) => x.toFixed(0)).join(', ')}; without: ${receipts.offAll.map((x) => x.toFixed(0)).join(', ')}`,
    );
    const cpuLine = (/** @type {string} */ what, /** @type {{ cli: number, hosts: number, total: number } | null} */ c) =>
      c ? `${what} ${c.total.toFixed(0)} ms (CLI ${c.cli.toFixed(0)} + node hosts ${c.hosts.toFixed(0)})` : `${what} not measured`;
    if (receipts.cpuOn && receipts.cpuOff) {
      console.log(
        `receipts, CPU per apply (medians): ${cpuLine('with', receipts.cpuOn)}; ${cpuLine('without', receipts.cpuOff)}: ` +
          `+${((receipts.cpuOn.total / receipts.cpuOff.total - 1) * 100).toFixed(1)}%` +
          (receipts.cpuBase
            ? `; ${cpuLine('baseline build with', receipts.cpuBase)}: +${((receipts.cpuBase.total / receipts.cpuOff.total - 1) * 100).toFixed(1)}% over this build without`
            : ''),
      );
    }
    // Each round runs its applies back to back: a ratio within a round shares that moment's load.
    const paired = (/** @type {number[]} */ a, /** @type {number[]} */ b) => median(a.map((x, i) => x / b[i]));
    console.log(
      `receipts, per-round ratios (medians): with / without ${paired(receipts.onAll, receipts.offAll).toFixed(3)}` +
        (receipts.baseAll.length
          ? `; baseline with / this build without ${paired(receipts.baseAll, receipts.offAll).toFixed(3)}; this build with / baseline with ${paired(receipts.onAll, receipts.baseAll).toFixed(3)}`
          : ''),
    );
    if (receipts.base !== null) {
      console.log(
        `baseline build (${process.env.RETENTION_BENCH_BASELINE}) apply with receipt ${receipts.base.toFixed(0)} ms: +${((receipts.base / receipts.off - 1) * 100).toFixed(1)}% over this build without; ` +
          `this build with / baseline with: ${(receipts.on / receipts.base).toFixed(2)}x; baseline runs: ${receipts.baseAll.map((x) => x.toFixed(0)).join(', ')}`,
      );
    }
  }
  if (only !== 'skewed' && only !== 'receipts') {
    const scale = u100 / u1;
    console.log(`apply 100 nodes / 1 node (uniform): ${scale.toFixed(2)}x (target <= 1.25x) ${scale <= 1.25 ? 'OK' : 'MISSED'}`);
    console.log(`barrier / apply, 100 nodes, uniform: ${(b100u / u100).toFixed(2)}x (same data everywhere: expected to tie, ~1x)`);
  }
  for (const [n, a, b] of skew) {
    const speedup = b / a;
    console.log(`barrier / apply, ${n} nodes, skewed: ${speedup.toFixed(2)}x faster (target >= 1.3x) ${speedup >= 1.3 ? 'OK' : 'MISSED'}`);
  }
  console.log(
    `load average (1, 5, 15 min) before: ${load0.map((x) => x.toFixed(2)).join(', ')}; after: ${load1.map((x) => x.toFixed(2)).join(', ')} (2 cores shared with other work: compare ratios within one run)`,
  );
  for (const h of [...uniform.hosts, ...skewed.hosts]) h.child.stdin.end();
  rmSync(stateDir, { recursive: true, force: true });
}

// (last: main() uses the helpers above, which must be defined first)
if (process.argv[2] === '--host') {
  const { startServer } = await import('../dist/server/server.js');
  const paces = JSON.parse(process.argv[3]);
  const nodes = [];
  for (const sweepPaceMs of paces) nodes.push(await startServer({ host: '127.0.0.1', port: 0, sweepPaceMs }));
  process.stdout.write(`${JSON.stringify(nodes.map((x) => x.url))}\n`);
  process.stdin.on('end', async () => {
    await Promise.all(nodes.map((x) => x.close()));
    process.exit(0);
  });
  process.stdin.resume();
} else if (process.argv[2] === '--barrier') {
  const { urls, cutoffs } = JSON.parse(process.argv[3]);
  await barrier(urls, cutoffs);
} else {
  await main();
}

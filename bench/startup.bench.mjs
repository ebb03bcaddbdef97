// Startup time of the CLI. Two parts:
// 1. `tsnode --version` and `tsnode --help` must stay well under 150 ms (median), which they can
//    only do while command declarations stay light and actions load lazily. `node -e 0` is the
//    floor: what Node itself costs on this machine.
// 2. The fixed cost of a command that does one small thing against a real local node (a one-record
//    `write`, a 7-row `read -o csv`): what caps `read -o csv` against a plain GET and `write`
//    against the node's own ingest rate for small runs. Wall and CPU (user + system, measured by the
//    process itself) medians. BENCH_BASELINE_BIN=/path/to/an/older/bin/tsnode.js runs that build's
//    commands too, interleaved, and prints the ratios.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CLIENT_CPU_HOOK } from './proc-cpu.mjs';

const BIN = fileURLToPath(new URL('../bin/tsnode.js', import.meta.url));
const BASELINE = process.env.BENCH_BASELINE_BIN;
const RUNS = Number(process.env.RUNS ?? 20);
const BUDGET_MS = 150;
const U = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const T0 = 1_700_000_100;
const dir = mkdtempSync(join(tmpdir(), 'tsnode-startup-bench-'));
const cpuFile = join(dir, 'cpu');

/** One run: wall ms from spawn to exit, and the CPU ms the process reports for itself. */
function time(args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['--import', CLIENT_CPU_HOOK, ...args], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', TSNODE_BENCH_CPU: cpuFile },
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, cpu: Number(readFileSync(cpuFile, 'utf8')) / 1000 };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function startNode() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', '--memory', '--host', '127.0.0.1', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) resolve({ url: m[1], child });
    });
    child.once('exit', (code) => reject(new Error(`node exited ${code}`)));
  });
}

const node = await startNode();
try {
  writeFileSync(join(dir, 'one.ndjson'), `${JSON.stringify({ metric: 'cpu', id: U, offset: T0, count: 1, value: 1 })}\n`);
  const write = ['write', 'one.ndjson', '--node', node.url];
  const read = ['read', U, 'cpu', '--node', node.url, '--start', String(T0 - 200), '--end', String(T0 + 300), '--span', '60s', '-o', 'csv'];
  const builds = [['', BIN], ...(BASELINE ? [[' (baseline)', BASELINE]] : [])];
  const cases = /** @type {[string, string[]][]} */ ([
    ['node -e 0', ['-e', '0']],
    ...builds.flatMap(([tag, bin]) => [
      [`tsnode --version${tag}`, [bin, '--version']],
      [`tsnode --help${tag}`, [bin, '--help']],
      [`tsnode sweep --help${tag}`, [bin, 'sweep', '--help']],
      [`tsnode write, 1 record${tag}`, [bin, ...write]],
      [`tsnode read -o csv, 7 rows${tag}`, [bin, ...read]],
    ]),
  ]);

  // Round-robin, so a burst of load on this shared machine hits every command alike.
  for (const [, args] of cases) time(args); // warm the file cache
  const samples = cases.map(() => /** @type {{ ms: number; cpu: number }[]} */ ([]));
  for (let i = 0; i < RUNS; i++) cases.forEach(([, args], c) => samples[c].push(time(args)));
  const rows = cases.map(([name], c) => ({
    name,
    median: median(samples[c].map((s) => s.ms)),
    min: Math.min(...samples[c].map((s) => s.ms)),
    cpu: median(samples[c].map((s) => s.cpu)),
  }));
  const floor = rows[0];
  console.log(`runs per command: ${RUNS}; budget for tsnode --version/--help: ${BUDGET_MS} ms median; node ${node.url}`);
  console.log('| command | median ms | min ms | CPU ms | over node -e 0 (wall / CPU) |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(`| ${r.name} | ${r.median.toFixed(1)} | ${r.min.toFixed(1)} | ${r.cpu.toFixed(1)} | ${(r.median - floor.median).toFixed(1)} / ${(r.cpu - floor.cpu).toFixed(1)} |`);
  }
  if (BASELINE) {
    console.log('\n| command | baseline -> this build, wall ms | CPU ms | CPU saved | ratio (CPU) |');
    console.log('|---|---:|---:|---:|---:|');
    for (const r of rows.filter((x) => x.name.startsWith('tsnode') && !x.name.endsWith('(baseline)'))) {
      const b = rows.find((x) => x.name === `${r.name} (baseline)`);
      if (!b) continue;
      console.log(
        `| ${r.name} | ${b.median.toFixed(1)} -> ${r.median.toFixed(1)} | ${b.cpu.toFixed(1)} -> ${r.cpu.toFixed(1)} | ${(b.cpu - r.cpu).toFixed(1)} | ${(r.cpu / b.cpu).toFixed(2)} |`,
      );
    }
  }
  const over = rows.filter((r) => /^tsnode (--version|--help|sweep --help)$/.test(r.name) && r.median > BUDGET_MS);
  if (over.length) {
    console.log(`\nover budget: ${over.map((r) => r.name).join(', ')}`);
    process.exitCode = 1;
  }
} finally {
  node.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}

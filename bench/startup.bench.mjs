// Startup time of the CLI: `tsnode --version` and `tsnode --help` must stay well under 150 ms
// (median), which they can only do while command declarations stay light and actions load lazily.
// `node -e 0` is the floor: what Node itself costs on this machine.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/tsnode.js', import.meta.url));
const RUNS = Number(process.env.RUNS ?? 20);
const BUDGET_MS = 150;

const cases = /** @type {[string, string[]][]} */ ([
  ['node -e 0', ['-e', '0']],
  ['tsnode --version', [BIN, '--version']],
  ['tsnode --help', [BIN, '--help']],
  ['tsnode sweep --help', [BIN, 'sweep', '--help']],
]);

function time(args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// Round-robin, so a burst of load on this shared machine hits every command alike.
for (const [, args] of cases) time(args); // warm the file cache
const samples = cases.map(() => /** @type {number[]} */ ([]));
for (let i = 0; i < RUNS; i++) cases.forEach(([, args], c) => samples[c].push(time(args)));
const rows = cases.map(([name], c) => ({ name, median: median(samples[c]), min: Math.min(...samples[c]), max: Math.max(...samples[c]) }));
const floor = rows[0].median;
console.log(`runs per command: ${RUNS}; budget for tsnode: ${BUDGET_MS} ms median`);
console.log('| command | median ms | min ms | max ms | over node -e 0 |');
console.log('|---|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.name} | ${r.median.toFixed(1)} | ${r.min.toFixed(1)} | ${r.max.toFixed(1)} | ${(r.median - floor).toFixed(1)} |`);
}
const over = rows.filter((r) => r.name.startsWith('tsnode') && r.median > BUDGET_MS);
if (over.length) {
  console.log(`\nover budget: ${over.map((r) => r.name).join(', ')}`);
  process.exitCode = 1;
}

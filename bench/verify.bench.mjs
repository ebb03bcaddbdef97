#!/usr/bin/env node
// Retention verify and receipts, at 100 nodes whose inventories list 5 numeric periods x 500 shards
// (plus 500 raw and 500 histogram-60 shards).
//
// - verify: `tsnode retention verify` end to end (the CLI's start-up, its GETs to every node, the
//   verdicts, JSON on stdout), target < 1 s; and verifyRetention alone (pure) on the same facts.
// - receipts: what receipts add to a retention apply is exactly two looks at every node's
//   inventories (before the first DELETE, after the last step) and one diff. Measured here as two
//   takeLook calls and makeReceipt over the same 100 nodes; compare with the 100-node apply of
//   bench/retention.bench.mjs (target: receipts < 10% of it).
// The nodes here are small node:http servers answering the store's inventory shapes from memory
// (in a child process, as a cluster's nodes would be other processes): the client side is what is
// measured, and a reference node holding 2,500 shards per node x 100 would take minutes to fill.
// Env: VERIFY_BENCH_RUNS (default 5), VERIFY_BENCH_NODES (100), VERIFY_BENCH_SHARDS (500).
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/tsnode.js', import.meta.url));
const RUNS = Number(process.env.VERIFY_BENCH_RUNS ?? 5);
const NODES = Number(process.env.VERIFY_BENCH_NODES ?? 100);
const SHARDS = Number(process.env.VERIFY_BENCH_SHARDS ?? 500);
const PERIODS = [60, 300, 1800, 10800, 86400];
const DAY = 86_400;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The child: NODES servers answering the inventory endpoints; prints their URLs as one JSON line. */
async function serveNodes() {
  const now = Math.floor(Date.now() / 1000);
  const shards = (size) => Array.from({ length: SHARDS }, (_, i) => ({ start: Math.floor(now / size) * size - (i + 1) * size, end: Math.floor(now / size) * size - i * size }));
  const nnt = JSON.stringify(PERIODS.map((period) => ({ period, shard: shards(DAY).map((s) => ({ block_floor: s.start, 'block:ceiling': s.end, mode: 'online' })) })));
  const startEnd = JSON.stringify(shards(7 * DAY));
  const idle = JSON.stringify({ nnt: { running: 'false' }, text: { running: 'false' }, histogram: { running: 'false' } });
  const urls = [];
  for (let i = 0; i < NODES; i++) {
    const state = JSON.stringify({
      identity: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      nnt: { rollups: PERIODS },
      histogram: { rollups: [60] },
      nntbs: Object.fromEntries(PERIODS.map((p) => [`rollup_${p}`, { fs: { id: 'fs0', totalMB: 100000, freeMB: 50000 } }])),
    });
    const answers = {
      '/state': state,
      '/sweep_delete': idle,
      '/list_nntbs_shards': nnt,
      '/raw/list_shards': startEnd,
      '/histogram_raw/list_shards': '[]',
      '/histogram/60/list_shards': startEnd,
    };
    const server = createServer((req, res) => {
      const body = answers[(req.url ?? '').split('?')[0]];
      res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' }).end(body ?? '{"error":"not found"}');
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
    urls.push(`http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`);
  }
  console.log(JSON.stringify(urls));
}

async function main() {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve'], { stdio: ['pipe', 'pipe', 'inherit'], env: process.env });
  const urls = JSON.parse(await new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve)));
  try {
    const rules = ['--rule', 'nnt:60=30d', '--rule', 'nnt:*=1y', '--rule', 'histogram:60=30d'];
    const cli = [];
    let checks = 0;
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now();
      const out = spawnSync(process.execPath, [BIN, 'retention', 'verify', ...rules, '--nodes', urls.join(','), '-o', 'json'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      cli.push(performance.now() - t0);
      if (out.status !== 3 && out.status !== 0) throw new Error(`verify exited ${out.status}: ${out.stderr.slice(-500)}`);
      checks = JSON.parse(out.stdout).nodes.reduce((n, x) => n + x.checks.length, 0);
    }

    const lib = await import('../dist/index.js');
    const { Agent } = await import('undici');
    const dispatcher = new Agent();
    const clients = urls.map((u) => new lib.NodeClient(u, { dispatcher }));
    const policy = lib.parseRules(rules.filter((_, i) => i % 2 === 1));
    const facts = await lib.gatherRetentionFacts(clients, { histogramPeriods: [60] });
    const pure = [];
    const looks = [];
    for (let r = 0; r < RUNS; r++) {
      let t0 = performance.now();
      lib.verifyRetention(policy, Date.now(), facts);
      pure.push(performance.now() - t0);
      t0 = performance.now();
      const before = await lib.takeLook(clients);
      const after = await lib.takeLook(clients);
      lib.receiptToJson(lib.makeReceipt(before, after, 0));
      looks.push(performance.now() - t0);
    }
    await dispatcher.close();
    const row = (what, ms, target) => console.log(`| ${what} | ${median(ms).toFixed(0)} ms | ${Math.min(...ms).toFixed(0)}-${Math.max(...ms).toFixed(0)} ms | ${target} |`);
    console.log(`${NODES} nodes, ${PERIODS.length} periods x ${SHARDS} shards each (+ raw, histogram 60), ${checks} checks, ${RUNS} runs\n`);
    console.log('| what | median | range | target |\n|---|---|---|---|');
    row('tsnode retention verify, end to end', cli, '< 1000 ms');
    row('verifyRetention alone (pure)', pure, '-');
    row('receipts: two looks + diff', looks, '< 10% of a 100-node apply (bench/retention)');
  } finally {
    child.kill();
  }
}

if (process.argv[2] === '--serve') await serveNodes();
else await main();

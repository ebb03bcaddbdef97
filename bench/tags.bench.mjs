#!/usr/bin/env node
// Tag-query deletes and finds across nodes.
//
// 1. `tsnode delete '<query>' --full --batch 1000 --yes` of 10,000 metrics on each of 10 nodes
//    (10 confirmed calls per node), versus the node-side work alone: the same confirmed
//    DELETE /full/tags calls sent straight from this process, 10 nodes at once, looping while
//    X-Snowth-Incomplete-Results says more remain (no dry run, no after-look, no CLI). Target:
//    under 2x.
// 2. `tsnode find 'and(*:*)' --count` over 100 nodes, wall clock including the CLI's start. Target: < 1 s.
//
// Nodes are real in-process servers (startServer, in-memory SQLite) spread over child processes,
// each its own HTTP server with its own store (as bench/sweep.bench.mjs does). 2 shared cores:
// numbers are noisy, compare the ratio. Env: TAGS_BENCH_RUNS (default 3), TAGS_BENCH_METRICS (10000).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/tsnode.js', import.meta.url));
const UUID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const QUERY = 'and(app:bench)';

if (process.argv[2] === '--host') {
  const { startServer } = await import('../dist/server/server.js');
  const nodes = [];
  for (let i = 0; i < Number(process.argv[3]); i++) nodes.push(await startServer({ host: '127.0.0.1', port: 0 }));
  process.stdout.write(`${JSON.stringify(nodes.map((x) => x.url))}\n`);
  // `flush`: apply every waiting write now, so a timed run does not compete with a background flush of the seed.
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'flush') {
      for (const x of nodes) x.node.store.flush();
      process.stdout.write('flushed\n');
    }
  });
  process.stdin.on('end', async () => {
    await Promise.all(nodes.map((x) => x.close()));
    process.exit(0);
  });
  process.stdin.resume();
} else {
  await main();
}

async function host(count) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--host', String(count)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const first = createInterface({ input: child.stdout });
  const line = await new Promise((resolve, reject) => {
    first.once('line', (l) => {
      first.close();
      resolve(l);
    });
    child.once('exit', (code) => reject(new Error(`node host exited with ${code}`)));
  });
  const lines = createInterface({ input: child.stdout });
  const flush = () =>
    new Promise((resolve) => {
      lines.once('line', resolve);
      child.stdin.write('flush\n');
    });
  return { child, urls: JSON.parse(line), flush };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function seed(urls, metrics) {
  const t = 1_700_000_040;
  await Promise.all(
    urls.map(async (u) => {
      for (let from = 0; from < metrics; from += 5000) {
        const body = JSON.stringify(
          Array.from({ length: Math.min(5000, metrics - from) }, (_, k) => ({ metric: `m${from + k}|ST[app:bench,n:${from + k}]`, id: UUID, offset: t, count: 1, value: 1 })),
        );
        const r = await fetch(`${u}/write/nnt`, { method: 'POST', body });
        if (!r.ok) throw new Error(`seed ${u}: ${r.status} ${await r.text()}`);
      }
    }),
  );
}

/** The node-side work alone: confirmed calls, all nodes at once, each looping while incomplete. */
async function directDeletes(urls) {
  let calls = 0;
  await Promise.all(
    urls.map(async (u) => {
      for (;;) {
        const r = await fetch(`${u}/full/tags?query=${encodeURIComponent(QUERY)}`, {
          method: 'DELETE',
          headers: { 'x-snowth-account-id': '1', 'x-snowth-confirm-delete': '1', 'x-snowth-advisory-limit': '1000' },
        });
        await r.text();
        calls++;
        if (r.headers.get('x-snowth-incomplete-results') !== 'true') return;
      }
    }),
  );
  return calls;
}

function cli(args, stateDir) {
  const t = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, XDG_STATE_HOME: stateDir, NO_COLOR: '1' }, maxBuffer: 256 * 1024 * 1024 });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`tsnode ${args[0]} exited ${r.status}: ${r.stderr.slice(-2000)} ${r.stdout.slice(0, 3000)}`);
  return { ms, stdout: r.stdout };
}

async function main() {
  const RUNS = Number(process.env.TAGS_BENCH_RUNS ?? 3);
  const METRICS = Number(process.env.TAGS_BENCH_METRICS ?? 10_000);
  const stateDir = mkdtempSync(join(tmpdir(), 'tsnode-tags-bench-'));
  const hosts = await Promise.all([host(5), host(5)]);
  const ten = hosts.flatMap((h) => h.urls);
  try {
    const direct = [];
    const viaCli = [];
    for (let run = 0; run < RUNS; run++) {
      await seed(ten, METRICS);
      await Promise.all(hosts.map((h) => h.flush()));
      const t = performance.now();
      await directDeletes(ten);
      direct.push(performance.now() - t);
      await seed(ten, METRICS);
      await Promise.all(hosts.map((h) => h.flush()));
      const r = cli(['delete', QUERY, '--full', '--batch', '1000', '--yes', '--nodes', ten.join(','), '-o', 'json', '-q'], stateDir);
      const out = JSON.parse(r.stdout);
      if (out.exit !== 0 || out.nodes.some((n) => n.deleted !== METRICS))
        throw new Error(`delete did not delete everything: ${JSON.stringify(out.nodes.map((n) => [n.state, n.deleted]))}`);
      viaCli.push(r.ms);
    }
    const d = median(direct);
    const c = median(viaCli);
    console.log(`delete ${METRICS} metrics x 10 nodes, batch 1000 (${RUNS} runs, medians):`);
    console.log(`  node-side work alone (direct confirmed calls):  ${Math.round(d)} ms`);
    console.log(`  tsnode delete (dry run + delete + after-look):  ${Math.round(c)} ms   ratio ${(c / d).toFixed(2)}x (target < 2x)`);
  } finally {
    for (const h of hosts) h.child.stdin.end();
  }

  const many = await Promise.all(Array.from({ length: 4 }, () => host(25)));
  const hundred = many.flatMap((h) => h.urls);
  try {
    await seed(hundred, 200);
    await Promise.all(many.map((h) => h.flush()));
    const times = [];
    for (let run = 0; run < 5; run++) {
      const r = cli(['find', 'and(*:*)', '--count', '--nodes', hundred.join(','), '-o', 'json', '-q'], stateDir);
      if (JSON.parse(r.stdout).total !== 100 * 200) throw new Error('find --count: wrong total');
      times.push(r.ms);
    }
    console.log(`find --count over 100 nodes (200 metrics each), wall clock with the CLI's start, median of 5: ${Math.round(median(times))} ms (target < 1000 ms)`);
    // The same fan-out in process (no CLI start): what the command adds on top of Node's start.
    const { countAcross } = await import('../dist/client/tag-find.js');
    const { NodeClient } = await import('../dist/client/node-client.js');
    const { Agent } = await import('undici');
    const agent = new Agent();
    const lib = [];
    for (let run = 0; run < 5; run++) {
      const clients = hundred.map((u) => new NodeClient(u, { dispatcher: agent }));
      const t = performance.now();
      await countAcross(clients, { query: 'and(*:*)', account: 1 });
      lib.push(performance.now() - t);
    }
    await agent.close();
    const bare = [];
    for (let run = 0; run < 5; run++) bare.push(cli(['--version'], stateDir).ms);
    console.log(`  of which: the fan-out in process ${Math.round(median(lib))} ms; \`tsnode --version\` alone ${Math.round(median(bare))} ms`);
  } finally {
    for (const h of many) h.child.stdin.end();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

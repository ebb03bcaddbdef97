#!/usr/bin/env node
// Cluster sweep + wait: `tsnode sweep` across 1, 10 and 100 reference nodes, versus a sequential
// curl loop over the same 100 nodes (DELETE, then poll each with curl until idle).
//
// Hosting: 100 separate `tsnode serve` processes would cost ~100 x 60 MB and seconds of startup on
// a 2-core machine, so the nodes are real in-process servers (the server's own `startServer`,
// in-memory SQLite), spread over HOSTS child processes (this file re-run with `--host N`). Every
// node is still its own HTTP server on its own port with its own store and sweeper.
//
// Every run re-seeds each node with SERIES checks (one old and one new record each), so each sweep
// walks and deletes real data. Each node's sweeper pauses PACE ms per check (`--sweep-pace`): on a
// real cluster every node sweeps on its own machine, so a sweep takes time without costing the
// others CPU; 100 nodes sharing 2 cores here could not show that otherwise. With the defaults one
// node's sweep takes ~25 x 20 ms = 0.5 s. The CLI and the curl loop use the same 100 ms poll interval.
// Env: SWEEP_BENCH_RUNS (default 5), SWEEP_BENCH_SERIES (default 25), SWEEP_BENCH_PACE_MS (default 20),
// SWEEP_BENCH_CURL_RUNS (default 1).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/tsnode.js', import.meta.url));

if (process.argv[2] === '--host') {
  const { startServer } = await import('../dist/server/server.js');
  const n = Number(process.argv[3]);
  const sweepPaceMs = Number(process.argv[4] ?? 0);
  const nodes = [];
  for (let i = 0; i < n; i++) nodes.push(await startServer({ host: '127.0.0.1', port: 0, sweepPaceMs }));
  process.stdout.write(`${JSON.stringify(nodes.map((x) => x.url))}\n`);
  process.stdin.on('end', async () => {
    await Promise.all(nodes.map((x) => x.close()));
    process.exit(0);
  });
  process.stdin.resume();
} else {
  await main();
}

async function host(count, pace) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--host', String(count), String(pace)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`node host exited with ${code}`)));
  });
  return { child, urls: JSON.parse(line) };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function main() {
  const RUNS = Number(process.env.SWEEP_BENCH_RUNS ?? 5);
  const CURL_RUNS = Number(process.env.SWEEP_BENCH_CURL_RUNS ?? 1);
  const SERIES = Number(process.env.SWEEP_BENCH_SERIES ?? 25);
  const PACE = Number(process.env.SWEEP_BENCH_PACE_MS ?? 20);
  const HOSTS = 4;
  const stateDir = mkdtempSync(join(tmpdir(), 'tsnode-sweep-bench-'));
  const t0 = performance.now();
  const hosts = await Promise.all(Array.from({ length: HOSTS }, () => host(25, PACE)));
  const all = hosts.flatMap((h) => h.urls);
  console.log(
    `started ${all.length} in-process nodes in ${HOSTS} processes in ${Math.round(performance.now() - t0)} ms; ${SERIES} checks per node, sweep pace ${PACE} ms/check (~${SERIES * PACE} ms per sweep); poll interval 100 ms; default --concurrency 32`,
  );

  const now = Math.floor(Date.now() / 1000);
  const before = now - 86_400 - ((now - 86_400) % 3600);
  const body = JSON.stringify(
    Array.from({ length: SERIES }, (_, i) =>
      [before - 600, before + 600].map((offset) => ({ metric: 'cpu', id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, offset, count: 1, value: i })),
    ).flat(),
  );
  const seed = (urls) =>
    Promise.all(
      urls.map(async (u) => {
        // A kept-alive socket the node closed meanwhile can reset: writes replace, so try again.
        for (let attempt = 1; ; attempt++) {
          try {
            const r = await fetch(`${u}/write/nnt`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
            if (!r.ok) throw new Error(`seeding ${u}: ${r.status} ${await r.text()}`);
            return;
          } catch (err) {
            if (attempt >= 3) throw err;
          }
        }
      }),
    );

  const cli = async (urls) => {
    await seed(urls);
    const start = performance.now();
    const r = spawnSync(process.execPath, [BIN, 'sweep', '--before', String(before), '--nodes', urls.join(','), '--yes', '--output', 'json', '--poll-interval', '100ms'], {
      encoding: 'utf8',
      // Its own state dir: the benchmark's throwaway sweeps stay out of the operator's `tsnode history`.
      env: { ...process.env, NO_COLOR: '1', XDG_STATE_HOME: stateDir },
    });
    const ms = performance.now() - start;
    if (r.status !== 0) throw new Error(`tsnode sweep exited ${r.status}: ${r.stderr}`);
    const doc = JSON.parse(r.stdout);
    if (doc.summary.done !== urls.length) throw new Error(`not all done: ${JSON.stringify(doc.summary)}`);
    return ms;
  };

  const script = `
set -e
for u in "$@"; do
  curl -sf -X DELETE -H "X-Service-Delete-Time: ${before}" -H "X-Service-Delete-Data-Types: nnt" "$u/sweep_delete" >/dev/null
  while curl -sf "$u/sweep_delete" | grep -q '"running":"true"'; do sleep 0.1; done
done`;
  const curlLoop = async (urls) => {
    await seed(urls);
    const start = performance.now();
    const r = spawnSync('bash', ['-c', script, 'curl-loop', ...urls], { encoding: 'utf8' });
    const ms = performance.now() - start;
    if (r.status !== 0) throw new Error(`curl loop exited ${r.status}: ${r.stderr}`);
    return ms;
  };

  const results = [];
  for (const n of [1, 10, 100]) {
    // Spread the nodes of a run over the host processes, as a real cluster spreads over machines.
    const urls = Array.from({ length: n }, (_, i) => hosts[i % HOSTS].urls[Math.floor(i / HOSTS)]);
    await cli(urls); // warm-up
    const times = [];
    for (let i = 0; i < RUNS; i++) times.push(await cli(urls));
    results.push({ what: `tsnode sweep, ${n} node${n === 1 ? '' : 's'}`, n, median: median(times), min: Math.min(...times) });
  }
  const curlTimes = [];
  for (let i = 0; i < CURL_RUNS; i++) curlTimes.push(await curlLoop(all));
  results.push({ what: 'curl loop, 100 nodes (sequential)', n: 100, median: median(curlTimes), min: Math.min(...curlTimes) });

  console.log('');
  console.log('| run | median ms | min ms |');
  console.log('|---|---:|---:|');
  for (const r of results) console.log(`| ${r.what} | ${r.median.toFixed(0)} | ${r.min.toFixed(0)} |`);
  const one = results[0].median;
  const hundred = results[2].median;
  const curl = results[3].median;
  const scale = hundred / one;
  const speedup = curl / hundred;
  console.log('');
  console.log(`100 nodes / 1 node wall time: ${scale.toFixed(2)}x (target <= 1.5x) ${scale <= 1.5 ? 'OK' : 'MISSED'}`);
  console.log(`curl loop / tsnode on 100 nodes: ${speedup.toFixed(1)}x faster (target >= 20x) ${speedup >= 20 ? 'OK' : 'MISSED'}`);
  for (const h of hosts) h.child.stdin.end();
  rmSync(stateDir, { recursive: true, force: true });
}

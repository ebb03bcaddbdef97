#!/usr/bin/env node
// What the replication-lag checks add to a 100-node sweep: the preflight (lagCheck: every node's
// /state and /replication/json) and the after-run look (markLateData: the same again, and each
// finished node's sweep status). Target: both together under 100 ms.
//
// Hosting: 100 light nodes in a child process (this file re-run with `--host`), each its own HTTP
// server on its own port answering what a replicating ring node answers to these reads: `/state`
// with `max_peer_lag`, `/replication/json` with a journal entry for each of its 99 peers, and an
// idle `/sweep_delete` whose last sweep completed. The client side is the library the CLI runs
// (dist/), with its own connection pool as a sweep has one. Medians of RUNS (default 15) after a
// cold run (new connections), shown apart; and the client's own CPU per run, which load from
// other processes distorts far less than wall time.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const NODES = Number(process.env.NODES ?? 100);
const RUNS = Number(process.env.RUNS ?? 15);

async function host() {
  const ids = Array.from({ length: NODES }, () => randomUUID());
  const ports = [];
  for (let i = 0; i < NODES; i++) {
    const state = JSON.stringify({ identity: ids[i], current: '-', next: '-', max_peer_lag: 0, avg_peer_lag: 0 });
    const replication = JSON.stringify({
      peers: ids
        .filter((_, k) => k !== i)
        .map((id) => ({ id, url: 'http://127.0.0.1:0', pending: 0, bytes: 0, oldest_offset: null, lag_seconds: 0, paused: false, last_error: null, dead_letters: 0 })),
      received: { clients: 0, peers: 0 },
    });
    const last = { running: 'false', last_timestamp: '1700000000', last_result: 'completed', last_late_records: '0' };
    const sweep = JSON.stringify({ nnt: last, text: { running: 'false' }, histogram: { running: 'false' } });
    const server = createServer((req, res) => {
      const body = req.url === '/state' ? state : req.url === '/replication/json' ? replication : req.url === '/sweep_delete' ? sweep : null;
      res.writeHead(body === null ? 404 : 200, { 'content-type': 'application/json' });
      res.end(body ?? '{"error":"not found","code":"not_found"}');
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
    ports.push(/** @type {import('node:net').AddressInfo} */ (server.address()).port);
  }
  process.stdout.write(`${JSON.stringify(ports.map((p) => `http://127.0.0.1:${p}`))}\n`);
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

async function main() {
  const { NodeClient, createAgent } = await import('../dist/index.js');
  // Internal steps of the run core, not the public API: the bench times them alone.
  const { lagCheck, markLateData } = await import('../dist/client/sweep-lag.js');
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--host'], { stdio: ['pipe', 'pipe', 'inherit'] });
  /** @type {string[]} */
  const urls = await new Promise((resolve) => createInterface({ input: /** @type {import('node:stream').Readable} */ (child.stdout) }).once('line', (l) => resolve(JSON.parse(l))));
  const agent = createAgent();
  try {
    const clients = urls.map((u) => new NodeClient(u, { dispatcher: agent }));
    /** @type {import('../dist/index.js').NodeSweepResult[]} */
    const finished = urls.map((node) => ({ node, state: /** @type {const} */ ('done'), reason: 'the node reports the sweep completed' }));
    let cpuMs = 0;
    /** Wall ms; adds this process's CPU ms to cpuMs. */
    const time = async (f) => {
      const t = performance.now();
      const c = process.cpuUsage();
      await f();
      const u = process.cpuUsage(c);
      cpuMs += (u.user + u.system) / 1000;
      return performance.now() - t;
    };
    const pre = async () => {
      // The check reads nothing of the preflight it is given: the ring and the swept nodes are its own.
      const problems = await lagCheck(clients, urls)(/** @type {any} */ ({}));
      if (problems.length) throw new Error(`the preflight refused: ${problems[0].message}`);
    };
    const after = async () => {
      const r = await markLateData(finished, clients, ['nnt']);
      if (!r.report.checked || r.nodes.some((n) => n.state !== 'done')) throw new Error('the after-run look did not find every node done and checked');
    };
    const cold = { pre: await time(pre), after: await time(after) };
    const runs = [];
    cpuMs = 0;
    for (let i = 0; i < RUNS; i++) runs.push({ pre: await time(pre), after: await time(after) });
    const cpuPerRun = cpuMs / RUNS;
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const m = { pre: median(runs.map((r) => r.pre)), after: median(runs.map((r) => r.after)), both: median(runs.map((r) => r.pre + r.after)) };
    const load = loadavg()[0];
    console.log(`${NODES} light replicating nodes (one child process), ${RUNS} runs after a cold one; load average ${load.toFixed(1)}\n`);
    console.log('| check | cold ms | median ms |');
    console.log('|---|---:|---:|');
    console.log(`| preflight (lagCheck: /state + /replication/json per node) | ${cold.pre.toFixed(1)} | ${m.pre.toFixed(1)} |`);
    console.log(`| after-run look (markLateData: the same + /sweep_delete) | ${cold.after.toFixed(1)} | ${m.after.toFixed(1)} |`);
    console.log(`| both | ${(cold.pre + cold.after).toFixed(1)} | ${m.both.toFixed(1)} |`);
    console.log(`\nclient CPU for both checks: ${cpuPerRun.toFixed(1)} ms per run (mean of ${RUNS}; the nodes' CPU is the other process's)`);
    console.log(
      `lag checks on a ${NODES}-node sweep: ${m.both.toFixed(1)} ms median wall (target < 100 ms: ${m.both < 100 ? 'met' : 'NOT met'}; load average ${load.toFixed(1)} on ${cpus().length} cores)`,
    );
  } finally {
    await agent.close();
    child.stdin?.end();
  }
}

if (process.argv[2] === '--host') await host();
else await main();

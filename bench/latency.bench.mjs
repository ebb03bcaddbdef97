// Latency of the cheap requests while the node is busy: 16 writers (batches of 500 records, each
// to a series of its own), one reader of a hot series (the one writer 0 writes, read whole at
// 300 s), and a poller of the sweep status, all at once against a real `tsnode serve` on disk.
// The target (issue 13): status GET p99 under 100 ms. Reads and sweeps used to finish every
// waiting write first, in one block: p99 435 ms. BENCH_SECONDS sets the duration (default 15);
// BENCH_BIN another tsnode (e.g. an older checkout's bin/tsnode.js) to compare; BENCH_NODE_ARGS
// node flags for the server (e.g. --cpu-prof); BENCH_NICE its nice level.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';

const BIN = process.env.BENCH_BIN ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'tsnode.js');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const WRITERS = 16;
const BATCH = 500;
const UUID = '1a7e0000-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const T0 = Math.floor((Date.now() / 1000 - 60 * 86_400) / 300) * 300;

const dir = mkdtempSync(join(tmpdir(), 'tsnode-latency-'));
// BENCH_NICE=-10 (root) runs the node ahead of other work on a shared machine, as on a host of its own.
const nice = process.env.BENCH_NICE;
const argv = [...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []), BIN, 'serve', '--port', '0', '--data-dir', dir];
const child = nice
  ? spawn('nice', ['-n', nice, process.execPath, ...argv], { stdio: ['ignore', 'pipe', 'inherit'] })
  : spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve, reject) => {
  createInterface({ input: child.stdout }).on('line', (l) => {
    const m = /listening on (http:\/\/\S+)/.exec(l);
    if (m) resolve(m[1]);
  });
  child.once('exit', (c) => reject(new Error(`node exited ${c}`)));
});

// The writers run in a process of their own: a client busy building JSON would delay the
// answers it measures.
const WRITER_CODE = `
const { Agent, request } = await import(${JSON.stringify(import.meta.resolve('undici'))});
const [url, seconds] = [process.argv[1], Number(process.argv[2])];
const dispatcher = new Agent({ connections: ${WRITERS} });
const until = Date.now() + seconds * 1000;
const written = new Array(${WRITERS}).fill(0);
let overloaded = 0;
await Promise.all(Array.from({ length: ${WRITERS} }, async (_, w) => {
  while (Date.now() < until) {
    const from = written[w];
    // Built as text (not objects and JSON.stringify): the client must leave the CPU to the node.
    let body = '[';
    for (let k = 0; k < ${BATCH}; k++) body += (k ? ',' : '') + '{"metric":"lat.m' + w + '","id":"${UUID}","offset":' + (${T0} + (from + k) * 60) + ',"count":1,"value":' + (from + k) + '}';
    body += ']';
    const res = await request(url + '/write/nnt', { method: 'POST', body, dispatcher });
    await res.body.dump();
    // 503: more is waiting than the node applies (its back-pressure). Retried after a pause, as
    // tsnode write does, so the load goes on instead of this writer dying with it.
    if (res.statusCode === 503) { overloaded++; await new Promise((r) => setTimeout(r, 50)); continue; }
    if (res.statusCode !== 200) throw new Error('write answered ' + res.statusCode);
    written[w] += ${BATCH};
    if (w === 0) process.stdout.write(written[0] + '\\n');
  }
}));
await dispatcher.close();
console.log('total ' + written.reduce((a, b) => a + b, 0) + ' ' + overloaded);
`;
const writer = spawn(process.execPath, ['--input-type=module', '-e', WRITER_CODE, url, String(SECONDS)], { stdio: ['ignore', 'pipe', 'inherit'] });
let hot = 0;
let records = 0;
let overloaded = 0;
createInterface({ input: writer.stdout }).on('line', (l) => {
  if (l.startsWith('total ')) [records, overloaded] = l.slice(6).split(' ').map(Number);
  else hot = Number(l);
});
const writersDone = new Promise((r) => writer.once('exit', r));

const dispatcher = new Agent({ connections: 4 });
const until = Date.now() + SECONDS * 1000;
const statusMs = [];
const readMs = [];
const reader = (async () => {
  while (Date.now() < until) {
    const t = performance.now();
    const end = T0 + (hot + 1) * 60;
    const res = await request(`${url}/rollup/${UUID}/lat.m0?start_ts=${T0}.000&end_ts=${end}.000&rollup_span=300s`, { dispatcher });
    await res.body.dump();
    readMs.push(performance.now() - t);
  }
})();
const poller = (async () => {
  while (Date.now() < until) {
    const t = performance.now();
    const res = await request(`${url}/sweep_delete`, { dispatcher });
    await res.body.dump();
    statusMs.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 10));
  }
})();
await Promise.all([reader, poller, writersDone]);
await dispatcher.close();
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
rmSync(dir, { recursive: true, force: true });

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const row = (name, xs) => `| ${name} | ${xs.length} | ${pct(xs, 50).toFixed(1)} | ${pct(xs, 95).toFixed(1)} | ${pct(xs, 99).toFixed(1)} | ${Math.max(...xs).toFixed(1)} |`;
// A writer that died took the load away: the figures below would describe an idle node.
const writerExit = await writersDone;
if (writerExit !== 0 || records === 0) {
  console.error(`the writers failed (exit ${writerExit}, ${records} records written): no measurement`);
  process.exit(1);
}
console.log(
  `${WRITERS} writers wrote ${records} records in ${SECONDS} s (${Math.round(records / SECONDS)} records/s; ${overloaded} batches answered 503 overloaded and were retried) while:`,
);
console.log('| request | count | p50 ms | p95 ms | p99 ms | max ms |');
console.log('|---|---|---|---|---|---|');
console.log(row('GET /sweep_delete (status)', statusMs));
console.log(row('GET /rollup of the hot series (300 s, whole range)', readMs));

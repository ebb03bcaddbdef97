// Memory the reference node keeps per distinct series: 200,000 series (BENCH_SERIES) written
// over HTTP to a real `tsnode serve` process, one record each, in 5,000-record batches, then
// every flush waited for (--trace-flush). Reported per series: the growth of the node process's
// RSS from just after its start (what the operator sees: the V8 heap, the young generation grown
// to its maximum, the SQLite page cache (--cache-size, 8 MiB unless BENCH_NODE_ARGS says otherwise),
// and what malloc keeps; not the ~75 MiB a started, empty node holds), and its parts: the V8 heap
// used after a forced GC, the heap V8 keeps, memory outside the heap (ArrayBuffers, Buffers).
// Also the node's CPU seconds from the first write to the last flush (the many-series ingest cost).
// BENCH_BASELINE_BIN=/path/to/bin/tsnode.js measures another build the same way in the same run;
// BENCH_NODE_ARGS adds serve flags to this build's node, variants split by ';' each measured in
// turn (e.g. ";--cache-size 64MiB": the default, then a 64 MiB page cache).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { cpuSecondsOf } from './proc-cpu.mjs';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'tsnode.js');
const SERIES = Number(process.env.BENCH_SERIES ?? 200_000);
const BATCH = 5000;
const T = 1_700_006_400 - (1_700_006_400 % 60);
/** Quiet time after the last flush before the node is measured: no flush started meanwhile. */
const QUIET_MS = 3000;

/** A node whose memory this process can read: a small loader prints it on SIGUSR2, after a full GC. */
async function startNode(bin, args) {
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-bench-mem-'));
  const probe = `process.on('SIGUSR2', () => { globalThis.gc(); globalThis.gc(); const m = process.memoryUsage(); process.stderr.write('MEM ' + JSON.stringify(m) + '\\n'); });`;
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', `data:text/javascript,${encodeURIComponent(probe)}`, bin, 'serve', '--port', '0', '--data-dir', dir, '--trace-flush', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const mems = [];
  const flushes = { started: 0, done: 0, last: performance.now(), failed: '' };
  createInterface({ input: child.stderr }).on('line', (l) => {
    if (l.startsWith('MEM ')) mems.push(JSON.parse(l.slice(4)));
    else if (l.includes('flush {"event":"start"')) [flushes.started, flushes.last] = [flushes.started + 1, performance.now()];
    else if (l.includes('flush {"event":"done"')) [flushes.done, flushes.last] = [flushes.done + 1, performance.now()];
    else if (l.includes('flush {"event":"failed"')) flushes.failed = l;
  });
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (l) => {
      const m = /listening on (http:\/\/\S+)/.exec(l);
      if (m) resolve(m[1]);
    });
    child.once('exit', (c) => reject(new Error(`node exited ${c}`)));
  });
  return {
    url,
    /** CPU seconds the node process has used so far (Linux /proc; NaN elsewhere). */
    cpuSeconds: () => cpuSecondsOf(child.pid),
    async memory() {
      const n = mems.length;
      child.kill('SIGUSR2');
      while (mems.length === n) await new Promise((r) => setTimeout(r, 20));
      return mems[n];
    },
    /** Every flush done, and none started for QUIET_MS (the flush timer runs every 2 s). */
    async flushed() {
      while (flushes.started !== flushes.done || performance.now() - flushes.last < QUIET_MS) {
        if (flushes.failed) throw new Error(`a flush failed: ${flushes.failed}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const uuid = (i) => `${(0x10000000 + (i % 1000)).toString(16)}-0000-4000-8000-000000000000`;

async function measure(bin, args) {
  const node = await startNode(bin, args);
  const dispatcher = new Agent({ connections: 2 });
  const before = await node.memory();
  const cpu0 = node.cpuSeconds();
  for (let i = 0; i < SERIES; i += BATCH) {
    const recs = [];
    for (let j = i; j < Math.min(SERIES, i + BATCH); j++) recs.push({ metric: `m${Math.floor(j / 1000)}.series`, id: uuid(j), offset: T, count: 1, value: j });
    const res = await request(`${node.url}/write/nnt`, { method: 'POST', dispatcher, body: JSON.stringify(recs), headers: { 'content-type': 'application/json' } });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`write failed: ${res.statusCode}`);
  }
  await node.flushed();
  const cpu = node.cpuSeconds() - cpu0;
  const after = await node.memory();
  await dispatcher.close();
  await node.stop();
  return {
    heap: (after.heapUsed - before.heapUsed) / SERIES,
    heapTotal: (after.heapTotal - before.heapTotal) / SERIES,
    external: (after.external + after.arrayBuffers - before.external - before.arrayBuffers) / SERIES,
    rss: (after.rss - before.rss) / SERIES,
    rssMiB: (after.rss - before.rss) / 2 ** 20,
    cpu,
  };
}

const variants = (process.env.BENCH_NODE_ARGS ?? '').split(';').map((v) => v.split(' ').filter(Boolean));
const builds = [
  ...variants.map((args) => [`this build${args.length ? ` (${args.join(' ')})` : ''}`, BIN, args]),
  ...(process.env.BENCH_BASELINE_BIN ? [['baseline', process.env.BENCH_BASELINE_BIN, []]] : []),
];
console.log(`series: ${SERIES.toLocaleString('en')}, one record each, every flush done; growth per series from a started node (budget: RSS under 512 B)`);
console.log('| build | RSS B/series | RSS growth | heap used B/series | heap kept B/series | outside the heap B/series | node CPU s, writes + flushes |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const [name, bin, args] of builds) {
  const m = await measure(bin, args);
  console.log(
    `| ${name} | ${Math.round(m.rss)} | ${m.rssMiB.toFixed(0)} MiB | ${Math.round(m.heap)} | ${Math.round(m.heapTotal)} | ${Math.round(m.external)} | ${m.cpu.toFixed(1)} |`,
  );
}

// Memory the reference node keeps per distinct series: 200,000 series (BENCH_SERIES) written
// over HTTP to a real `tsnode serve` process, one record each, in 5,000-record batches; the node's
// heap (after a forced GC, read through the inspector-free --expose-gc hook) and RSS before and
// after, divided by the series count. BENCH_BASELINE_BIN=/path/to/bin/tsnode.js measures
// another build the same way in the same run (old vs new).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'tsnode.js');
const SERIES = Number(process.env.BENCH_SERIES ?? 200_000);
const BATCH = 5000;
const T = 1_700_006_400 - (1_700_006_400 % 60);

/** A node whose heap this process can read: a small loader prints it on SIGUSR2. */
async function startNode(bin) {
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-bench-mem-'));
  const probe = `process.on('SIGUSR2', () => { globalThis.gc(); globalThis.gc(); const m = process.memoryUsage(); process.stderr.write('MEM ' + JSON.stringify(m) + '\\n'); });`;
  const child = spawn(process.execPath, ['--expose-gc', '--import', `data:text/javascript,${encodeURIComponent(probe)}`, bin, 'serve', '--port', '0', '--data-dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const mems = [];
  createInterface({ input: child.stderr }).on('line', (l) => {
    if (l.startsWith('MEM ')) mems.push(JSON.parse(l.slice(4)));
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
    async memory() {
      const n = mems.length;
      child.kill('SIGUSR2');
      while (mems.length === n) await new Promise((r) => setTimeout(r, 20));
      return mems[n];
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const uuid = (i) => `${(0x10000000 + (i % 1000)).toString(16)}-0000-4000-8000-000000000000`;

async function measure(bin) {
  const node = await startNode(bin);
  const dispatcher = new Agent({ connections: 2 });
  const before = await node.memory();
  for (let i = 0; i < SERIES; i += BATCH) {
    const recs = [];
    for (let j = i; j < Math.min(SERIES, i + BATCH); j++) recs.push({ metric: `m${Math.floor(j / 1000)}.series`, id: uuid(j), offset: T, count: 1, value: j });
    const res = await request(`${node.url}/write/nnt`, { method: 'POST', dispatcher, body: JSON.stringify(recs), headers: { 'content-type': 'application/json' } });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`write failed: ${res.statusCode}`);
  }
  // Let the flush apply everything, then measure what stays.
  await new Promise((r) => setTimeout(r, Number(process.env.BENCH_SETTLE_MS ?? 5000)));
  const after = await node.memory();
  await dispatcher.close();
  await node.stop();
  return {
    heapTotal: (after.heapTotal - before.heapTotal) / SERIES,
    heap: (after.heapUsed - before.heapUsed) / SERIES,
    external: (after.external + after.arrayBuffers - before.external - before.arrayBuffers) / SERIES,
    rss: (after.rss - before.rss) / SERIES,
  };
}

const builds = [['this build', BIN], ...(process.env.BENCH_BASELINE_BIN ? [['baseline', process.env.BENCH_BASELINE_BIN]] : [])];
console.log(`series: ${SERIES.toLocaleString('en')}, one record each; bytes per series kept after GC (budget: heap under 512)`);
console.log('| build | heap used B/series | heap total B/series | external B/series | RSS B/series |');
console.log('|---|---:|---:|---:|---:|');
for (const [name, bin] of builds) {
  const m = await measure(bin);
  console.log(`| ${name} | ${Math.round(m.heap)} | ${Math.round(m.heapTotal)} | ${Math.round(m.external)} | ${Math.round(m.rss)} |`);
}

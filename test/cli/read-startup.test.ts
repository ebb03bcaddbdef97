/**
 * What `tsnode read -o csv` loads, and in what order (bench/read.bench.mjs: a year of 300 s
 * buckets within 1.5x of a plain GET to a file). Checked on the built bin against a real
 * reference node, by a module-loader hook that records every module and when the rollup request
 * left: zod (the answer schemas) is never loaded when the answers pass their hand checks, nor
 * are tables, colours and charts for CSV, and the printing side loads only once the request is on its way.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/client/agent.js';
import { NodeClient } from '../../src/client/node-client.js';
import { binLayout } from '../helpers/bin-layout.js';
import { runCli } from '../helpers/cli.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';

const U = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const T0 = 1_700_000_100;
const dir = mkdtempSync(join(tmpdir(), 'tsnode-read-startup-'));
const log = join(dir, 'loaded.txt');
let node: TestNode;
// The order of loads is watched on the ESM build (a copy of the bin without the CLI bundle, whose
// modules initialise at the same points but load nothing a hook could see).
const ESM_BIN = binLayout({ bundle: false });

// The hooks run on the loader's thread: each loaded module (ES or CommonJS through `import`) and
// each CommonJS require is one line, in order; the main thread adds a line when the rollup request is created.
writeFileSync(
  join(dir, 'hooks.mjs'),
  `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, 'load ' + url + '\\n'); return next(url, context); }`,
);
writeFileSync(
  join(dir, 'preload.mjs'),
  `import { register, createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
import dc from 'node:diagnostics_channel';
register(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});
const Module = createRequire(import.meta.url)('node:module');
const load = Module._load;
Module._load = function (request, parent, isMain) { appendFileSync(${JSON.stringify(log)}, 'require ' + request + ' from ' + (parent && parent.filename) + '\\n'); return load.apply(this, arguments); };
dc.subscribe('undici:request:create', ({ request }) => appendFileSync(${JSON.stringify(log)}, 'request ' + request.path + '\\n'));`,
);

beforeAll(async () => {
  node = await startNode({ memory: true, rollups: [300] });
  const agent = createAgent();
  try {
    const rows = Array.from({ length: 50 }, (_, i) => ({
      metric: 'cpu',
      id: U,
      offset: T0 + i * 300,
      count: 1,
      value: i / 3,
      stddev: 0,
      derivative: 0,
      counter: 0,
      derivative_stddev: 0,
      counter_stddev: 0,
    }));
    await new NodeClient(node.url, { dispatcher: agent }).writeNnt(rows);
  } finally {
    await agent.close();
  }
});
afterAll(async () => {
  await stopAllNodes();
  rmSync(dir, { recursive: true, force: true });
  rmSync(dirname(dirname(ESM_BIN)), { recursive: true, force: true });
});

describe('tsnode read -o csv: what it loads', () => {
  it('no zod, no tables, colours or charts; the printing side only after the rollup request left', async () => {
    writeFileSync(log, '');
    const r = await runCli(['read', U, 'cpu', '--node', node.url, '--start', String(T0), '--end', String(T0 + 50 * 300), '--span', '300s', '-o', 'csv', '--retries', '0'], {
      env: { NODE_OPTIONS: `--import ${pathToFileURL(join(dir, 'preload.mjs')).href}`, NO_COLOR: '1' },
      bin: ESM_BIN,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\r\n')).toHaveLength(52); // header, 50 rows, the empty rest
    const lines = readFileSync(log, 'utf8').split('\n');
    const sent = lines.findIndex((l) => l.startsWith('request /rollup/'));
    expect(sent, 'the rollup request was seen').toBeGreaterThan(0);
    expect(lines.filter((l) => l.includes('/node_modules/zod/'))).toEqual([]);
    // CSV draws no table, colour or chart: their modules are never loaded.
    for (const never of ['/node_modules/chalk/', 'cli-table3', '/dist/cli/render/table.js', '/dist/cli/render/chart.js', '/dist/cli/render/painter.js']) {
      expect(
        lines.filter((l) => l.includes(never)),
        never,
      ).toEqual([]);
    }
    const before = lines.slice(0, sent);
    for (const late of [
      '/node_modules/chalk/',
      'cli-table3',
      '/dist/cli/render/table.js',
      '/dist/cli/render/chart.js',
      '/dist/cli/render/rollup.js',
      '/dist/cli/commands/read/render.js',
    ]) {
      expect(
        before.filter((l) => l.includes(late)),
        late,
      ).toEqual([]);
    }
    // ...and they did load afterwards, so the hook saw what it should.
    expect(lines.slice(sent).some((l) => l.includes('/dist/cli/commands/read/render.js'))).toBe(true);
  });

  it("turns off the TurboFan tier-up of WebAssembly (undici's llhttp) before anything is parsed, and TurboFan while modules load", async () => {
    // V8 has no API to read a flag back: record what the process asks for, and when.
    const flags = join(dir, 'flags.txt');
    writeFileSync(flags, '');
    writeFileSync(
      join(dir, 'flags.cjs'),
      `const v8 = require('node:v8'); const fs = require('node:fs'); const set = v8.setFlagsFromString;
v8.setFlagsFromString = (f) => { fs.appendFileSync(${JSON.stringify(flags)}, f + ' ' + (typeof WebAssembly === 'object' && require.cache[require.resolve('undici/lib/llhttp/llhttp_simd-wasm.js', { paths: [${JSON.stringify(join(__dirname, '..', '..'))}] })] ? 'late' : 'early') + '\\n'); return set(f); };`,
    );
    const r = await runCli(['read', U, 'cpu', '--node', node.url, '--start', String(T0), '--end', String(T0 + 600), '--span', '300s', '-o', 'csv', '--retries', '0'], {
      env: { NODE_OPTIONS: `--require ${join(dir, 'flags.cjs')}` },
    });
    expect(r.code, r.stderr).toBe(0);
    // ...and grows the young generation faster, and keeps TurboFan off while the modules load
    // (bin/tsnode.js says why): run() turns it back on, once, before the command does its work.
    const asked = readFileSync(flags, 'utf8').trim().split('\n');
    expect(asked.slice(0, -1).sort()).toEqual(['--no-turbofan early', '--no-wasm-dynamic-tiering early', '--no-wasm-tier-up early', '--semi-space-growth-factor=8 early']);
    expect(asked.at(-1)).toBe('--turbofan early');
  });
});

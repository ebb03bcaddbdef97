#!/usr/bin/env node
// The V8 code cache of the CLI bundle (dist/tsnode.cjs.cache): the bytecode of the functions a
// typical start runs, so a run deserialises them instead of compiling them from source.
// V8 puts into a cache only the functions compiled when it is made, and checks the V8 version and
// flags when it is used; so the cache is made by the bin itself (TSNODE_MAKE_CODE_CACHE: the same
// loader and flags as every run) running what users run most: `--help`, a one-record write and a
// small `read -o csv` against a throw-away in-memory reference node. Each run loads the cache the
// previous one wrote and writes it again with what it compiled on top, so the last holds all three.
// Made after the bundle by `npm run build`. Without a cache the CLI still works, only slower:
// a failure here warns and leaves none.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'tsnode.js');
const CACHE = join(root, 'dist', 'tsnode.cjs.cache');
const U = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const T0 = 1_700_000_100;

const work = mkdtempSync(join(tmpdir(), 'tsnode-code-cache-'));
// Nothing of the builder's own set-up (profiles, TSNODE_* settings, colour) steers the runs.
const env = { PATH: process.env.PATH ?? '', HOME: work, XDG_CONFIG_HOME: join(work, 'config'), XDG_STATE_HOME: join(work, 'state'), NO_COLOR: '1' };

function startNode() {
  const child = spawn(process.execPath, [BIN, 'serve', '--memory', '--host', '127.0.0.1', '--port', '0'], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the reference node did not start in 20 s: ${err}`)), 20_000);
    child.once('exit', (code) => reject(new Error(`the reference node exited ${code}: ${err}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child });
      }
    });
  });
}

function runForCache(args) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: work, env: { ...env, TSNODE_MAKE_CODE_CACHE: CACHE }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tsnode ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
}

rmSync(CACHE, { force: true });
let node;
try {
  node = await startNode();
  writeFileSync(join(work, 'one.ndjson'), `${JSON.stringify({ metric: 'cpu', id: U, offset: T0, count: 1, value: 1 })}\n`);
  runForCache(['--help']);
  runForCache(['write', 'one.ndjson', '--node', node.url]);
  runForCache(['read', U, 'cpu', '--node', node.url, '--start', String(T0 - 300), '--end', String(T0 + 300), '--span', '60s', '-o', 'csv']);
  process.stderr.write(`code cache: ${CACHE} (${(statSync(CACHE).size / 1024).toFixed(0)} KiB)\n`);
} catch (err) {
  rmSync(CACHE, { force: true });
  process.stderr.write(`warning: no code cache for the CLI bundle (tsnode starts slower): ${err instanceof Error ? err.message : String(err)}\n`);
} finally {
  node?.child.kill();
  rmSync(work, { recursive: true, force: true });
}

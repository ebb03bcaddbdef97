/**
 * What a small `tsnode write` and `tsnode read` pay before and after their one request: the fixed
 * start-up cost that caps the speed targets of `read -o csv` and `write` (bench/startup.bench.mjs
 * times them). Checked on the built bin against a real reference node by a preload that records
 * (a) every call that sets up ICU (toLocaleString, localeCompare, Intl: 5-20 ms of CPU for the
 * first call of a process) and (b) the Node built-ins the process loaded.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { makePki } from '../helpers/tls.js';

const U = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const T0 = 1_700_000_100;
const dir = mkdtempSync(join(tmpdir(), 'tsnode-startup-cost-'));
const report = join(dir, 'report.json');
const preload = join(dir, 'preload.cjs');
let node: TestNode;

// Wraps what sets up ICU so each call is recorded (with its caller), and at exit writes those
// calls and the public built-ins in process.moduleLoadList.
writeFileSync(
  preload,
  `const fs = require('node:fs');
const calls = [];
const caller = () => (new Error().stack.split('\\n')[3] || '').trim();
const wrap = (obj, name, label) => {
  const orig = obj[name];
  obj[name] = function (...args) { calls.push(label + ' ' + caller()); return orig.apply(this, args); };
};
wrap(Number.prototype, 'toLocaleString', 'Number#toLocaleString');
wrap(BigInt.prototype, 'toLocaleString', 'BigInt#toLocaleString');
wrap(String.prototype, 'localeCompare', 'String#localeCompare');
for (const m of ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString']) wrap(Date.prototype, m, 'Date#' + m);
for (const k of ['NumberFormat', 'Collator', 'DateTimeFormat', 'PluralRules', 'Segmenter', 'ListFormat', 'RelativeTimeFormat']) {
  const C = Intl[k];
  if (!C) continue;
  const trap = () => calls.push('Intl.' + k + ' ' + caller());
  Intl[k] = new Proxy(C, { construct(t, a, n) { trap(); return Reflect.construct(t, a, n); }, apply(t, self, a) { trap(); return Reflect.apply(t, self, a); } });
}
let stdinRead = false;
const stdin = Object.getOwnPropertyDescriptor(process, 'stdin');
Object.defineProperty(process, 'stdin', { ...stdin, get() { stdinRead = true; return stdin.get.call(this); } });
process.on('exit', () => {
  const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
  fs.writeFileSync(${JSON.stringify(report)}, JSON.stringify({ calls, builtins, stdinRead }));
});
`,
);

interface Report {
  calls: string[];
  builtins: string[];
  /** Whether anything read process.stdin (Node builds the stream then: ~3 ms). */
  stdinRead: boolean;
}

async function costOf(args: string[]): Promise<Report> {
  rmSync(report, { force: true });
  const r = await runCli(args, { env: { NODE_OPTIONS: `--require ${preload}` }, cwd: dir });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(readFileSync(report, 'utf8')) as Report;
}

beforeAll(async () => {
  node = await startNode({ memory: true });
  writeFileSync(join(dir, 'one.ndjson'), `${JSON.stringify({ metric: 'cpu', id: U, offset: T0, count: 1, value: 1 })}\n`);
});
afterAll(async () => {
  await stopAllNodes();
  rmSync(dir, { recursive: true, force: true });
});

describe('the fixed start-up cost of a small write and read', () => {
  // Built-ins neither a plain write nor a read to an http:// node uses (undici's HTTP/2 side and
  // TLS, gzip for a plain file): each one left out is a few ms of every start.
  const UNUSED = ['http2', 'tls', 'zlib', 'tty'];

  it('a one-record write sets up no ICU (its summary groups thousands itself) and loads no unused built-in', async () => {
    const { calls, builtins, stdinRead } = await costOf(['write', 'one.ndjson', '--node', node.url]);
    expect(calls).toEqual([]);
    // ...nor hashing: the state file's temporary name is not random (replay/private-file.ts).
    expect(builtins.filter((b) => [...UNUSED, 'crypto'].includes(b))).toEqual([]);
    expect(stdinRead).toBe(false);
    expect(builtins).toContain('http'); // the list is real
  });

  it('a small read -o csv sets up no ICU and loads no unused built-in', async () => {
    const { calls, builtins, stdinRead } = await costOf([
      'read',
      U,
      'cpu',
      '--node',
      node.url,
      '--start',
      String(T0 - 300),
      '--end',
      String(T0 + 300),
      '--span',
      '60s',
      '-o',
      'csv',
    ]);
    expect(calls).toEqual([]);
    // ...nor hashing: a read from one node places no metric on a ring (ring/placement.ts).
    expect(builtins.filter((b) => [...UNUSED, 'crypto'].includes(b))).toEqual([]);
    expect(stdinRead).toBe(false);
  });

  it('a write from standard input still reads it', async () => {
    rmSync(report, { force: true });
    const line = JSON.stringify({ metric: 'cpu', id: U, offset: T0 + 60, count: 1, value: 2 });
    const r = await runCli(['write', '-', '--node', node.url, '--rejects', join(dir, 'stdin.rejects'), '--state', join(dir, 'stdin.state')], {
      env: { NODE_OPTIONS: `--require ${preload}` },
      cwd: dir,
      input: `${line}\n`,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr + r.stdout).toMatch(/wrote 1 /);
    expect((JSON.parse(readFileSync(report, 'utf8')) as Report).stdinRead).toBe(true);
  });

  it('the recorder sees the calls that do set up ICU', () => {
    rmSync(report, { force: true });
    const r = spawnSync(process.execPath, ['--require', preload, '-e', "(1234).toLocaleString('en-US'); 'a'.localeCompare('b'); new Intl.Collator()"]);
    expect(r.status, String(r.stderr)).toBe(0);
    const { calls, builtins } = JSON.parse(readFileSync(report, 'utf8')) as Report;
    expect(calls.map((c) => c.split(' ')[0])).toEqual(['Number#toLocaleString', 'String#localeCompare', 'Intl.Collator']);
    expect(builtins).toContain('fs');
  });
});

// The agent defers undici's HTTP/2 side (client/agent.ts deferHttp2). What must hold: nothing loads
// node:http2 until a connection negotiates h2, and then h2 works, whether our agent module or
// undici's index (MockAgent and all, as tests load it) came first.
describe("undici's HTTP/2 side, deferred", () => {
  const root = join(__dirname, '..', '..');
  const script = join(dir, 'h2.mjs');
  writeFileSync(
    script,
    `import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
const require = createRequire(${JSON.stringify(join(root, 'package.json'))});
const loaded = (m) => process.moduleLoadList.includes('NativeModule ' + m);
const out = {};
if (process.env.ORDER === 'undici-first') require('undici');
const { createAgent } = await import(${JSON.stringify(pathToFileURL(join(root, 'dist', 'client', 'agent.js')).href)});
createAgent().close();
out.http2BeforeH2 = loaded('http2');
const undici = require('undici');
const mock = new undici.MockAgent();
mock.disableNetConnect();
mock.get('http://mocked.invalid').intercept({ path: '/x' }).reply(200, 'mocked');
out.mock = await (await undici.request('http://mocked.invalid/x', { dispatcher: mock })).body.text();
const http2 = await import('node:http2');
const server = http2.createSecureServer({ cert: readFileSync(process.env.CERT), key: readFileSync(process.env.KEY) }, (req, res) => res.end('over ' + req.httpVersion));
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const Client = require('undici/lib/dispatcher/client');
const client = new Client('https://127.0.0.1:' + server.address().port, { allowH2: true, connect: { ca: readFileSync(process.env.CA) } });
out.h2 = await (await client.request({ path: '/', method: 'GET' })).body.text();
await client.close();
server.close();
console.log(JSON.stringify(out));
`,
  );
  const pki = makePki();

  for (const order of ['agent-first', 'undici-first']) {
    it(`${order}: no node:http2 until h2 is spoken; then h2 and MockAgent work`, () => {
      const r = spawnSync(process.execPath, [script], { encoding: 'utf8', env: { ...process.env, ORDER: order, CERT: pki.serverCert, KEY: pki.serverKey, CA: pki.caCert } });
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ http2BeforeH2: order === 'undici-first', mock: 'mocked', h2: 'over 2.0' });
    });
  }
});

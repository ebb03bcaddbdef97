/**
 * The CLI starts from one CommonJS bundle (dist/tsnode.cjs) compiled with the V8 code cache the
 * build made for it (scripts/build-bundle.mjs, scripts/make-code-cache.mjs, bin/tsnode.js). Every
 * other CLI test spawns the bin and so runs the bundle; these check that the bundle and its cache
 * are what runs, and that the bin still runs right without them: no bundle, a cache V8 refuses,
 * a bundle older than the ESM build. TSNODE_DEBUG_STARTUP=1 makes the bin say which way it went.
 */
import { rmSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binLayout } from '../helpers/bin-layout.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';

const U = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const T0 = 1_700_000_100;
const DEBUG = { TSNODE_DEBUG_STARTUP: '1' };
const dir = mkdtempSync(join(tmpdir(), 'tsnode-bundle-test-'));
const layouts: string[] = [];
let node: TestNode;

function layout(opts: Parameters<typeof binLayout>[0]): string {
  const bin = binLayout(opts);
  layouts.push(dirname(dirname(bin)));
  return bin;
}

/** The bin's own line about its start, and the rest of stderr. */
function startup(r: CliResult): { path: string | undefined; rest: string } {
  const line = /^tsnode startup: (.*)\n/m.exec(r.stderr);
  return { path: line?.[1], rest: r.stderr.replace(/^tsnode startup: .*\n/m, '') };
}

const readArgs = (): string[] => ['read', U, 'cpu', '--node', node.url, '--start', String(T0 - 300), '--end', String(T0 + 300), '--span', '60s', '-o', 'csv'];

beforeAll(async () => {
  node = await startNode({ memory: true });
  writeFileSync(join(dir, 'one.ndjson'), `${JSON.stringify({ metric: 'cpu', id: U, offset: T0, count: 1, value: 1 })}\n`);
});
afterAll(async () => {
  await stopAllNodes();
  for (const d of [dir, ...layouts]) rmSync(d, { recursive: true, force: true });
});

describe('the CLI bundle and its code cache', () => {
  it("the built bin runs the bundle with the build's code cache accepted: --help, a write, a read", async () => {
    for (const args of [['--help'], ['write', 'one.ndjson', '--node', node.url], readArgs()]) {
      const r = await runCli(args, { env: DEBUG, cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      expect(startup(r).path, args[0]).toBe('bundle, code cache accepted');
    }
  });

  it('without the bundle the bin runs the ESM build, and every command prints the same', async () => {
    const esm = layout({ bundle: false });
    const cases = [
      ['--help'],
      ['write', '--help'],
      readArgs(),
      ['write', 'missing.ndjson', '--node', node.url],
      ['wirte', '--node', node.url],
      ['read', U, 'cpu', '--span', 'ten'],
    ];
    for (const args of cases) {
      const bundled = await runCli(args, { env: DEBUG, cwd: dir });
      const plain = await runCli(args, { env: DEBUG, cwd: dir, bin: esm });
      expect(startup(bundled).path).toBe('bundle, code cache accepted');
      expect(startup(plain).path).toBe('esm (no bundle)');
      // Log lines carry the time of day: compare them without it.
      const noClock = (s: string): string => s.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /g, '');
      expect({ code: plain.code, stdout: plain.stdout, stderr: noClock(startup(plain).rest) }, args.join(' ')).toEqual({
        code: bundled.code,
        stdout: bundled.stdout,
        stderr: noClock(startup(bundled).rest),
      });
    }
  });

  it('a cache V8 refuses (other V8 flags, or not a cache at all) costs speed, not correctness', async () => {
    const expected = await runCli(readArgs(), { cwd: dir });
    expect(expected.code, expected.stderr).toBe(0);
    // --max-old-space-size is part of the flags V8 checks a cache against.
    const otherFlags = await runCli(readArgs(), { env: { ...DEBUG, NODE_OPTIONS: '--max-old-space-size=300' }, cwd: dir });
    const garbage = await runCli(readArgs(), { env: DEBUG, cwd: dir, bin: layout({ bundle: true, cache: Buffer.from('not a code cache') }) });
    const none = await runCli(readArgs(), { env: DEBUG, cwd: dir, bin: layout({ bundle: true }) });
    expect([otherFlags, garbage, none].map((r) => startup(r).path)).toEqual(['bundle, code cache rejected', 'bundle, code cache rejected', 'bundle, code cache absent']);
    for (const r of [otherFlags, garbage, none]) expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 0, stdout: expected.stdout });
  });

  it('in a checkout, a bundle older than the ESM build (tsc run alone after a build) is not used', async () => {
    const bin = layout({ bundle: true, cache: 'built', checkout: true });
    const bundle = join(dirname(dirname(bin)), 'dist', 'tsnode.cjs');
    const r1 = await runCli(['--help'], { env: DEBUG, bin });
    expect(startup(r1).path).toBe('bundle, code cache accepted');
    utimesSync(bundle, new Date(0), new Date(0));
    const r2 = await runCli(['--help'], { env: DEBUG, bin });
    expect(startup(r2).path).toBe('esm (the bundle is older than dist/cli/main.js)');
    expect([r2.code, r2.stdout]).toEqual([0, r1.stdout]);
    // An installed package (no src/) has file times from its unpacking: they decide nothing.
    const installed = layout({ bundle: true, cache: 'built' });
    utimesSync(join(dirname(dirname(installed)), 'dist', 'tsnode.cjs'), new Date(0), new Date(0));
    expect(startup(await runCli(['--help'], { env: DEBUG, bin: installed })).path).toBe('bundle, code cache accepted');
  });

  it('serve, cluster and demo start from the ESM build: their actions are not in the bundle', async () => {
    for (const args of [
      ['serve', '--help'],
      ['cluster', '--help'],
      ['--quiet', 'demo', '--help'],
    ]) {
      const r = await runCli(args, { env: DEBUG });
      expect(r.code).toBe(0);
      expect(startup(r).path).toBe('esm (a command that runs nodes)');
    }
  });

  it('with neither build the bin says to build, for a bundled command and a node-running one alike', async () => {
    const bin = layout({ bundle: false });
    rmSync(join(dirname(dirname(bin)), 'dist', 'cli'));
    for (const args of [['status'], ['serve', '--help']]) {
      const r = await runCli(args, { bin });
      expect([r.code, r.stdout, r.stderr]).toEqual([1, '', 'tsnode is not built yet: run `npm run build` in its directory first.\n']);
    }
  });

  it('--version answers from package.json without loading either build', async () => {
    const r = await runCli(['--version'], { env: DEBUG, bin: layout({ bundle: false }) });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect(startup(r).path).toBeUndefined();
  });
});

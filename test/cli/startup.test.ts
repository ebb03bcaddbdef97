import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { binLayout } from '../helpers/bin-layout.js';
import { BIN } from '../helpers/cli.js';

// The module graph is watched on the ESM build (a copy of the bin without the bundle): a loader
// hook sees each module it loads. The bundle (dist/tsnode.cjs) keeps the same laziness, each
// module initialised where the ESM build would load it; V8's coverage shows which ran (below).
const ESM_BIN = binLayout({ bundle: false });
afterAll(() => rmSync(dirname(dirname(ESM_BIN)), { recursive: true, force: true }));

// A loader hook that reports every module URL the CLI resolves, on fd 2 (hooks run on their own thread).
const hooks = `import { writeSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  writeSync(2, 'LOADED ' + r.url + '\\n');
  return r;
}`;
const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;

function loadedBy(args: string[]): { modules: string[]; status: number | null } {
  const r = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, ESM_BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  const modules = r.stderr
    .split('\n')
    .filter((l) => l.startsWith('LOADED '))
    .map((l) => l.slice('LOADED '.length));
  return { modules, status: r.status };
}

// What `tsnode --help` may never pay for: the startup budget (bench/startup.bench.mjs) depends on it.
// A command's declaration is its command.js and the flag table it shares with its action (options.js).
// Of protocol/, only the import-free lists and grammars (constants.js, units.js) may load.
const HEAVY =
  /node_modules\/(undici|zod|better-sqlite3|ora|cli-table3|chalk)\/|(^|\/)dist\/(client|server|records|replay)\/|(^|\/)dist\/protocol\/(?!units\.js$|constants\.js$)|\/commands\/[^/]+\/(?!command\.js|options\.js)[^/]+\.js$/;

describe('startup stays light', () => {
  it('tsnode --help loads commander and the command declarations only', () => {
    const { modules, status } = loadedBy(['--help']);
    expect(status).toBe(0);
    expect(modules.some((m) => m.includes('/commander/'))).toBe(true); // the hook works
    expect(modules.filter((m) => HEAVY.test(m))).toEqual([]);
  });

  it('every command --help stays light too', () => {
    for (const cmd of ['sweep', 'status', 'read', 'write', 'serve', 'cluster', 'demo', 'completion']) {
      const { modules, status } = loadedBy([cmd, '--help']);
      expect(status, cmd).toBe(0);
      expect(
        modules.filter((m) => HEAVY.test(m)),
        cmd,
      ).toEqual([]);
    }
  });

  it('tsnode --version does not even load commander', () => {
    const { modules, status } = loadedBy(['--version']);
    expect(status).toBe(0);
    expect(modules.filter((m) => m.includes('/commander/') || m.includes('/dist/'))).toEqual([]);
  });
});

/**
 * The modules of the bundle `tsnode <args>` initialised, by the path the bundle names them with
 * (its `// <path>` line before each module): those it runs at load (no initialiser of their own),
 * and those whose initialiser (rolldown's __esmMin for an ES module, __commonJSMin for a CommonJS
 * one) ran, which V8's coverage (NODE_V8_COVERAGE) counts.
 */
function initialisedInBundle(args: string[]): { modules: string[]; status: number | null } {
  const cov = mkdtempSync(join(tmpdir(), 'tsnode-bundle-coverage-'));
  try {
    const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', NODE_V8_COVERAGE: cov } });
    const file = join(dirname(dirname(BIN)), 'dist', 'tsnode.cjs');
    const source = readFileSync(file, 'latin1');
    const script = readdirSync(cov)
      .flatMap((f) => (JSON.parse(readFileSync(join(cov, f), 'utf8')) as { result: CoveredScript[] }).result)
      .find((s) => s.url.endsWith('/dist/tsnode.cjs'));
    if (!script) throw new Error(`no coverage of the bundle: ${r.stderr}`);
    const ran = script.functions.filter((f) => f.ranges[0]!.count > 0).map((f) => f.ranges[0]!.startOffset);
    const modules: string[] = [];
    const marker = /^\/\/ (\S.*)$/gm;
    const sections = [...source.matchAll(marker)].map((m, i, all) => ({ path: m[1]!, from: m.index, to: all[i + 1]?.index ?? source.length }));
    for (const { path, from, to } of sections) {
      const wrapper = /__(esmMin|commonJSMin)\(/.exec(source.slice(from, to));
      if (!wrapper) modules.push(path);
      else if (ran.some((at) => at > from + wrapper.index && at < from + wrapper.index + 40)) modules.push(path);
    }
    return { modules, status: r.status };
  } finally {
    rmSync(cov, { recursive: true, force: true });
  }
}

interface CoveredScript {
  url: string;
  functions: { ranges: { startOffset: number; count: number }[] }[];
}

describe('the bundle stays as lazy as the ESM build', () => {
  it('tsnode --help and every bundled command --help initialise no heavy module', () => {
    // (serve, cluster and demo start from the ESM build: bin/tsnode.js.)
    for (const args of [['--help'], ...['sweep', 'status', 'read', 'write', 'completion'].map((c) => [c, '--help'])]) {
      const { modules, status } = initialisedInBundle(args);
      expect(status, args.join(' ')).toBe(0);
      expect(
        modules.some((m) => m.includes('/commander/')),
        args.join(' '),
      ).toBe(true); // the reading works
      expect(
        modules.filter((m) => HEAVY.test(m)),
        args.join(' '),
      ).toEqual([]);
    }
  });

  it('and the reading sees a heavy module when a command does initialise it', () => {
    const { modules, status } = initialisedInBundle(['write', 'missing.ndjson', '--node', 'http://127.0.0.1:9']);
    expect(status).not.toBe(0);
    expect(modules.filter((m) => /(^|\/)dist\/records\//.test(m)).length).toBeGreaterThan(0);
  });
});

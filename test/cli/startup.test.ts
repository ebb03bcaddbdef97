import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';

// A loader hook that reports every module URL the CLI resolves, on fd 2 (hooks run on their own thread).
const hooks = `import { writeSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  writeSync(2, 'LOADED ' + r.url + '\\n');
  return r;
}`;
const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;

function loadedBy(args: string[]): { modules: string[]; status: number | null } {
  const r = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, BIN, ...args], {
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
  /node_modules\/(undici|zod|better-sqlite3|ora|cli-table3|chalk)\/|\/dist\/(client|server|records|replay)\/|\/dist\/protocol\/(?!units\.js$|constants\.js$)|\/commands\/[^/]+\/(?!command\.js|options\.js)[^/]+\.js$/;

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

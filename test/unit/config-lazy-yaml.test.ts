/**
 * The YAML parser is loaded only when a config file is read: a command run without one (most
 * runs of `read`, `write`, `status`) does not pay its start-up cost. Checked on the built module,
 * in a fresh process, by what its CommonJS cache holds.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'tsnode-lazy-yaml-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const load = pathToFileURL(join(__dirname, '..', '..', 'dist', 'cli', 'config', 'load.js')).href;

/** Loads the config from `file` in a fresh process: whether yaml was loaded, and the profile names. */
function run(file: string): { yaml: boolean; profiles: string[] } {
  const script = `import { createRequire } from 'node:module';
const { loadConfigFile } = await import(${JSON.stringify(load)});
const { config } = loadConfigFile(${JSON.stringify(file)}, ${JSON.stringify(dir)});
const yaml = Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/node_modules/yaml/'));
console.log(JSON.stringify({ yaml, profiles: [...config.profiles.keys()] }));`;
  const p = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(p.status, p.stderr).toBe(0);
  return JSON.parse(p.stdout) as { yaml: boolean; profiles: string[] };
}

describe('the config loader and yaml', () => {
  it('without a config file, yaml is never loaded', () => {
    expect(run(join(dir, 'missing.yaml'))).toEqual({ yaml: false, profiles: [] });
  });

  it('with one, it is loaded and the file parsed', () => {
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'profiles:\n  lab:\n    seed: http://127.0.0.1:8112\n');
    expect(run(file)).toEqual({ yaml: true, profiles: ['lab'] });
  });
});

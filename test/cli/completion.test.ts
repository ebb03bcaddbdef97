import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { completionSpecs } from '../../src/cli/completion.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tsnode-completion-'));
const script = join(dir, 'tsnode.bash');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Asks the generated bash function what it would offer for the words typed so far (the last one is the cursor word). */
function complete(...words: string[]): string[] {
  const arr = words.map((w) => `'${w}'`).join(' ');
  const r = spawnSync(
    'bash',
    ['-c', `source ${JSON.stringify(script)}; COMP_WORDS=(${arr}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); _tsnode_complete; printf '%s\\n' "\${COMPREPLY[@]}"`],
    { encoding: 'utf8', cwd: dir },
  );
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout.split('\n').filter(Boolean);
}

describe('tsnode completion', () => {
  beforeAll(async () => {
    const r = await runCli(['completion', 'bash']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    writeFileSync(script, r.stdout);
  });

  it('completes command names', () => {
    expect(complete('tsnode', 'sw')).toEqual(['sweep']);
    expect(complete('tsnode', 'cl')).toEqual(['cluster']);
    expect(complete('tsnode', 'cluster', '')).toEqual(expect.arrayContaining(['up', 'down']));
  });

  it("completes a command's own flags, after global flags and flag values too", () => {
    expect(complete('tsnode', 'sweep', '--be')).toEqual(['--before']);
    expect(complete('tsnode', '--no-color', 'sweep', '--types', 'nnt', '--be')).toEqual(['--before']);
    expect(complete('tsnode', 'cluster', 'up', '--de')).toEqual(['--detach']);
    // a flag value that looks like a command name is not taken for one
    expect(complete('tsnode', 'cluster', 'down', '--dir', 'sweep', '--g')).toEqual(['--grace']);
  });

  it('completes positional choices', () => {
    expect(complete('tsnode', 'completion', '')).toEqual(['bash', 'zsh']);
  });

  it('is generated from the program, so every command and flag is in it', () => {
    const specs = completionSpecs(buildProgram(async () => {}));
    const root = specs.find((s) => s.path === '')!;
    expect(root.subcommands).toEqual(expect.arrayContaining(['sweep', 'status', 'read', 'write', 'cluster', 'demo', 'completion']));
    const up = specs.find((s) => s.path === 'cluster up')!;
    expect(up.options).toEqual(expect.arrayContaining(['--nodes', '--base-port', '--dir', '--sweep-pace', '--detach', '--no-color', '--help']));
    expect(up.valueOptions).toContain('--base-port');
    expect(up.valueOptions).not.toContain('--detach');
    expect(up.valueOptions).toContain('--write-copies');
    // The ring commands, and --seed wherever nodes are taken.
    expect(root.subcommands).toEqual(expect.arrayContaining(['nodes', 'locate']));
    for (const path of ['nodes', 'locate', 'status', 'sweep', 'read', 'write']) expect(specs.find((s) => s.path === path)!.valueOptions).toContain('--seed');
  });

  it('prints a zsh script and rejects other shells', async () => {
    const zsh = await runCli(['completion', 'zsh']);
    expect(zsh.code).toBe(0);
    expect(zsh.stdout).toMatch(/^#compdef tsnode/);
    expect(zsh.stdout).toContain('bashcompinit');
    const fish = await runCli(['completion', 'fish']);
    expect(fish.code).toBe(2);
    expect(fish.stdout).toBe('');
    expect(fish.stderr).toMatch(/fish/);
  });
});

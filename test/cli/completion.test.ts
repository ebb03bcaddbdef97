/**
 * The completion scripts, loaded in the real shells (bash, zsh, fish) and asked what they offer.
 * A missing shell fails the test with how to install it: skipping is not passing (.ci/run installs them).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { completionSpecs } from '../../src/cli/completion/spec.js';
import { BIN, runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tsnode-completion-'));
const bin = join(dir, 'bin');
const config = join(dir, 'config.yaml');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the shells run: a `tsnode` on PATH (profile names are asked of it) and a config with two profiles. */
const env = (): NodeJS.ProcessEnv => ({ ...process.env, PATH: `${bin}:${process.env.PATH}`, TSNODE_CONFIG: config, HOME: dir, NO_COLOR: '1' });

function requireShell(shell: string): void {
  const r = spawnSync(shell, ['-c', 'exit 0'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    throw new Error(`${shell} is not installed, so its completion cannot be checked: install it (apt-get install -y ${shell}; .ci/run does this)`);
  }
}

const sq = (w: string): string => `'${w.replace(/'/g, `'\\''`)}'`;

/** Each shell asked for the words it would offer after `words` (the last is the word under the cursor). */
const complete: Record<'bash' | 'zsh' | 'fish', (words: string[]) => string[]> = {
  bash: (words) => {
    const script = `source ${sq(join(dir, 'tsnode.bash'))}; COMP_WORDS=(${words.map(sq).join(' ')}); COMP_CWORD=${words.length - 1}; COMPREPLY=(); _tsnode_complete; printf '%s\\n' "\${COMPREPLY[@]}"`;
    return run('bash', ['-c', script]);
  },
  zsh: (words) => {
    // Outside an interactive completion widget compadd cannot run: a stand-in prints what would be added.
    const stubs = `compdef() { :; }; compset() { :; }; _files() { print -r -- '<files>'; }
compadd() { while [[ $1 == -* && $1 != -- ]]; do [[ $1 == -[SPp] ]] && shift; shift; done; [[ $1 == -- ]] && shift; print -rl -- "$@"; }`;
    const script = `${stubs}\nsource ${sq(join(dir, 'tsnode.zsh'))}; words=(${words.map(sq).join(' ')}); CURRENT=${words.length}; _tsnode; true`; // 1 = "no matches", as zsh completers say it
    return run('zsh', ['-f', '-c', script]);
  },
  fish: (words) => run('fish', ['--no-config', '-c', `source ${sq(join(dir, 'tsnode.fish'))}; complete -C ${sq(words.join(' '))}`]).map((l) => l.split('\t')[0]!),
};

function run(shell: string, args: string[]): string[] {
  const r = spawnSync(shell, args, { encoding: 'utf8', cwd: dir, env: env() });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout.split('\n').filter(Boolean);
}

beforeAll(async () => {
  mkdirSync(bin);
  writeFileSync(join(bin, 'tsnode'), `#!/bin/sh\nexec ${sq(process.execPath)} ${sq(BIN)} "$@"\n`);
  chmodSync(join(bin, 'tsnode'), 0o755);
  writeFileSync(config, 'current: prod\nprofiles:\n  prod:\n    nodes: [db1]\n  lab-2:\n    nodes_file: ./nodes.txt\n');
  writeFileSync(join(dir, 'rejects.ndjson'), '');
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = await runCli(['completion', shell]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    writeFileSync(join(dir, `tsnode.${shell}`), r.stdout);
  }
});

const sorted = (xs: string[]): string[] => [...xs].sort();

/** [words typed, the cursor word last] -> exactly what every shell offers. */
const CASES: Array<[string, string[], string[]]> = [
  ['command names', ['tsnode', 'sw'], ['sweep']],
  ['subcommands', ['tsnode', 'cluster', ''], ['down', 'help', 'pause', 'restart', 'resume', 'up']],
  ["a command's own flags", ['tsnode', 'sweep', '--be'], ['--before']],
  ['after global flags and flag values', ['tsnode', '--no-color', 'sweep', '--types', 'nnt', '--be'], ['--before']],
  ['a flag value that looks like a command is not one', ['tsnode', 'cluster', 'down', '--dir', 'sweep', '--g'], ['--grace']],
  ["sweep cancel's options (declared on sweep)", ['tsnode', 'sweep', 'cancel', '--y'], ['--yes']],
  ["sweep cancel's node list", ['tsnode', 'sweep', 'cancel', '--nod'], ['--nodes']],
  ['global flags after a command', ['tsnode', 'status', '--qu'], ['--quiet']],
  ['a comma list continues after the comma', ['tsnode', 'sweep', '--types', 'nnt,h'], ['nnt,histogram']],
  ['declared choices', ['tsnode', 'status', '--output', ''], ['csv', 'json', 'table']],
  ['-o on the commands that print results', ['tsnode', 'cluster', 'down', '-o', 'j'], ['json']],
  ["status's view flag", ['tsnode', 'status', '--per'], ['--per-type']],
  ['the count of local nodes', ['tsnode', 'cluster', 'up', '--co'], ['--count']],
  ["read's formats, chart included", ['tsnode', 'read', 'U', 'M', '-o', 'c'], ['chart', 'csv']],
  ['rollup types', ['tsnode', 'read', 'U', 'M', '--type', 'av'], ['average', 'average_stddev']],
  ['engines', ['tsnode', 'read', 'U', 'M', '--engine', 'r'], ['recalc']],
  ['header prefixes', ['tsnode', 'sweep', '--header-prefix', 'X-Sn'], ['X-Snowth']],
  ['profile names for --profile, from the config file', ['tsnode', '--profile', ''], ['lab-2', 'prod']],
  ['profile names for profile use', ['tsnode', 'profile', 'use', 'l'], ['lab-2']],
  ['profile set flags', ['tsnode', 'profile', 'set', 'x', '--nnt'], ['--nnt-rollups']],
  ['positional choices', ['tsnode', 'completion', ''], ['bash', 'fish', 'zsh']],
  ['help for a command', ['tsnode', 'help', 'st'], ['status']],
  ['free text values offer nothing', ['tsnode', 'read', 'U', 'M', '--start', ''], []],
  ['record kinds for write', ['tsnode', 'write', 'f.ndjson', '--kind', ''], ['histogram', 'nnt', 'text']],
  ['record kinds for read', ['tsnode', 'read', 'U', 'M', '--kind', 'h'], ['histogram']],
  ["write's summary formats", ['tsnode', 'write', 'f.ndjson', '-o', ''], ['csv', 'json', 'table']],
  // --force is write's old spelling of --allow-changed-input: hidden, so only --format starts with --fo.
  ['a renamed flag is not offered', ['tsnode', 'write', 'f.ndjson', '--fo'], ['--format']],
  ['the new name is', ['tsnode', 'write', 'f.ndjson', '--allow'], ['--allow-changed-input']],
];

describe.each(['bash', 'zsh', 'fish'] as const)('completion in %s', (shell) => {
  beforeAll(() => requireShell(shell));

  it.each(CASES)('%s', (_what, words, expected) => {
    expect(sorted(complete[shell](words))).toEqual(expected);
  });

  it('file values are completed as files', () => {
    const offered = complete[shell](['tsnode', 'write', '--rejects', 'rej']);
    if (shell === 'zsh') expect(offered).toEqual(['<files>']);
    else expect(offered).toEqual(['rejects.ndjson']);
  });

  it('--flag=value', () => {
    // bash splits the word at "=" before the function sees it: `--output`, `=`, `j`.
    const words = shell === 'bash' ? ['tsnode', 'sweep', '--output', '=', 'j'] : ['tsnode', 'sweep', '--output=j'];
    expect(complete[shell](words)).toEqual([shell === 'bash' ? 'json' : '--output=json']);
  });
});

describe('the completion scripts', () => {
  it('the zsh script registers itself with compinit', () => {
    requireShell('zsh');
    const out = run('zsh', [
      '-f',
      '-c',
      `autoload -U compinit; compinit -u -d ${sq(join(dir, 'zcompdump'))}; source ${sq(join(dir, 'tsnode.zsh'))}; print -r -- \${_comps[tsnode]}`,
    ]);
    expect(out).toEqual(['_tsnode']);
  });

  it("are generated from the program: every command, its options and its parents' are in them", async () => {
    const specs = completionSpecs(await buildProgram(async () => {}));
    const root = specs.find((s) => s.path === '')!;
    expect(root.subcommands.map((s) => s.name)).toEqual(expect.arrayContaining(['sweep', 'status', 'history', 'read', 'write', 'cluster', 'demo', 'profile', 'completion']));
    const history = specs.find((s) => s.path === 'history')!;
    expect(history.options.flatMap((o) => o.flags)).toEqual(expect.arrayContaining(['--since', '--node', '--journal', '--output']));
    const up = specs.find((s) => s.path === 'cluster up')!;
    const flags = up.options.flatMap((o) => o.flags);
    expect(flags).toEqual(expect.arrayContaining(['--count', '--base-port', '--dir', '--sweep-pace', '--detach', '--output', '--no-color', '--profile', '--quiet', '--help']));
    expect(flags).not.toContain('--version');
    // the old spelling of --count is still read, but not offered
    expect(flags).not.toContain('--nodes');
    expect(up.options.find((o) => o.flags.includes('--base-port'))!.takesValue).toBe(true);
    expect(up.options.find((o) => o.flags.includes('--detach'))!.takesValue).toBe(false);
    const cancel = specs.find((s) => s.path === 'sweep cancel')!;
    expect(cancel.options.flatMap((o) => o.flags)).toEqual(expect.arrayContaining(['--yes', '--nodes', '--output', '--cacert']));
    expect(up.options.find((o) => o.flags.includes('--write-copies'))!.takesValue).toBe(true);
    // The ring commands, and --seed wherever nodes are taken.
    const top = specs.find((s) => s.path === '')!;
    expect(top.subcommands.map((s) => s.name)).toEqual(expect.arrayContaining(['nodes', 'locate']));
    for (const path of ['nodes', 'locate', 'status', 'sweep', 'read', 'write']) {
      expect(specs.find((s) => s.path === path)!.options.flatMap((o) => o.flags)).toContain('--seed');
    }
  });

  it('rejects other shells with the list of those it knows', async () => {
    const r = await runCli(['completion', 'powershell']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/error: tsnode completion: "powershell" is not one of bash, zsh, fish/);
  });
});

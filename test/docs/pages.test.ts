import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

// Every command the program declares has its page under docs/commands/, listed in the commands
// index and in the README's table, and the page names each of its subcommands. A new command
// without a page fails here rather than reaching users undocumented. Runs against dist/ (npm test
// builds first), through the reference generator, which knows the command tree.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const paths = JSON.parse(execFileSync(process.execPath, [join(root, 'scripts', 'gen-cli-reference.mjs'), '--commands'], { cwd: root, encoding: 'utf8' })) as string[][];
const read = (rel: string): string => readFileSync(join(root, rel), 'utf8');
const topLevel = [...new Set(paths.map((p) => p[0]!))];

test('the program declares the commands this test expects to find', () => {
  // Guards against an empty walk passing every check below vacuously.
  expect(topLevel).toEqual(
    expect.arrayContaining(['serve', 'write', 'read', 'sweep', 'retention', 'status', 'history', 'nodes', 'locate', 'cluster', 'demo', 'profile', 'completion']),
  );
});

describe.each(topLevel)('tsnode %s', (name) => {
  const page = `docs/commands/${name}.md`;

  test('has its page', () => {
    expect(existsSync(join(root, page)), `${page} is missing`).toBe(true);
  });

  test('is linked from the commands index and the README', () => {
    expect(read('docs/commands/README.md')).toContain(`](${name}.md)`);
    expect(read('README.md')).toContain(`](${page})`);
  });

  test('its page names every subcommand', () => {
    const text = read(page);
    for (const p of paths.filter((q) => q[0] === name && q.length > 1)) expect(text, `${page} does not mention tsnode ${p.join(' ')}`).toContain(p.join(' '));
  });
});

test('the README stays a front door (at most 250 lines; the manual lives in docs/)', () => {
  const lines = read('README.md').split('\n').length;
  expect(lines, `README.md has ${lines} lines: move the detail to its page under docs/`).toBeLessThanOrEqual(250);
});

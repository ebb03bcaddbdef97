import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

// docs/reference.md is every command's --help, generated from the built program. When a flag or a
// help text changes, the committed page must change with it; this test says so instead of letting
// the reference drift. It runs against dist/ (npm test builds first).
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

test('docs/reference.md is what scripts/gen-cli-reference.mjs generates from the program', () => {
  const generated = execFileSync(process.execPath, [join(root, 'scripts', 'gen-cli-reference.mjs'), '--stdout'], { cwd: root, encoding: 'utf8' });
  const committed = readFileSync(join(root, 'docs', 'reference.md'), 'utf8');
  if (committed !== generated) {
    const a = committed.split('\n');
    const b = generated.split('\n');
    const line = a.findIndex((l, i) => l !== b[i]);
    expect.fail(
      `docs/reference.md is out of date: regenerate it with \`npm run docs:reference\` and commit it.\n` +
        `first difference at line ${line + 1}:\n  committed: ${JSON.stringify(a[line])}\n  generated: ${JSON.stringify(b[line])}`,
    );
  }
});

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import * as api from '../../src/index.js';
import { internalValueNames } from '../helpers/public-api.js';

// What the docs show a script: only public names. In docs/library.md, the README's library section
// and each command page's "## Library" section, a name src/ exports internally but src/index.ts does
// not (`preflightSweep`, `SweepRefusedError` without `errors.`) fails, in prose and in code alike,
// and so does an `import { ... } from 'tsnode'` of a name the package does not export.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? filesUnder(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The text of the section headed `heading` (up to the next heading of the same level or higher). */
function section(text: string, heading: RegExp): string {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => heading.test(l));
  if (start < 0) return '';
  const level = /^#+/.exec(lines[start]!)![0].length;
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && /^#+/.exec(l)![0].length <= level);
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

const commandPages = readdirSync(join(root, 'docs', 'commands')).filter((f) => f.endsWith('.md'));
const shown: Array<{ where: string; text: string }> = [
  { where: 'docs/library.md', text: readFileSync(join(root, 'docs', 'library.md'), 'utf8') },
  { where: 'README.md', text: section(readFileSync(join(root, 'README.md'), 'utf8'), /^## The library/) },
  ...commandPages.map((f) => ({ where: `docs/commands/${f}`, text: section(readFileSync(join(root, 'docs', 'commands', f), 'utf8'), /^## Library/) })),
];

const publicValues = new Set(Object.keys(api));
// The library's layers (cli/ and server/ are programs, not library: their names are no candidates);
// NodeClient's methods are public through it.
const libraryFiles = filesUnder(join(root, 'src')).filter((f) => !/[/\\](cli|server)[/\\]/.test(relative(root, f)));
const methods = new Set(Object.getOwnPropertyNames(api.NodeClient.prototype));
// Words that are also fields of public types (`confirm({ preflight, send, skipped })`).
const fieldWords = new Set(['send']);
const internal = [...internalValueNames(libraryFiles)].filter((n) => !publicValues.has(n) && !methods.has(n) && !fieldWords.has(n));
const indexSource = readFileSync(join(root, 'src', 'index.ts'), 'utf8');

/** Internal names a text mentions as a word of their own, not as a member (`x.name`) or a key (`name:`). */
function internalNamesIn(text: string): string[] {
  return internal.filter((n) => new RegExp(`(?<![.\\w])${n}(?![\\w:])`).test(text));
}

describe('the library as the docs show it', () => {
  test('docs/library.md and the README name the library', () => {
    expect(shown[0]!.text).toContain('| `NodeClient` |');
    expect(shown[1]!.text).toContain('docs/library.md');
  });

  test.each(shown.filter((s) => s.text !== ''))('$where names only public values', ({ text }) => {
    expect(internalNamesIn(text)).toEqual([]);
  });

  test.each(shown.filter((s) => s.text !== ''))('$where imports only what tsnode exports', ({ text }) => {
    for (const m of text.matchAll(/import \{([^}]*)\} from 'tsnode'/g)) {
      for (const raw of m[1]!.split(',')) {
        const name = raw.replace(/^\s*type\s+/, '').trim();
        if (name === '') continue;
        // A value is exported at run time; a type is named in src/index.ts.
        expect(publicValues.has(name) || new RegExp(`\\btype ${name}\\b|\\bas ${name}\\b`).test(indexSource), name).toBe(true);
      }
    }
  });

  test('the check finds an internal name, in prose and in code', () => {
    expect(internal).toContain('preflightSweep');
    expect(internalNamesIn('call `preflightSweep(clients)` first')).toEqual(['preflightSweep']);
    expect(internalNamesIn('const p = await preflightSweep(clients);')).toEqual(['preflightSweep']);
    expect(internalNamesIn('catch `errors.SweepRefusedError`; set `onEvent:`')).toEqual([]);
  });

  test('every command page with a library section is checked', () => {
    const withSection = shown.filter((s) => s.where.startsWith('docs/commands/') && s.text !== '').map((s) => relative('docs/commands', s.where));
    expect(withSection.length).toBeGreaterThanOrEqual(4);
  });
});

import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

// Every relative link in the project's Markdown must reach a file of the repository, and every
// #anchor a heading of that file (as GitHub names headings). A page that moves or a heading that
// is reworded fails here, not in a reader's browser. Links to other sites are not fetched.
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function markdownFiles(): string[] {
  const files = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md'].filter((f) => existsSync(join(root, f)));
  const walk = (dir: string): void => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) files.push(p);
    }
  };
  walk('docs');
  return files;
}

/** The text outside fenced code blocks, line for line (fenced lines become empty, so line numbers hold). */
function prose(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence !== undefined) {
      if (m && m[1]!.startsWith(fence)) fence = undefined;
      return '';
    }
    if (m) {
      fence = m[1]!;
      return '';
    }
    return line;
  });
}

/** GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(text: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(text)) {
    const explicit = line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g);
    for (const a of explicit) ids.add(a[1]!);
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const title = h[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(title) ?? 0;
    seen.set(title, n + 1);
    ids.add(n === 0 ? title : `${title}-${n}`);
  }
  return ids;
}

interface Link {
  line: number;
  target: string;
}

function linksOf(text: string): Link[] {
  const out: Link[] = [];
  prose(text).forEach((raw, i) => {
    // Code spans may hold brackets; blank them (same length) so they neither make nor break a link.
    const line = raw.replace(/(`+)[^`]*?\1/g, (s) => 'x'.repeat(s.length));
    for (const m of line.matchAll(/\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      out.push({ line: i + 1, target: m[1]! });
    }
    const def = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
    if (def) out.push({ line: i + 1, target: def[1]! });
  });
  return out;
}

function problems(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const found: string[] = [];
  for (const { line, target } of linksOf(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ...
    const where = `${file}:${line}: ${target}`;
    const hash = target.indexOf('#');
    const path = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const abs = path === '' ? join(root, file) : resolve(root, dirname(file), path);
    const rel = relative(root, abs);
    if (rel === '..' || rel.startsWith(`..${sep}`)) {
      found.push(`${where}: points outside the repository`);
      continue;
    }
    if (!existsSync(abs)) {
      found.push(`${where}: no such file ${rel}`);
      continue;
    }
    if (anchor === undefined || anchor === '') continue;
    if (statSync(abs).isDirectory() || !abs.endsWith('.md')) {
      found.push(`${where}: an anchor into ${rel}, which is not a Markdown page`);
      continue;
    }
    if (!anchorsOf(readFileSync(abs, 'utf8')).has(anchor)) found.push(`${where}: ${rel} has no heading #${anchor}`);
  }
  return found;
}

describe('links in the documentation', () => {
  const files = markdownFiles();

  test('the pages exist', () => {
    expect(files).toContain('README.md');
    expect(files.length).toBeGreaterThan(10);
  });

  test.each(files)('%s: every relative link and anchor resolves', (file) => {
    expect(problems(file)).toEqual([]);
  });

  test('the checker itself catches a broken file, a broken anchor and a link out of the repository', () => {
    expect(anchorsOf('# The ring (`--seed`, `tsnode nodes`)\n## Exit codes\n## Exit codes\n```\n# not a heading\n```')).toEqual(
      new Set(['the-ring---seed-tsnode-nodes', 'exit-codes', 'exit-codes-1']),
    );
    expect(linksOf('see [a `b]` c](x.md#y) and `[not](a.md)`\n```\n[no](z.md)\n```\n[ref]: ../out.md').map((l) => l.target)).toEqual(['x.md#y', '../out.md']);
  });
});

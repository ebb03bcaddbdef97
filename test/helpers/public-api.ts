import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = new URL('../../', import.meta.url);
export const INDEX = fileURLToPath(new URL('src/index.ts', root));
export const LIBRARY_DOC = fileURLToPath(new URL('docs/library.md', root));

/** The runtime values docs/library.md lists: the first cell of every table row, `name`. */
export function documentedValues(text = readFileSync(LIBRARY_DOC, 'utf8')): string[] {
  return [...text.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]!);
}

/**
 * Every name src/index.ts exports, split into runtime values and types, as the TypeScript
 * checker sees them (so `export type *`, renames and namespaces count as they really are).
 */
export function exportedNames(): { values: string[]; types: string[] } {
  const program = ts.createProgram([INDEX], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    types: ['node'],
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(INDEX)!)!;
  const values: string[] = [];
  const types: string[] = [];
  for (const exported of checker.getExportsOfModule(module)) {
    const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    (target.flags & ts.SymbolFlags.Value ? values : types).push(exported.name);
  }
  return { values: values.sort(), types: types.sort() };
}

/** The names src/ (outside cli/) exports as values from any module: what docs must not show unless public. */
export function internalValueNames(files: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^export (?:async )?(?:function\*?|const|let|class) (\w+)/gm)) names.add(m[1]!);
  }
  return names;
}

/**
 * The import graph of src/ and the layer rules of docs/architecture.md, checked over it.
 * Pure functions over a graph (file -> the files it imports), so a test can feed a fake graph
 * and see a wrong import or a cycle fail; readImportGraph builds the real one with a regex.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** src-relative path (`client/sweep.ts`) -> the src-relative files it imports (type imports too). */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

/**
 * Which layers each layer may import (its own is always allowed). The arrows of
 * docs/architecture.md "The layers"; `index.ts` and `errors.ts` (the public API and its error
 * namespace) may import anything, and nothing but them imports them.
 */
export const LAYER_RULES: Readonly<Record<string, readonly string[]>> = {
  'index.ts': ['*'],
  'errors.ts': ['*'],
  cli: ['run', 'retention', 'replay', 'client', 'records', 'server', 'ring', 'tags', 'protocol', 'tsnode-error.ts', 'package-root.ts'],
  run: ['retention', 'client', 'protocol', 'tsnode-error.ts'],
  retention: ['client', 'protocol', 'tsnode-error.ts'],
  replay: ['client', 'records', 'ring', 'protocol', 'tsnode-error.ts'],
  client: ['protocol', 'ring', 'tags', 'tsnode-error.ts'],
  records: ['protocol', 'tsnode-error.ts'],
  server: ['protocol', 'ring', 'tags', 'tsnode-error.ts'],
  tags: ['tsnode-error.ts'],
  ring: ['tsnode-error.ts'],
  protocol: ['tsnode-error.ts'],
  'tsnode-error.ts': [],
};

/** The layer of a src-relative file: its first folder, or the file itself at the top of src/. */
export function layerOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? file : file.slice(0, slash);
}

export interface LayerViolation {
  from: string;
  to: string;
  rule: string;
}

/** Every import that points where the rules do not allow (an unknown layer is allowed nothing). */
export function layerViolations(graph: ImportGraph, rules: Readonly<Record<string, readonly string[]>> = LAYER_RULES): LayerViolation[] {
  const out: LayerViolation[] = [];
  for (const [from, targets] of graph) {
    const a = layerOf(from);
    const allowed = rules[a];
    for (const to of targets) {
      const b = layerOf(to);
      if (a === b || allowed?.includes('*') || allowed?.includes(b)) continue;
      out.push({ from, to, rule: allowed ? `${a} may import ${allowed.join(', ') || 'nothing'}` : `${a} is not a known layer` });
    }
  }
  return out;
}

/** The command folder a file of src/cli/commands/<name>/ belongs to (undefined for any other file, commands/index.ts included). */
function commandOf(file: string): string | undefined {
  return /^cli\/commands\/([^/]+)\//.exec(file)?.[1];
}

/**
 * Imports from one command's folder into another's (`from -> to`): what two commands share
 * belongs in a module both import (src/cli/run/, src/cli/local-cluster/, ...), not in either.
 */
export function crossCommandImports(graph: ImportGraph): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const a = commandOf(from);
    if (a === undefined) continue;
    for (const to of targets) {
      const b = commandOf(to);
      if (b !== undefined && b !== a) out.push(`${from} -> ${to}`);
    }
  }
  return out;
}

/** The import cycles (each as its files, first repeated at the end), one per strongly connected group. */
export function importCycles(graph: ImportGraph): string[][] {
  // Tarjan's strongly connected components, iteratively (src/ is deep enough to matter for recursion).
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; i: number }> = [{ node: root, i: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length) {
      const top = work[work.length - 1]!;
      const edges = graph.get(top.node) ?? [];
      if (top.i < edges.length) {
        const to = edges[top.i++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, i: 0 });
        } else if (onStack.has(to)) low.set(top.node, Math.min(low.get(top.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) !== index.get(top.node)) continue;
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== top.node);
      const selfLoop = (graph.get(top.node) ?? []).includes(top.node);
      if (group.length > 1 || selfLoop) cycles.push(cycleThrough(graph, new Set(group), group.sort()[0]!));
    }
  }
  return cycles;
}

/** One concrete cycle inside a strongly connected group, from `start` back to it (breadth first: the shortest). */
function cycleThrough(graph: ImportGraph, group: ReadonlySet<string>, start: string): string[] {
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const node = queue.shift()!;
    for (const to of graph.get(node) ?? []) {
      if (!group.has(to)) continue;
      if (to === start) {
        const path = [start];
        for (let n = node; n !== start; n = prev.get(n)!) path.splice(1, 0, n);
        return [...path, start];
      }
      if (!prev.has(to)) {
        prev.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start];
}

const SPECIFIER = /(?:^|[\s;])(import|export)\s+(type\s)?[^'"`;]*?\sfrom\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/**
 * The relative specifiers a source imports or re-exports (static, side-effect and literal
 * dynamic imports); with `runtimeOnly`, without `import type` / `export type` (gone once compiled).
 */
export function importSpecifiers(source: string, opts: { runtimeOnly?: boolean } = {}): string[] {
  // Comments can mention `import('x')`; drop them first (a string holding `//` is rare enough in src/ to ignore).
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const out: string[] = [];
  for (const m of code.matchAll(SPECIFIER)) {
    if (opts.runtimeOnly && m[2]) continue;
    const spec = m[3] ?? m[4] ?? m[5]!;
    if (spec.startsWith('.')) out.push(spec);
  }
  return out;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The import graph of every .ts file under `srcDir` (a `./x.js` specifier is the file `x.ts`). */
export function readImportGraph(srcDir: string, opts: { runtimeOnly?: boolean } = {}): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(srcDir)) {
    const targets = importSpecifiers(readFileSync(file, 'utf8'), opts).map((spec) => {
      const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
      return relative(srcDir, target).split('\\').join('/');
    });
    graph.set(relative(srcDir, file).split('\\').join('/'), [...new Set(targets)]);
  }
  return graph;
}

/**
 * The layer rules of docs/architecture.md, checked over the real import graph of src/: a wrong
 * import or an import cycle fails here (and so in CI). The checker itself is proven on fake graphs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crossCommandImports, importCycles, importSpecifiers, layerViolations, readImportGraph, type ImportGraph } from '../helpers/import-graph.js';

const SRC = join(import.meta.dirname, '../../src');

const graph = (edges: Record<string, string[]>): ImportGraph => {
  const g = new Map<string, string[]>(Object.entries(edges));
  for (const targets of Object.values(edges)) for (const t of targets) if (!g.has(t)) g.set(t, []);
  return g;
};

describe('the import graph of src/', () => {
  it('resolves every relative import to a file of src/', () => {
    const g = readImportGraph(SRC);
    expect(g.size).toBeGreaterThan(100); // the reader found the tree
    const unresolved = [...g].flatMap(([from, targets]) => targets.filter((t) => !g.has(t)).map((t) => `${from} -> ${t}`));
    expect(unresolved).toEqual([]);
  });

  it('points one way, down the layers (docs/architecture.md)', () => {
    expect(layerViolations(readImportGraph(SRC)).map((v) => `${v.from} -> ${v.to} (${v.rule})`)).toEqual([]);
  });

  it("has no command importing from another command's folder (shared helpers live in src/cli/run/ and the like)", () => {
    expect(crossCommandImports(readImportGraph(SRC))).toEqual([]);
  });

  it('has no cycle of runtime imports', () => {
    expect(importCycles(readImportGraph(SRC, { runtimeOnly: true })).map((c) => c.join(' -> '))).toEqual([]);
  });

  it('has no cycle of type-only imports either (a circle a reader must untangle, whatever the runtime does)', () => {
    expect(importCycles(readImportGraph(SRC)).map((c) => c.join(' -> '))).toEqual([]);
  });
});

describe('the checker', () => {
  it("finds an import from one command's folder into another's, and nothing else", () => {
    const g = graph({
      'cli/commands/delete/action.ts': ['cli/commands/sweep/action.ts', 'cli/commands/delete/options.ts', 'cli/run/lag.ts'],
      'cli/commands/demo/options.ts': ['cli/commands/cluster/options.ts'],
      'cli/commands/index.ts': ['cli/commands/sweep/command.ts'],
      'cli/run/lag.ts': ['cli/context.ts'],
    });
    expect(crossCommandImports(g)).toEqual(['cli/commands/delete/action.ts -> cli/commands/sweep/action.ts', 'cli/commands/demo/options.ts -> cli/commands/cluster/options.ts']);
  });

  it('fails a wrong-direction import', () => {
    const bad = graph({
      'cli/main.ts': ['run/sweep.ts', 'server/server.ts'],
      'run/sweep.ts': ['client/sweep.ts'],
      'client/sweep.ts': ['protocol/codecs.ts', 'server/store.ts'], // the client never imports the server
      'server/store.ts': ['client/http.ts'], // nor the server the client
      'client/http.ts': ['cli/context.ts'], // nothing points back up to cli
      'ring/placement.ts': ['protocol/codecs.ts'], // ring depends on nothing
      'tags/query.ts': ['ring/placement.ts'], // tags neither
      'protocol/codecs.ts': ['tsnode-error.ts'],
      'retention/apply.ts': ['run/lock.ts'], // run is above retention
      'client/errors.ts': ['errors.ts'], // the public error namespace is for index.ts only
    });
    expect(layerViolations(bad).map((v) => `${v.from} -> ${v.to}`)).toEqual([
      'client/sweep.ts -> server/store.ts',
      'server/store.ts -> client/http.ts',
      'client/http.ts -> cli/context.ts',
      'ring/placement.ts -> protocol/codecs.ts',
      'tags/query.ts -> ring/placement.ts',
      'retention/apply.ts -> run/lock.ts',
      'client/errors.ts -> errors.ts',
    ]);
  });

  it('passes the same graph without the wrong imports', () => {
    const good = graph({
      'cli/main.ts': ['run/sweep.ts', 'server/server.ts', 'tags/query.ts'],
      'run/sweep.ts': ['client/sweep.ts', 'retention/apply.ts'],
      'retention/apply.ts': ['client/sweep.ts'],
      'client/sweep.ts': ['protocol/codecs.ts', 'ring/placement.ts', 'client/http.ts'],
      'server/store.ts': ['protocol/codecs.ts', 'ring/placement.ts'],
      'protocol/codecs.ts': ['tsnode-error.ts'],
      'index.ts': ['errors.ts', 'cli/main.ts'],
      'errors.ts': ['client/sweep.ts', 'server/store.ts'],
    });
    expect(layerViolations(good)).toEqual([]);
    expect(importCycles(good)).toEqual([]);
  });

  it('names a file of an unknown layer', () => {
    expect(layerViolations(graph({ 'newthing/x.ts': ['protocol/codecs.ts'] }))).toEqual([
      { from: 'newthing/x.ts', to: 'protocol/codecs.ts', rule: 'newthing is not a known layer' },
    ]);
  });

  it('finds a cycle, inside a layer or across layers, and names its files', () => {
    expect(importCycles(graph({ 'client/a.ts': ['client/b.ts'], 'client/b.ts': ['client/c.ts'], 'client/c.ts': ['client/a.ts'] }))).toEqual([
      ['client/a.ts', 'client/b.ts', 'client/c.ts', 'client/a.ts'],
    ]);
    expect(importCycles(graph({ 'x.ts': ['x.ts'] }))).toEqual([['x.ts', 'x.ts']]);
    expect(importCycles(graph({ 'a.ts': ['b.ts'], 'b.ts': ['c.ts'], 'c.ts': ['b.ts'], 'd.ts': ['a.ts'] }))).toEqual([['b.ts', 'c.ts', 'b.ts']]);
  });

  it('reads static, re-exported, side-effect and dynamic imports; type-only ones only when asked', () => {
    const source = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "import {\n  c,\n  type C,\n} from './c.js';",
      "export * from './d.js';",
      "export type { E } from './e.js';",
      "import './f.js';",
      "const g = await import('./g.js');",
      "import { z } from 'zod';",
      "// import { h } from './h.js';",
      "/* import('./i.js') */",
    ].join('\n');
    expect(importSpecifiers(source)).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js', './f.js', './g.js']);
    expect(importSpecifiers(source, { runtimeOnly: true })).toEqual(['./a.js', './c.js', './d.js', './f.js', './g.js']);
  });
});

/** Where process.env may be read: the CLI's entry, which hands it to every command as ctx.env. */
const ENV_READERS = ['cli/io.ts'];

describe('process.env', () => {
  it('is read only where the CLI builds its context (ctx.env everywhere else)', () => {
    const readers = [...readImportGraph(SRC).keys()].filter((file) => {
      const code = readFileSync(join(SRC, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
      return /\bprocess\s*(\.\s*env\b|\[\s*['"`]env['"`]\s*\])|\{[^}]*\benv\b[^}]*\}\s*=\s*process\b/.test(code);
    });
    expect(readers.sort()).toEqual(ENV_READERS);
  });
});

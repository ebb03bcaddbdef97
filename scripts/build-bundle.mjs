#!/usr/bin/env node
// The CLI bundle: dist/cli/main.js (built by tsc) and what it loads, undici, commander, zod and
// the rest, as ONE CommonJS function in dist/tsnode.cjs, which bin/tsnode.js compiles with the V8
// code cache scripts/make-code-cache.mjs writes next to it. ~100 ES modules and undici's CommonJS
// files each cost a resolve, a read and a compile at every start; one file with its bytecode ready
// costs one read. The ESM build stays what the library (dist/index.js) is and what the bin falls
// back to without the bundle. npm run build runs this after tsc.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BUNDLE = join(root, 'dist', 'tsnode.cjs');

/**
 * Source rewrites the bundle needs, each of which must match exactly `count` times (a change to
 * the source or to undici fails the build instead of silently bundling less).
 */
const REWRITES = [
  // The modules that require lazily (records/reader.ts: zlib, ring/placement.ts: crypto,
  // render/table.ts: cli-table3, config/file.ts: yaml, client/agent.ts: undici's parts) do it
  // through createRequire(import.meta.url), which the bundler cannot follow. With the bundle's own
  // `require` a package is bundled (and still initialised only when first required) and a Node
  // built-in stays a real require.
  { file: /[\\/]dist[\\/].*\.js$/, from: /^const require = createRequire\(import\.meta\.url\);$/gm, to: '', count: 4 },
  { file: /[\\/]dist[\\/].*\.js$/, from: /createRequire\(import\.meta\.url\)(?=[(.])/g, to: 'require', count: 2 },
  // client/agent.ts keeps node:http2 and node:tls unloaded by putting a stand-in for undici's
  // client-h2.js in the require cache; the bundle has no require cache, so the same deferral is
  // made here: client.js calls the HTTP/2 side only for a connection that negotiated h2.
  { file: /[\\/]dist[\\/]client[\\/]agent\.js$/, from: /^deferHttp2\(\);$/m, to: '', count: 1 },
  {
    file: /[\\/]undici[\\/]lib[\\/]dispatcher[\\/]client\.js$/,
    from: "const connectH2 = require('./client-h2.js')",
    to: "function connectH2 (...args) { return require('./client-h2.js').apply(this, args) }",
    count: 1,
  },
];

function rewrites() {
  const seen = new Map(REWRITES.map((r) => [r, 0]));
  return {
    name: 'tsnode-rewrites',
    transform(code, id) {
      let out = code;
      for (const r of REWRITES) {
        if (!r.file.test(id)) continue;
        const hits = typeof r.from === 'string' ? out.split(r.from).length - 1 : (out.match(r.from) ?? []).length;
        seen.set(r, seen.get(r) + hits);
        out = typeof r.from === 'string' ? out.replaceAll(r.from, r.to) : out.replace(r.from, r.to);
      }
      return out === code ? null : { code: out, map: null };
    },
    buildEnd() {
      for (const [r, hits] of seen) if (hits !== r.count) this.error(`rewrite ${r.from} matched ${hits} times, expected ${r.count}`);
    },
  };
}

const LAZY = '\0lazy-external:';

/**
 * Rolldown hoists an ES module's imports of external modules (Node built-ins, better-sqlite3) to the
 * top of the bundle, so every start would load node:crypto, node:zlib, node:worker_threads and the
 * SQLite addon that only `serve` or a gzip input needs. Routed through a one-line CommonJS module
 * each, such an import runs where the importing module initialises, as it does in the ESM build:
 * a module behind a dynamic import (a command's action) loads its built-ins only when it loads.
 */
function lazyExternals() {
  return {
    name: 'tsnode-lazy-externals',
    resolveId(source, importer) {
      const external = isBuiltin(source) || source === 'better-sqlite3';
      if (!external) return null;
      if (importer === undefined || importer.startsWith(LAZY)) return { id: source, external: true };
      return LAZY + source;
    },
    load(id) {
      return id.startsWith(LAZY) ? `module.exports = require(${JSON.stringify(id.slice(LAZY.length))});` : null;
    },
  };
}

/**
 * The commands that run reference nodes (`serve`, `cluster`, `demo`: the server, SQLite, the local
 * cluster, a third of the code) start from the ESM build: bin/tsnode.js sends any run naming one
 * there. The bundle keeps their declarations (--help lists them) and leaves their actions out, as
 * real dynamic imports of the ESM build, so every other command's start reads and deserialises
 * less.
 */
function serverActionsOutside() {
  const declaration = /[\\/]dist[\\/]cli[\\/]commands[\\/](serve|cluster|demo)[\\/]command\.js$/;
  return {
    name: 'tsnode-server-actions-outside',
    resolveId(source, importer, extra) {
      const m = extra.kind === 'dynamic-import' && importer ? declaration.exec(importer) : null;
      return m ? { id: `./cli/commands/${m[1]}/${source.replace(/^\.\//, '')}`, external: true } : null;
    },
  };
}

export async function buildBundle() {
  const bundle = await rolldown({
    input: join(root, 'dist', 'cli', 'main.js'),
    platform: 'node',
    plugins: [serverActionsOutside(), rewrites(), lazyExternals()],
    logLevel: 'warn',
  });
  const { output } = await bundle.generate({ format: 'cjs', codeSplitting: false, charset: 'ascii', comments: { legal: false, annotation: false, jsdoc: false } });
  await bundle.close();
  const code = output[0].code;
  // ASCII only, so the bin reads it as latin1: a one-byte string without UTF-8 decoding, 2 MB.
  const bad = /[\u0080-\uffff]/.exec(code);
  if (bad) throw new Error(`the bundle has a non-ASCII character at ${bad.index}: ${JSON.stringify(code.slice(bad.index - 40, bad.index + 40))}`);
  // One function expression the bin compiles and calls with CommonJS's five arguments: the file is
  // never loaded by require(), so it needs no module wrapper of Node's.
  writeFileSync(BUNDLE, `(function (exports, require, module, __filename, __dirname) {${code}\n})`, 'latin1');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  rmSync(`${BUNDLE}.cache`, { force: true });
  await buildBundle();
  process.stderr.write(`bundle: ${BUNDLE} (${(readFileSync(BUNDLE).length / 1024).toFixed(0)} KiB)\n`);
}

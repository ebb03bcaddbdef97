#!/usr/bin/env node
// CommonJS (bin/package.json): a CommonJS entry point does not start Node's ES module loader, which
// the bundle does not need (~7 ms of every start); only the fallback to dist/cli/main.js starts it.
const { readFileSync, statSync, writeFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { setFlagsFromString } = require('node:v8');
// Kept in plain JavaScript so an unsupported Node gets a clear message instead of a syntax error.
const [major, minor, patch] = process.versions.node.split('.').map(Number);
const atLeast = (a, b, c) => major > a || (major === a && (minor > b || (minor === b && patch >= c)));
if (!atLeast(20, 18, 1)) {
  process.stderr.write(`tsnode needs Node.js 20.18.1 or newer; this is ${process.version}.\n`);
  process.exit(1);
}
// undici parses HTTP with llhttp compiled to WebAssembly; V8 then recompiles it with TurboFan on
// background threads, which costs a CLI run ~60-80 ms of CPU and holds its exit until done
// (bench/read.bench.mjs: a 2-row read 240 -> 180 ms of CPU). A run parses a handful of answers, for
// which the baseline (Liftoff) code is plenty: no tier-up. Only this process; the library is untouched.
setFlagsFromString('--no-wasm-tier-up');
setFlagsFromString('--no-wasm-dynamic-tiering');
// Start-up keeps most of what it allocates (modules, the command tree), so V8's young generation,
// which starts at 1 MB and doubles only after several scavenges, fills again and again: 7
// scavenges in a one-record write. Growing it 8x at a time (to the same cap) leaves 3, and
// ~5-10 ms less CPU (bench/startup.bench.mjs). Flags that size the heap at set-up
// (--min-semi-space-size) do nothing once the process runs; this one is read at each scavenge.
setFlagsFromString('--semi-space-growth-factor=8');
// While ~100 modules load, V8 finds Node's own path and URL helpers hot and optimises them with
// TurboFan on a background thread (normalizeString alone 4-15 ms, then again after a deopt): CPU
// for code that is done before the optimised version is ready. No TurboFan until the command's
// modules are loaded; run() (dist/cli/main.js) turns it back on before the command does its work,
// so a long read or write optimises its own hot code as before (~10 ms less CPU per start).
setFlagsFromString('--no-turbofan');
// `tsnode --version` alone needs no parser: answer before loading commander and the command tree
// (startup budget: bench/startup.bench.mjs). Anything else goes through the full program.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')).version}\n`);
} else {
  // The commands that run reference nodes are not in the bundle (scripts/build-bundle.mjs): a run
  // with any argument spelled like one starts from the ESM build (at worst a slower start).
  const runsNodes = args.some((a) => a === 'serve' || a === 'cluster' || a === 'demo');
  if (runsNodes && process.env.TSNODE_DEBUG_STARTUP) process.stderr.write('tsnode startup: esm (a command that runs nodes)\n');
  Promise.resolve()
    .then(() => (runsNodes ? undefined : loadBundle()) ?? import('../dist/cli/main.js'))
    .then(
      (cli) => cli.run(process.argv),
      (err) => {
        if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist')) {
          process.stderr.write('tsnode is not built yet: run `npm run build` in its directory first.\n');
        } else {
          process.stderr.write(`tsnode failed to start: ${err && err.stack ? err.stack : err}\n`);
        }
        process.exit(1);
      },
    );
}

/**
 * The CLI as one CommonJS function (dist/tsnode.cjs, scripts/build-bundle.mjs) compiled with the V8
 * code cache the build made for it (scripts/make-code-cache.mjs): one file read and bytecode ready,
 * instead of ~100 ES modules and undici's CommonJS files each resolved, read and compiled (~70-90 ms
 * less CPU per start, bench/startup.bench.mjs). Undefined without the bundle: the ESM build (dist/cli/main.js) runs instead.
 * V8 refuses a cache made by another V8 or under other V8 flags (why the flags above are set
 * first, and the cache is made under the same ones); the bundle then compiles from source, slower
 * but the same. TSNODE_DEBUG_STARTUP=1 says on stderr which way this start went.
 */
function loadBundle() {
  const file = join(__dirname, '..', 'dist', 'tsnode.cjs');
  const debug = (what) => process.env.TSNODE_DEBUG_STARTUP && process.stderr.write(`tsnode startup: ${what}\n`);
  const bundleBuilt = statSync(file, { throwIfNoEntry: false });
  if (!bundleBuilt) {
    debug('esm (no bundle)');
    return undefined;
  }
  // In a checkout (src/ is there; the package ships none), `tsc` alone after `npm run build` leaves
  // an older bundle behind: run the newer ESM build then. (Installed files' times say nothing.)
  const checkout = statSync(join(__dirname, '..', 'src'), { throwIfNoEntry: false });
  const esmBuilt = checkout && statSync(join(__dirname, '..', 'dist', 'cli', 'main.js'), { throwIfNoEntry: false });
  if (esmBuilt && esmBuilt.mtimeMs > bundleBuilt.mtimeMs) {
    debug('esm (the bundle is older than dist/cli/main.js)');
    return undefined;
  }
  // Here, not at the top: `--version` needs neither.
  const { createRequire } = require('node:module');
  const { Script, constants: vmConstants } = require('node:vm');
  // ASCII only (the build checks): latin1 makes a one-byte string with no UTF-8 decoding.
  const source = readFileSync(file, 'latin1');
  let cachedData;
  try {
    cachedData = readFileSync(`${file}.cache`);
  } catch {
    // No cache (not made, or removed): the bundle still runs.
  }
  const script = new Script(source, { filename: file, cachedData, importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
  debug(`bundle, code cache ${cachedData === undefined ? 'absent' : script.cachedDataRejected ? 'rejected' : 'accepted'}`);
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
  const makeCache = process.env.TSNODE_MAKE_CODE_CACHE;
  if (makeCache) {
    // scripts/make-code-cache.mjs: the bytecode of every function this run compiled, under the
    // flags set above (run() turned TurboFan back on; the flags are part of the cache's check).
    process.on('exit', () => {
      setFlagsFromString('--no-turbofan');
      writeFileSync(makeCache, script.createCachedData());
    });
  }
  return module.exports;
}

#!/usr/bin/env node
// Kept in plain JavaScript so an unsupported Node gets a clear message instead of a syntax error.
const [major, minor, patch] = process.versions.node.split('.').map(Number);
const atLeast = (a, b, c) => major > a || (major === a && (minor > b || (minor === b && patch >= c)));
if (!atLeast(20, 18, 1)) {
  process.stderr.write(`tsnode needs Node.js 20.18.1 or newer; this is ${process.version}.\n`);
  process.exit(1);
}
import('../dist/cli/main.js').then(
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

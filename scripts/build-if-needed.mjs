#!/usr/bin/env node
// `npm run demo` builds first, but only when dist/ is missing or older than src/ (tsc takes
// seconds; a fresh clone has no dist/ at all). Exit code is tsc's.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const newest = (dir) => {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
};
const built = join(root, 'dist', 'cli', 'main.js');
const stale = !existsSync(built) || newest(join(root, 'src')) > newest(join(root, 'dist')) || statSync(join(root, 'package.json')).mtimeMs > statSync(built).mtimeMs;
if (stale) {
  process.stderr.write('building tsnode (npm run build)...\n');
  const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  process.exit(r.status ?? 1);
}

import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A copy of the built package's start-up files in a temporary directory: bin/ and
 * package.json copied, dist/cli and node_modules linked to this checkout's (the ESM build resolves
 * its imports from its real path), and the CLI bundle and its code cache only when asked for. So a
 * test can run the bin without the bundle, or with a cache of its choice, without touching dist/.
 * Returns the bin's path.
 */
export function binLayout(opts: { bundle: boolean; /** 'built': dist/'s own. */ cache?: 'built' | Buffer; /** An (empty) src/, as in a checkout. */ checkout?: boolean }): string {
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-bin-layout-'));
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'dist'));
  copyFileSync(join(ROOT, 'bin', 'tsnode.js'), join(dir, 'bin', 'tsnode.js'));
  copyFileSync(join(ROOT, 'bin', 'package.json'), join(dir, 'bin', 'package.json'));
  copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(ROOT, 'dist', 'cli'), join(dir, 'dist', 'cli'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  if (opts.checkout) mkdirSync(join(dir, 'src'));
  if (opts.bundle) copyFileSync(join(ROOT, 'dist', 'tsnode.cjs'), join(dir, 'dist', 'tsnode.cjs'));
  const cache = join(dir, 'dist', 'tsnode.cjs.cache');
  if (opts.cache === 'built') copyFileSync(join(ROOT, 'dist', 'tsnode.cjs.cache'), cache);
  else if (opts.cache) writeFileSync(cache, opts.cache);
  return join(dir, 'bin', 'tsnode.js');
}

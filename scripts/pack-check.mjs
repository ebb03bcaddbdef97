#!/usr/bin/env node
// Packs tsnode as npm would publish it, installs the tarball into a throw-away global prefix
// (away from this checkout), and runs the installed binary: --version, --help, a reference node
// and a status call against it. Proves that a clean clone produces a package that works on a
// machine without the checkout. Run by CI (.ci/run) as `npm run test:package`.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const work = mkdtempSync(join(tmpdir(), 'tsnode-pack-'));
const failures = [];

function step(what) {
  process.stderr.write(`pack-check: ${what}\n`);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

function check(ok, message) {
  if (!ok) failures.push(message);
}

try {
  step('npm pack (prepack builds dist/ from a clean slate)');
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], { cwd: root }))[0];
  const files = packed.files.map((f) => f.path);
  const tarball = join(work, packed.filename);

  for (const must of [
    'package.json',
    'README.md',
    'LICENSE',
    'bin/tsnode.js',
    'bin/package.json',
    'dist/cli/main.js',
    'dist/tsnode.cjs',
    'dist/tsnode.cjs.cache',
    'dist/index.js',
    'dist/index.d.ts',
    'dist/server/server.js',
    'docs/node-api.md',
  ]) {
    check(files.includes(must), `the package lacks ${must}`);
  }
  for (const f of files) {
    if (/^(src|test|bench|scripts|\.ci)\//.test(f)) failures.push(`the package ships ${f}, which belongs to the repository only`);
    if (f.endsWith('.map')) failures.push(`the package ships a source map (${f}) whose sources it does not ship`);
    if (f.includes('node_modules/')) failures.push(`the package ships ${f}`);
  }
  step(`${files.length} files, ${(packed.size / 1024).toFixed(0)} KiB packed`);

  step('npm install -g into a temporary prefix (better-sqlite3 may compile: this can take a minute)');
  const prefix = join(work, 'prefix');
  run('npm', ['install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: work });
  const bin = join(prefix, 'bin', 'tsnode');
  const env = { ...process.env, NO_COLOR: '1', TSNODE_NODES: '', XDG_STATE_HOME: join(work, 'state'), XDG_CONFIG_HOME: join(work, 'config') };

  const version = run(bin, ['--version'], { cwd: work, env }).trim();
  check(version === pkg.version, `tsnode --version printed ${JSON.stringify(version)}, expected ${pkg.version}`);
  // The installed bin starts from the CLI bundle with the code cache the build made (same Node here).
  const started = spawnSync(bin, ['--help'], { cwd: work, env: { ...env, TSNODE_DEBUG_STARTUP: '1' }, encoding: 'utf8' });
  check(/^tsnode startup: bundle, code cache accepted$/m.test(started.stderr), `the installed tsnode did not start from the bundle with its cache: ${started.stderr}`);
  const help = run(bin, ['--help'], { cwd: work, env });
  check(/Usage: tsnode/.test(help) && /sweep/.test(help), 'tsnode --help does not show the usage and the commands');
  check(!/not built yet/.test(help), 'the installed tsnode says it is not built');

  step('tsnode serve from the installed package, then tsnode status against it');
  const node = spawn(bin, ['serve', '--memory', '--host', '127.0.0.1', '--port', '0'], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let nodeErr = '';
  node.stderr.setEncoding('utf8').on('data', (d) => (nodeErr += d));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the installed node did not start in 20 s: ${nodeErr}`)), 20_000);
    node.once('exit', (code) => reject(new Error(`the installed node exited ${code}: ${nodeErr}`)));
    createInterface({ input: node.stdout }).on('line', (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  try {
    const status = spawnSync(bin, ['status', '--nodes', url, '--output', 'json'], { cwd: work, env, encoding: 'utf8' });
    check(status.status === 0, `tsnode status against the installed node exited ${status.status}: ${status.stderr}`);
    check(/"nnt"/.test(status.stdout), `tsnode status printed no status: ${status.stdout}`);
  } finally {
    node.kill('SIGTERM');
    await new Promise((resolve) => node.once('exit', resolve));
  }
} catch (err) {
  failures.push(err instanceof Error ? err.message : String(err));
} finally {
  rmSync(work, { recursive: true, force: true });
}

if (failures.length) {
  for (const f of failures) process.stderr.write(`pack-check: FAIL ${f}\n`);
  process.exit(1);
}
step('ok: the packed tarball installs and runs away from the checkout');

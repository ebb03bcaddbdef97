#!/usr/bin/env node
// Runs every bench/*.bench.mjs in turn (or those whose name contains argv[2]) and prints
// each one's result table. Each benchmark is its own process so one's memory or sockets
// cannot skew the next.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2] ?? '';
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.mjs') && f.includes(filter))
  .sort();
if (files.length === 0) {
  console.error(`no benchmark matches ${JSON.stringify(filter)}`);
  process.exit(2);
}
console.log(`# tsnode benchmarks on ${process.version}, ${(await import('node:os')).cpus().length} cores (noisy machine: compare ratios within one run)\n`);
let failed = 0;
for (const file of files) {
  console.log(`## ${file.replace('.bench.mjs', '')}`);
  const r = spawnSync(process.execPath, ['--expose-gc', join(here, file)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
  console.log('');
}
process.exit(failed ? 1 : 0);

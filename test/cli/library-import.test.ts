/**
 * What `import 'tsnode'` loads. A script that only talks to nodes must not load the reference
 * node with the library: better-sqlite3's native addon (a machine where it did not build could not
 * use the client at all), worker threads, the node's server and storage. startServer loads them
 * when called. Checked on the built package (dist/), in a process of its own.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

it('loads no part of the reference node until startServer is called, which then starts one', () => {
  const script = `
import { createRequire } from 'node:module';
const loaded = () => ({
  sqlite: Object.keys(createRequire(process.cwd() + '/').cache).some((k) => k.includes('better-sqlite3')),
  workerThreads: process.moduleLoadList.includes('NativeModule worker_threads'),
});
const lib = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'index.js')).href)});
const before = loaded();
const node = await lib.startServer({ host: '127.0.0.1', port: 0, dataDir: null });
const answer = await fetch(node.url + '/state');
const after = loaded();
await node.close();
console.log(JSON.stringify({ before, status: answer.status, sqliteAfter: after.sqlite }));
`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  expect(r.stderr).toBe('');
  expect(JSON.parse(r.stdout)).toEqual({ before: { sqlite: false, workerThreads: false }, status: 200, sqliteAfter: true });
});

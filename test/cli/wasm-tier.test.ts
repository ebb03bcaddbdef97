/**
 * undici parses HTTP with a WebAssembly llhttp. Left to itself, V8 recompiles its parser loop
 * with TurboFan on a background thread once it is warm (0.1-0.4 s of CPU), and Node waits for that
 * compile before the process exits: every command that made a request ended that much later, and
 * took that CPU from the nodes on a two-core machine. bin/tsnode.js turns the tier-up off
 * (--no-wasm-tier-up --no-wasm-dynamic-tiering). V8 traces each wasm compile and its compiler: a
 * real node, a real write, and no TurboFan in the trace.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, NO_USER_CONFIG } from '../helpers/cli.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';

const dir = mkdtempSync(join(tmpdir(), 'tsnode-wasm-tier-'));
let node: TestNode;

beforeAll(async () => {
  node = await startNode({ memory: true });
});
afterAll(async () => {
  await stopAllNodes();
});

/** Runs the CLI with V8 tracing every wasm function it compiles (the trace goes to stdout). */
function traced(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: '1', CI: undefined, TSNODE_NODES: undefined, ...NO_USER_CONFIG };
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
    const child = spawn(process.execPath, ['--trace-wasm-compilation-times', BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the HTTP parser compile', () => {
  it('stays on the quick compiler: no TurboFan compile for the process to wait for at exit', async () => {
    const records = Array.from({ length: 200 }, (_, i) =>
      JSON.stringify({ metric: `cpu.${i % 4}`, id: '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', offset: 1_700_000_040 + 60 * i, count: 1, value: i }),
    );
    const file = join(dir, 'records.ndjson');
    writeFileSync(file, records.join('\n') + '\n');
    // Small batches: a request each, so the parser runs warm.
    const r = await traced(['write', file, '--node', node.url, '--batch-size', '5', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const compiles = r.stdout.split('\n').filter((l) => l.startsWith('Compiled function'));
    // The trace works (llhttp was compiled, by Liftoff) ...
    expect(compiles.some((l) => l.includes('using Liftoff'))).toBe(true);
    // ... and nothing was recompiled with TurboFan.
    expect(compiles.filter((l) => l.includes('TurboFan'))).toEqual([]);
    const summary = JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))) as { written: number };
    expect(summary.written).toBe(200);
  });
});

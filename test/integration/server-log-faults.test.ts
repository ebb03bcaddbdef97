import { afterEach, describe, expect, it, vi } from 'vitest';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/server/sqlite-store.js';
import { startServer, type RunningNode } from '../../src/server/server.js';
import { UUID, nnt, rollup, write } from './server-helpers.js';

// The ingest log's writes, failable on demand (a full disk).
const faults = vi.hoisted(() => ({ failNext: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return {
    ...real,
    writeSync: (...args: Parameters<typeof real.writeSync>) => {
      if (faults.failNext > 0 && --faults.failNext === 0) {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      return (real.writeSync as (...a: unknown[]) => number)(...args);
    },
  };
});

const dirs: string[] = [];
const nodes: RunningNode[] = [];
const stores: SqliteStore[] = [];
afterEach(async () => {
  faults.failNext = 0;
  await Promise.all(stores.splice(0).map((s) => s.close()));
  for (const n of nodes.splice(0)) await n.close();
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'tsnode-logfault-'));
  dirs.push(d);
  return d;
};

describe('ingest log faults', () => {
  it('a write whose log append failed (disk full) leaves the log readable: later acknowledged writes survive a crash', async () => {
    const dir = tempDir();
    const node = await startServer({ port: 0, dataDir: dir, rollups: [60, 300] }, { onInternalError: () => {} });
    nodes.push(node);
    expect((await write(node.url, [nnt(0, { value: 1 })])).status).toBe(200);
    faults.failNext = 2; // the frame header goes out, its payload does not
    expect((await write(node.url, [nnt(60, { value: 2 })])).status).toBe(500);
    expect((await write(node.url, [nnt(120, { value: 3 })])).status).toBe(200);
    // What a kill -9 now leaves on disk: the files as they are (the writes are in the OS).
    const crashed = tempDir();
    cpSync(dir, crashed, { recursive: true });
    const s = new SqliteStore({ dataDir: crashed, rollups: [60, 300], histogramRollups: [60] });
    stores.push(s);
    const sid = s.findSeries(UUID, 'cpu')!;
    expect(s.rollupRows(sid, 60, 0, 180).map((r) => [r[0], r[3]])).toEqual([
      [0, 1],
      [120, 3],
    ]);
    // And the running node itself has them too.
    expect(await rollup(node.url, { start: '0.000', end: '180.000', span: '60s' })).toEqual([
      [0, 1],
      [60, null],
      [120, 3],
    ]);
  });
});

describe('flush faults', () => {
  it('a flush the timer cannot start (disk full) is reported and retried, and does not bring the node down', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const errors: unknown[] = [];
    try {
      const dir = tempDir();
      const node = await startServer({ port: 0, dataDir: dir, rollups: [60, 300] }, { onInternalError: (err) => errors.push(err) });
      nodes.push(node);
      expect((await write(node.url, [nnt(0, { value: 1 })])).status).toBe(200);
      faults.failNext = 1; // the new generation's header
      vi.advanceTimersByTime(2000);
      expect(String(errors[0])).toMatch(/ENOSPC/);
      vi.advanceTimersByTime(2000); // the next tick flushes
      expect(await rollup(node.url, { start: '0.000', end: '60.000', span: '60s' })).toEqual([[0, 1]]);
    } finally {
      vi.useRealTimers();
    }
  });
});

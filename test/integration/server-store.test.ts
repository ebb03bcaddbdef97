import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore, DB_FILE } from '../../src/server/sqlite-store.js';
import type { NntRecord } from '../../src/protocol/index.js';

const UUID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const dirs: string[] = [];
const stores: SqliteStore[] = [];
afterEach(() => {
  stores.splice(0).forEach((s) => s.close());
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

function open(dir: string): SqliteStore {
  const s = new SqliteStore({ dataDir: dir, rollups: [60, 300, 1800], histogramRollups: [60] });
  stores.push(s);
  return s;
}
const rec = (offset: number, count: number, value: number): NntRecord => ({
  metric: 'm',
  id: UUID,
  offset,
  count,
  value,
  derivative: 0,
  counter: 0,
  stddev: 0,
  derivative_stddev: 0,
  counter_stddev: 0,
});

describe('SqliteStore write-back of the newest buckets', () => {
  it('lists series with in-memory buckets in `pending` and recomputes them from raw after a crash', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-store-'));
    dirs.push(dir);
    const a = open(dir);
    a.writeNnt([rec(0, 1, 1), rec(60, 1, 3)]);
    a.writeNnt([rec(120, 2, 6)]);
    const sid = a.findSeries(UUID, 'm')!;
    // Readers see the in-memory bucket.
    expect(a.rollupRows(sid, 300, 0, 300).map((r) => [r[0], r[1], r[3]])).toEqual([[0, 4, 4]]);
    // Nothing of the 300 s bucket is on disk yet, but the series is listed as pending.
    const raw = new Database(join(dir, DB_FILE), { readonly: true });
    expect(raw.prepare('SELECT count(*) FROM nnt_rollup').pluck().get()).toBe(0);
    expect(raw.prepare('SELECT series_id FROM pending').pluck().all()).toEqual([sid]);
    raw.close();
    // "Crash": a second store opens the same files without the first ever flushing.
    const b = open(dir);
    expect(b.rollupRows(sid, 300, 0, 300).map((r) => [r[0], r[1], r[3]])).toEqual([[0, 4, 4]]);
    expect(b.rollupRows(sid, 1800, 0, 1800).map((r) => [r[0], r[1]])).toEqual([[0, 4]]);
  });

  it('stores a bucket when a newer one starts, and everything at close', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-store-'));
    dirs.push(dir);
    const a = open(dir);
    a.writeNnt([rec(0, 1, 1)]);
    a.writeNnt([rec(300, 1, 1)]);
    const raw = new Database(join(dir, DB_FILE), { readonly: true });
    const stored = (): unknown => raw.prepare('SELECT span, ts, count FROM nnt_rollup ORDER BY span, ts').raw().all();
    expect(stored()).toEqual([[300, 0, 1]]);
    a.close();
    expect(stored()).toEqual([
      [300, 0, 1],
      [300, 300, 1],
      [1800, 0, 2],
    ]);
    expect(raw.prepare('SELECT count(*) FROM pending').pluck().get()).toBe(0);
    raw.close();
  });
});

describe('SqliteStore series kinds', () => {
  it('the sweeper walks only the series that have data of the type being swept', () => {
    const s = new SqliteStore({ dataDir: null, rollups: [60], histogramRollups: [60] });
    stores.push(s);
    s.writeNnt([rec(0, 1, 1)]);
    s.writeText([{ metric: 't', id: UUID, offset: 0, value: 'x' }]);
    s.writeText([{ metric: 'm', id: UUID, offset: 0, value: 'y' }]);
    s.writeHistogram([{ metric: 'h', id: UUID, offset: 0, period: 60, histogram: 'AAAA' }]);
    const names = (type: 'nnt' | 'text' | 'histogram'): string[] => s.listSeries(0, 100, type).map((r) => r.metric);
    expect(names('nnt')).toEqual(['m']);
    expect(names('text')).toEqual(['m', 't']);
    expect(names('histogram')).toEqual(['h']);
  });
});

/**
 * Every statement the store runs more than once, prepared once per connection, each a named field
 * typed with its parameters and its result (pluck: the one column; raw: the columns as a tuple).
 */
import type Database from 'better-sqlite3';

type Stmt<Params extends unknown[], Result = unknown> = Database.Statement<Params, Result>;

export interface SeriesRow {
  id: number;
  uuid: string;
  metric: string;
}

export class Statements {
  readonly findSeries: Stmt<[uuid: string, metric: string], { id: number; kinds: number }>;
  readonly seriesById: Stmt<[id: number], { uuid: string; metric: string }>;
  readonly insertSeries: Stmt<[uuid: string, metric: string, kinds: number]>;
  readonly addKind: Stmt<[kind: number, id: number]>;
  readonly listSeries: Stmt<[afterId: number, kinds: number, limit: number], SeriesRow>;
  readonly indexedSeries: Stmt<[afterId: number, limit: number], SeriesRow & { kinds: number }>;
  readonly clearKinds: Stmt<[id: number]>;
  readonly dropSeriesData: Array<Stmt<[sid: number]>>;
  readonly textAny: Stmt<[sid: number, from: number, to: number], number>;
  readonly histogramAny: Stmt<[sid: number, from: number, to: number], number>;

  readonly getMeta: Stmt<[key: string], string>;
  readonly putMeta: Stmt<[key: string, value: string]>;

  readonly getChunk: Stmt<[sid: number, span: number, chunkTs: number], Buffer>;
  readonly putChunk: Stmt<[sid: number, span: number, chunkTs: number, data: Buffer]>;
  readonly deleteChunk: Stmt<[sid: number, span: number, chunkTs: number]>;
  readonly chunkRange: Stmt<[sid: number, span: number, from: number, to: number], [chunkTs: number, data: Buffer]>;
  readonly chunksBefore: Stmt<[sid: number, span: number, before: number], [chunkTs: number, data: Buffer]>;
  readonly bytesBefore: Stmt<[sid: number, span: number, before: number], number>;
  readonly deleteBefore: Stmt<[sid: number, span: number, before: number]>;

  readonly putParts: Stmt<[sid: number, ts: number, period: number, parts: Buffer]>;
  readonly deleteParts: Stmt<[sid: number, ts: number]>;
  readonly partsRange: Stmt<[sid: number, from: number, to: number], [ts: number, period: number, parts: Buffer]>;
  readonly sweepParts: Stmt<[sid: number, before: number]>;

  readonly putSkip: Stmt<[sid: number, generation: number, offset: number, before: number | null]>;
  readonly allSkips: Stmt<[], [sid: number, generation: number, offset: number, before: number | null]>;
  readonly dropSkips: Stmt<[throughGeneration: number]>;

  /** Time shards (storage/shard-index.ts): the first row at or after a time, and range deletes. */
  readonly firstChunkFrom: Stmt<[span: number, from: number], number>;
  readonly chunksInRange: Stmt<[span: number, from: number, to: number], Buffer>;
  readonly deleteChunkRange: Stmt<[span: number, from: number, to: number]>;
  readonly deletePartsRange: Stmt<[from: number, to: number]>;
  readonly firstHistogramFrom: Stmt<[period: number, from: number], number>;
  readonly deleteHistogramRange: Stmt<[period: number, from: number, to: number]>;

  readonly putText: Stmt<[sid: number, ts: number, value: string]>;
  readonly textRange: Stmt<[sid: number, from: number, to: number], [ts: number, value: string]>;
  readonly sweepText: Stmt<[sid: number, before: number]>;

  readonly putHistogram: Stmt<[sid: number, period: number, ts: number, histogram: string]>;
  readonly histogramRange: Stmt<[sid: number, period: number, from: number, to: number], [ts: number, period: number, histogram: string]>;
  readonly sweepHistogram: Stmt<[sid: number, period: number, before: number]>;

  constructor(db: Database.Database) {
    this.findSeries = db.prepare('SELECT id, kinds FROM series WHERE uuid = ? AND metric = ?');
    this.seriesById = db.prepare('SELECT uuid, metric FROM series WHERE id = ?');
    this.insertSeries = db.prepare('INSERT INTO series (uuid, metric, kinds) VALUES (?, ?, ?)');
    this.addKind = db.prepare('UPDATE series SET kinds = kinds | ? WHERE id = ?');
    this.listSeries = db.prepare('SELECT id, uuid, metric FROM series WHERE id > ? AND (kinds & ?) != 0 ORDER BY id LIMIT ?');
    this.indexedSeries = db.prepare('SELECT id, uuid, metric, kinds FROM series WHERE id > ? AND kinds != 0 ORDER BY id LIMIT ?');
    this.clearKinds = db.prepare('UPDATE series SET kinds = 0 WHERE id = ?');
    this.dropSeriesData = ['nnt_chunk', 'nnt_parts', 'text_data', 'histogram_data'].map((table) => db.prepare(`DELETE FROM ${table} WHERE series_id = ?`));
    this.textAny = db.prepare<[number, number, number], number>('SELECT 1 FROM text_data WHERE series_id = ? AND ts >= ? AND ts < ? LIMIT 1').pluck();
    this.histogramAny = db.prepare<[number, number, number], number>('SELECT 1 FROM histogram_data WHERE series_id = ? AND ts >= ? AND ts < ? LIMIT 1').pluck();

    this.getMeta = db.prepare<[string], string>('SELECT value FROM meta WHERE key = ?').pluck();
    this.putMeta = db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)');

    this.getChunk = db.prepare<[number, number, number], Buffer>('SELECT data FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts = ?').pluck();
    // An upsert: rewriting a chunk updates its row in place and leaves the time index alone.
    this.putChunk = db.prepare(
      'INSERT INTO nnt_chunk (series_id, span, chunk_ts, data) VALUES (?, ?, ?, ?) ON CONFLICT (series_id, span, chunk_ts) DO UPDATE SET data = excluded.data',
    );
    this.deleteChunk = db.prepare('DELETE FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts = ?');
    this.chunkRange = db
      .prepare<[number, number, number, number], [number, Buffer]>(
        'SELECT chunk_ts, data FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts >= ? AND chunk_ts < ? ORDER BY chunk_ts',
      )
      .raw();
    this.chunksBefore = db
      .prepare<[number, number, number], [number, Buffer]>('SELECT chunk_ts, data FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts < ? ORDER BY chunk_ts')
      .raw();
    this.bytesBefore = db.prepare<[number, number, number], number>('SELECT total(length(data)) FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts < ?').pluck();
    this.deleteBefore = db.prepare('DELETE FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts < ?');

    this.putParts = db.prepare('INSERT OR REPLACE INTO nnt_parts (series_id, ts, period, parts) VALUES (?, ?, ?, ?)');
    this.deleteParts = db.prepare('DELETE FROM nnt_parts WHERE series_id = ? AND ts = ?');
    this.partsRange = db.prepare<[number, number, number], [number, number, Buffer]>('SELECT ts, period, parts FROM nnt_parts WHERE series_id = ? AND ts >= ? AND ts < ?').raw();
    this.sweepParts = db.prepare('DELETE FROM nnt_parts WHERE series_id = ? AND ts < ?');

    this.putSkip = db.prepare('INSERT OR REPLACE INTO nnt_skip (series_id, generation, offset, before) VALUES (?, ?, ?, ?)');
    this.allSkips = db.prepare<[], [number, number, number, number | null]>('SELECT series_id, generation, offset, before FROM nnt_skip').raw();
    this.dropSkips = db.prepare('DELETE FROM nnt_skip WHERE generation <= ?');

    this.firstChunkFrom = db.prepare<[number, number], number>('SELECT chunk_ts FROM nnt_chunk WHERE span = ? AND chunk_ts >= ? ORDER BY span, chunk_ts LIMIT 1').pluck();
    this.chunksInRange = db.prepare<[number, number, number], Buffer>('SELECT data FROM nnt_chunk WHERE span = ? AND chunk_ts >= ? AND chunk_ts < ?').pluck();
    this.deleteChunkRange = db.prepare('DELETE FROM nnt_chunk WHERE span = ? AND chunk_ts >= ? AND chunk_ts < ?');
    this.deletePartsRange = db.prepare('DELETE FROM nnt_parts WHERE ts >= ? AND ts < ?');
    this.firstHistogramFrom = db.prepare<[number, number], number>('SELECT ts FROM histogram_data WHERE period = ? AND ts >= ? ORDER BY period, ts LIMIT 1').pluck();
    this.deleteHistogramRange = db.prepare('DELETE FROM histogram_data WHERE period = ? AND ts >= ? AND ts < ?');

    this.putText = db.prepare('INSERT OR REPLACE INTO text_data (series_id, ts, value) VALUES (?, ?, ?)');
    this.textRange = db.prepare<[number, number, number], [number, string]>('SELECT ts, value FROM text_data WHERE series_id = ? AND ts >= ? AND ts < ? ORDER BY ts').raw();
    this.sweepText = db.prepare('DELETE FROM text_data WHERE series_id = ? AND ts < ?');

    this.putHistogram = db.prepare(
      'INSERT INTO histogram_data (series_id, period, ts, histogram) VALUES (?, ?, ?, ?) ON CONFLICT (series_id, period, ts) DO UPDATE SET histogram = excluded.histogram',
    );
    this.histogramRange = db
      .prepare<[number, number, number, number], [number, number, string]>(
        'SELECT ts, period, histogram FROM histogram_data WHERE series_id = ? AND period = ? AND ts >= ? AND ts < ? ORDER BY ts',
      )
      .raw();
    this.sweepHistogram = db.prepare('DELETE FROM histogram_data WHERE series_id = ? AND period = ? AND ts < ?');
  }
}

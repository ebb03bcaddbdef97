/**
 * Turns what NodeClient.readRollup returned into tables, JSON and CSV. Pure: strings out.
 * Tables round numbers for reading; JSON and CSV carry the exact numbers.
 */
import { ROLLUP_MEMBERS, secondsFromMs, type RollupAll } from '../../protocol/index.js';
import { columnFormatter } from './number-format.js';
import { MAX_DIGITS_TEXT, type ValueDigits } from '../../client/rollup-rows.js';
import { AsciiBytes, PAIRS, POW10 } from './ascii-bytes.js';
import { csvField, csvRow } from './csv.js';
import { renderRollupTable, type TableColumn } from './rollup-table.js';

export type Cell = number | null;
/** One node's bucket value: a number, null (empty bucket), or all members for `type=all`. */
export type BucketValue = number | null | RollupAll;

/** A grid of buckets: one row per timestamp, one column per series. `undefined` = the series has no such bucket. */
export interface Grid {
  timestampsMs: number[];
  columns: Array<{ key: string; values: Array<Cell | undefined> }>;
}

const TWO = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const DAY_MS = 86_400_000;
let cachedDay = NaN;
let cachedDate = '';

/**
 * ISO UTC; always with milliseconds when the span is sub-second so a column stays uniform.
 * The date part is cached per day: a year of 300 s rows formats 105,120 times.
 */
export function bucketTime(ms: number, spanMs: number): string {
  const day = Math.floor(ms / DAY_MS);
  if (day !== cachedDay || !(ms >= 0)) {
    if (!(ms >= 0 && ms < 253402300800000)) return new Date(ms).toISOString(); // outside 0000-9999: let Date decide
    cachedDay = day;
    cachedDate = new Date(day * DAY_MS).toISOString().slice(0, 11);
  }
  const inDay = ms - day * DAY_MS;
  const secs = Math.floor(inDay / 1000);
  const milli = inDay - secs * 1000;
  const hms = `${TWO[Math.floor(secs / 3600)]}:${TWO[Math.floor(secs / 60) % 60]}:${TWO[secs % 60]}`;
  if (spanMs % 1000 === 0 && milli === 0) return `${cachedDate}${hms}Z`;
  return `${cachedDate}${hms}.${String(milli).padStart(3, '0')}Z`;
}

/** Columns of a single read: `value` (or the type's name) or one per member for `all`. */
export function gridOf(points: ReadonlyArray<{ timestampMs: number; value: BucketValue }>, all: boolean, valueKey = 'value'): Grid {
  const timestampsMs = points.map((p) => p.timestampMs);
  if (!all) return { timestampsMs, columns: [{ key: valueKey, values: points.map((p) => p.value as Cell) }] };
  return {
    timestampsMs,
    columns: ROLLUP_MEMBERS.map((m) => ({ key: m, values: points.map((p) => (p.value === null ? null : (p.value as RollupAll)[m])) })),
  };
}

export interface Paint {
  dim(s: string): string;
  bold(s: string): string;
  highlight(s: string): string;
}

/** Table lines for a grid; `marks` adds a narrow column (e.g. `≠` for differing rows) and highlights those rows. */
export function gridTable(grid: Grid, spanMs: number, opts: { paint?: Paint; headers?: string[]; marks?: boolean[]; width?: number | undefined } = {}): string[] {
  const paint = opts.paint;
  const columns: TableColumn[] = [{ header: 'time', align: 'left', cells: grid.timestampsMs.map((t) => bucketTime(t, spanMs)) }];
  grid.columns.forEach((c, i) => {
    const fmt = columnFormatter(c.values);
    columns.push({
      header: opts.headers?.[i] ?? c.key,
      align: 'right',
      cells: c.values.map((v) => (v === undefined ? '(none)' : v === null ? '-' : fmt(v))),
      ...(paint
        ? {
            paint: (text: string, r: number) => {
              const v = c.values[r];
              if (opts.marks?.[r]) return paint.highlight(text);
              return v === null || v === undefined ? paint.dim(text) : text;
            },
          }
        : {}),
    });
  });
  if (opts.marks) {
    const marks = opts.marks;
    columns.push({
      header: '≠',
      align: 'left',
      cells: marks.map((m) => (m ? '*' : '')),
      ...(paint ? { paint: (t: string, r: number) => (marks[r] ? paint.highlight(t) : t) } : {}),
    });
  }
  return renderRollupTable(columns, { ...(paint ? { paintHeader: paint.bold, paintBorder: paint.dim } : {}), width: opts.width });
}

/**
 * One JSON document: `meta` (what was read, from where; snake_case) and its `rows`, each
 * `{time, time_iso, value}` (epoch seconds and the ISO string) or, for `all`, the members as keys.
 * Exact numbers. The rows are written by hand: a year of 300 s buckets is 105,120 of them.
 */
export function gridJson(grid: Grid, spanMs: number, meta: Record<string, unknown> = {}): string {
  const keys = grid.columns.map((c) => `,${JSON.stringify(c.key)}:`);
  const parts: string[] = new Array<string>(grid.timestampsMs.length);
  for (let r = 0; r < grid.timestampsMs.length; r++) {
    const t = grid.timestampsMs[r]!;
    let row = `{"time":${secondsFromMs(t)},"time_iso":"${bucketTime(t, spanMs)}"`;
    for (let k = 0; k < keys.length; k++) row += keys[k]! + jsonValue(grid.columns[k]!.values[r]);
    parts[r] = `${row}}`;
  }
  return withRows(meta, parts);
}

/** `{...meta, "rows": [...]}` with each row (already JSON) on a line of its own. */
export function withRows(meta: Record<string, unknown>, rows: readonly string[]): string {
  const head = JSON.stringify({ ...meta, rows: [] }, null, 2);
  // The empty `"rows": []` closes the object: put the rows inside it.
  const open = head.slice(0, head.lastIndexOf('[]'));
  return rows.length === 0 ? `${head}\n` : `${open}[\n    ${rows.join(',\n    ')}\n  ]\n}\n`;
}

/** A finite number prints the same in JSON as in String(); NaN and infinities cannot occur in parsed JSON. */
function jsonValue(v: Cell | undefined): string {
  return v === null || v === undefined || !Number.isFinite(v) ? 'null' : String(v);
}

/** RFC 4180 CSV with a header row `time,time_iso,<columns>`; empty cell for null. */
export function gridCsv(grid: Grid, spanMs: number, extra?: { header: string; cells: string[] }): string {
  return [...gridCsvChunks(grid, spanMs, extra)].join('');
}

/**
 * The same CSV in pieces of `chunkRows` rows, so a caller can write as it renders: each piece
 * is garbage as soon as it is written, instead of 105,120 row strings living until one join.
 */
export function* gridCsvChunks(grid: Grid, spanMs: number, extra?: { header: string; cells: string[] }, chunkRows = 4096): Generator<string> {
  const head = ['time', 'time_iso', ...grid.columns.map((c) => c.key)];
  if (extra) head.push(extra.header);
  yield csvRow(head);
  const cols = grid.columns;
  let chunk = '';
  for (let r = 0; r < grid.timestampsMs.length; r++) {
    const t = grid.timestampsMs[r]!;
    // Numbers and ISO times never need quoting; only headers and extra cells go through csvField.
    chunk += `${secondsFromMs(t)},${bucketTime(t, spanMs)}`;
    for (let k = 0; k < cols.length; k++) {
      const v = cols[k]!.values[r];
      chunk += v === null || v === undefined ? ',' : `,${String(v)}`;
    }
    if (extra) chunk += `,${csvField(extra.cells[r])}`;
    chunk += '\r\n';
    if ((r + 1) % chunkRows === 0) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}

/** The day bucketTimeBytes wrote last, and its `YYYY-MM-DDT` as bytes. */
let bytesDay = NaN;
const dayBytes = new Uint8Array(11);

/** bucketTime(ms, spanMs) written as bytes: the same text, without a string per row. */
export function bucketTimeBytes(out: AsciiBytes, ms: number, spanMs: number): void {
  // Whole milliseconds in years 0000-9999 by hand; anything else exactly as bucketTime prints it.
  if (!(ms >= 0 && ms < 253402300800000 && Number.isInteger(ms))) {
    out.ascii(bucketTime(ms, spanMs));
    return;
  }
  const day = Math.floor(ms / DAY_MS);
  if (day !== bytesDay) setDay(day);
  out.bytes(dayBytes);
  const inDay = ms - day * DAY_MS;
  const secs = Math.floor(inDay / 1000);
  const milli = inDay - secs * 1000;
  const mins = Math.floor(secs / 60);
  out.clock(Math.floor(mins / 60), mins % 60, secs - mins * 60);
  if (spanMs % 1000 !== 0 || milli !== 0) {
    out.byte(46); // .
    out.three(milli);
  }
  out.byte(90); // Z
}

/** String(secondsFromMs(ms)) written as bytes. */
export function secondsBytes(out: AsciiBytes, ms: number): void {
  const s = ms / 1000;
  // Whole seconds (s * 1000 is exact below 2^53, so this is ms % 1000 === 0 without a remainder).
  if (s >= 0 && s < 1e15 && Number.isInteger(s) && s * 1000 === ms) out.uint(s);
  else out.ascii(String(secondsFromMs(ms)));
}

/** Bytes a CSV row of columnsCsv takes at most in practice (seconds, ISO time, a double, separators). */
const CSV_ROW_BYTES = 80;

/**
 * A single-value read's columns (NaN = empty bucket), and where the node's answer gave them, each
 * value's digits as the node wrote them (ValueDigits): printed as they are, the same number.
 */
export interface Columns {
  timestampsMs: Float64Array;
  values: Float64Array;
  digits?: ValueDigits | undefined;
}

/**
 * CSV of a single-value read straight from its columns, as bytes: byte for byte what gridCsv
 * prints for the same rows (UTF-8), but for a value the node wrote with other digits than
 * String() would (ValueDigits: its digits, the same number), without a grid or a string per row.
 * All rows in one call into one buffer sized for them (`rowBytes` each, a test can say less): V8
 * compiles the row loop once while it runs, and the loop never meets a full buffer.
 */
export function columnsCsv(cols: Columns, key: string, spanMs: number, rowBytes = CSV_ROW_BYTES): Buffer {
  return new ColumnsCsv(key, spanMs, cols.timestampsMs.length, rowBytes).finish(cols);
}

/**
 * columnsCsv built as the rows arrive (`add` is a client's RowsSoFar): the rows in so far are
 * formatted while the node sends the rest, and `finish` adds what is left. The same bytes; nothing
 * is printed from here, so the output stays all or nothing.
 */
export class ColumnsCsv {
  private readonly head: Buffer;
  private out: AsciiBytes;
  private done = 0;

  private readonly rows: number;

  /**
   * `rows`: how many rows to size the buffer for, at most 2^18 (20 MB): the count a query asks
   * for is not yet an answer (a node refuses a range too long for it), and more rows grow it.
   */
  constructor(
    key: string,
    private readonly spanMs: number,
    rows: number,
    private readonly rowBytes = CSV_ROW_BYTES,
  ) {
    this.rows = Math.min(Math.max(0, rows), 1 << 18);
    this.head = Buffer.from(csvRow(['time', 'time_iso', key]), 'utf8');
    this.out = this.fresh();
  }

  private fresh(): AsciiBytes {
    const out = new AsciiBytes(this.head.length + this.rowBytes * this.rows);
    out.bytes(this.head);
    return out;
  }

  /** The rows of the columns up to `rows`; `rows` 0 starts over (the read was retried). */
  add(timestampsMs: Float64Array, values: Float64Array, rows: number, digits?: ValueDigits): void {
    if (rows === 0 && this.done > 0) {
      this.out = this.fresh();
      this.done = 0;
    }
    if (rows <= this.done) return;
    csvRowsBytes(this.out, timestampsMs, values, digits, this.spanMs, this.done, rows);
    this.done = rows;
  }

  /** The CSV of all of the final columns. */
  finish(cols: Columns): Buffer {
    this.add(cols.timestampsMs, cols.values, cols.timestampsMs.length, cols.digits);
    return this.out.text();
  }
}

/**
 * dayBytes for `day` (days since 1970-01-01, up to 9999-12-31): the civil date by arithmetic
 * (H. Hinnant's days_from_civil, inverted), not through Date and a string, so V8 optimising the
 * row loop that calls it compiles a few lines, not Date's and Buffer.from's code.
 */
function setDay(day: number): void {
  const z = day + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const hi = 2 * Math.floor(y / 100);
  const lo = 2 * (y % 100);
  dayBytes[0] = PAIRS[hi]!;
  dayBytes[1] = PAIRS[hi + 1]!;
  dayBytes[2] = PAIRS[lo]!;
  dayBytes[3] = PAIRS[lo + 1]!;
  dayBytes[4] = 45; // -
  dayBytes[5] = PAIRS[2 * m]!;
  dayBytes[6] = PAIRS[2 * m + 1]!;
  dayBytes[7] = 45;
  dayBytes[8] = PAIRS[2 * d]!;
  dayBytes[9] = PAIRS[2 * d + 1]!;
  dayBytes[10] = 84; // T
  bytesDay = day;
}

/**
 * Bytes a CSV row of csvRowsBytes's own path can take: seconds (12 digits), an ISO time with
 * milliseconds, a double's longest String() (25) or the node's kept digits, separators.
 */
const CSV_ROW_MAX = 12 + 1 + 24 + 1 + Math.max(25, MAX_DIGITS_TEXT) + 2;

/**
 * Rows `from` to `to` (not included) of columnsCsv. One function that writes the bytes itself,
 * with no call per field: the first few thousand rows of a read run before V8 has optimised it,
 * and in the interpreter every call costs more than the bytes it writes. Timestamps that are not
 * whole seconds from 1970 to 9999 go through secondsBytes and bucketTimeBytes.
 */
function csvRowsBytes(out: AsciiBytes, timestampsMs: Float64Array, values: Float64Array, digits: ValueDigits | undefined, spanMs: number, from: number, to: number): void {
  const millis = spanMs % 1000 !== 0;
  const kept = digits?.bytes;
  const ends = digits?.ends;
  let b = out.room(CSV_ROW_MAX);
  let p = out.length;
  for (let r = from; r < to; r++) {
    if (p + CSV_ROW_MAX > b.length) {
      out.length = p;
      b = out.room(CSV_ROW_MAX * Math.min(to - r, 4096));
    }
    const t = timestampsMs[r]!;
    const v = values[r]!;
    const s = t / 1000;
    if (s >= 0 && s < 253402300800 && s === Math.floor(s) && s * 1000 === t) {
      // Whole seconds: the digits, then `YYYY-MM-DDT` (the day's, cached) and `HH:MM:SS`.
      let width = 1;
      while (width < 12 && s >= POW10[width]!) width++;
      let q = s;
      for (let k = p + width - 1; k >= p; k--) {
        const d = Math.floor(q / 10);
        b[k] = 48 + (q - d * 10);
        q = d;
      }
      p += width;
      b[p++] = 44; // ,
      const day = Math.floor(s / 86400);
      if (day !== bytesDay) setDay(day);
      for (let k = 0; k < 11; k++) b[p++] = dayBytes[k]!;
      const secs = s - day * 86400;
      const mins = Math.floor(secs / 60);
      const h = 2 * Math.floor(mins / 60);
      const m = 2 * (mins % 60);
      const sec = 2 * (secs - mins * 60);
      b[p++] = PAIRS[h]!;
      b[p++] = PAIRS[h + 1]!;
      b[p++] = 58; // :
      b[p++] = PAIRS[m]!;
      b[p++] = PAIRS[m + 1]!;
      b[p++] = 58;
      b[p++] = PAIRS[sec]!;
      b[p++] = PAIRS[sec + 1]!;
      if (millis) {
        b[p++] = 46; // .
        b[p++] = 48;
        b[p++] = 48;
        b[p++] = 48;
      }
      b[p++] = 90; // Z
    } else {
      out.length = p;
      secondsBytes(out, t);
      out.byte(44);
      bucketTimeBytes(out, t, spanMs);
      b = out.room(CSV_ROW_MAX);
      p = out.length;
    }
    b[p++] = 44;
    const keptFrom = ends === undefined || r === 0 ? 0 : ends[r - 1]!;
    const keptTo = ends === undefined ? 0 : ends[r]!;
    if (keptTo > keptFrom) {
      // The node's digits (at most MAX_DIGITS_TEXT bytes: CSV_ROW_MAX has room for them).
      for (let k = keptFrom; k < keptTo; k++) b[p++] = kept![k]!;
    } else if (v === v) {
      const text = String(v);
      for (let k = 0; k < text.length; k++) b[p++] = text.charCodeAt(k);
    }
    b[p++] = 13;
    b[p++] = 10;
  }
  out.length = p;
}

/** Bytes a JSON row of columnsJson takes at most in practice. */
const JSON_ROW_BYTES = 112;

/**
 * gridJson(gridOfColumns(timestampsMs, values), spanMs, meta) byte for byte (UTF-8), written as
 * bytes: `meta` and its `rows`, one `{"time":..,"time_iso":"..","value":..}` per line.
 */
export function columnsJson(cols: Columns, spanMs: number, meta: Record<string, unknown> = {}, rowBytes = JSON_ROW_BYTES): Buffer {
  const n = cols.timestampsMs.length;
  if (n === 0) return Buffer.from(withRows(meta, []), 'utf8');
  const head = JSON.stringify({ ...meta, rows: [] }, null, 2);
  // As withRows: the rows go inside the empty `"rows": []` that closes the object.
  const open = Buffer.from(`${head.slice(0, head.lastIndexOf('[]'))}[\n    `, 'utf8');
  const out = new AsciiBytes(open.length + rowBytes * n + 8);
  out.bytes(open);
  jsonRowsBytes(out, cols, spanMs);
  out.ascii('\n  ]\n}\n');
  return out.text();
}

const TIME_KEY = Buffer.from('{"time":', 'latin1');
const ISO_KEY = Buffer.from(',"time_iso":"', 'latin1');
const VALUE_KEY = Buffer.from('","value":', 'latin1');
const ROW_END = Buffer.from('},\n    ', 'latin1');

/** The rows of columnsJson, separated by `,\n    `. */
function jsonRowsBytes(out: AsciiBytes, { timestampsMs, values, digits }: Columns, spanMs: number): void {
  const n = timestampsMs.length;
  for (let r = 0; r < n; r++) {
    const t = timestampsMs[r]!;
    const v = values[r]!;
    if (r > 0) out.bytes(ROW_END);
    out.bytes(TIME_KEY);
    secondsBytes(out, t);
    out.bytes(ISO_KEY);
    bucketTimeBytes(out, t, spanMs);
    out.bytes(VALUE_KEY);
    const from = digits === undefined || r === 0 ? 0 : digits.ends[r - 1]!;
    const until = digits === undefined ? 0 : digits.ends[r]!;
    if (until > from) out.bytes(digits!.bytes.subarray(from, until));
    else out.ascii(Number.isFinite(v) ? String(v) : 'null');
  }
  out.byte(125); // }
}

/** A grid from a single-value read's columns (NaN = empty bucket), for the table and JSON renderers. */
export function gridOfColumns(timestampsMs: Float64Array, values: Float64Array, valueKey = 'value'): Grid {
  const n = timestampsMs.length;
  const ts = new Array<number>(n);
  const vs = new Array<Cell>(n);
  for (let i = 0; i < n; i++) {
    ts[i] = timestampsMs[i]!;
    const v = values[i]!;
    vs[i] = v === v ? v : null;
  }
  return { timestampsMs: ts, columns: [{ key: valueKey, values: vs }] };
}

export interface NodeSeries {
  node: string;
  points: ReadonlyArray<{ timestampMs: number; value: BucketValue }>;
}

export interface Comparison {
  grid: Grid;
  /** Per column: the node it came from and the member (for `all`). */
  sources: Array<{ node: string; member?: string }>;
  /** Per row: do the nodes disagree? */
  differs: boolean[];
  differing: number;
}

/** Equal numbers, or within `tolerance` relative to the larger magnitude (0 = exact). */
export function sameNumber(a: number, b: number, tolerance: number): boolean {
  if (Object.is(a, b) || a === b) return true;
  if (tolerance <= 0) return false;
  return Math.abs(a - b) <= tolerance * Math.max(Math.abs(a), Math.abs(b));
}

function sameValue(a: BucketValue | undefined, b: BucketValue | undefined, tolerance: number): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (typeof a === 'number' || typeof b === 'number') return typeof a === 'number' && typeof b === 'number' && sameNumber(a, b, tolerance);
  return ROLLUP_MEMBERS.every((m) => {
    const x = a[m];
    const y = b[m];
    return x === y || (x !== null && y !== null && sameNumber(x, y, tolerance));
  });
}

/**
 * Lines the nodes' buckets up by timestamp (union of all timestamps) and marks rows where any
 * two nodes differ: another value, null against a number, or a bucket one node does not have.
 */
export function compareSeries(series: readonly NodeSeries[], all: boolean, tolerance = 0): Comparison {
  const byNode = series.map((s) => new Map(s.points.map((p) => [p.timestampMs, p.value] as const)));
  const stamps = new Set<number>();
  for (const s of series) for (const p of s.points) stamps.add(p.timestampMs);
  const timestampsMs = [...stamps].sort((a, b) => a - b);
  const differs = timestampsMs.map((t) => {
    const first = byNode[0]?.get(t);
    return byNode.some((m) => !sameValue(m.get(t), first, tolerance));
  });
  const columns: Grid['columns'] = [];
  const sources: Comparison['sources'] = [];
  series.forEach((s, i) => {
    const m = byNode[i]!;
    if (!all) {
      columns.push({ key: s.node, values: timestampsMs.map((t) => m.get(t) as Cell | undefined) });
      sources.push({ node: s.node });
      return;
    }
    for (const member of ROLLUP_MEMBERS) {
      columns.push({
        key: `${s.node} ${member}`,
        values: timestampsMs.map((t) => {
          const v = m.get(t);
          return v === undefined ? undefined : v === null ? null : (v as RollupAll)[member];
        }),
      });
      sources.push({ node: s.node, member });
    }
  });
  return { grid: { timestampsMs, columns }, sources, differs, differing: differs.filter(Boolean).length };
}

/** The compare document for --output json: `meta`, then whether the nodes agree, each node's outcome, and the rows lined up. */
export function comparisonJson(
  cmp: Comparison,
  series: readonly NodeSeries[],
  spanMs: number,
  nodes: ReadonlyArray<{ node: string; ok: boolean; error?: { code: string; message: string }; rows?: number; limited?: boolean }>,
  meta: Record<string, unknown> = {},
): string {
  const byNode = series.map((s) => new Map(s.points.map((p) => [p.timestampMs, p.value] as const)));
  const rows = cmp.grid.timestampsMs.map((t, r) => {
    const values: Record<string, BucketValue> = {};
    series.forEach((s, i) => {
      const v = byNode[i]!.get(t);
      if (v !== undefined) values[s.node] = v;
    });
    return { time: secondsFromMs(t), time_iso: bucketTime(t, spanMs), differs: cmp.differs[r]!, values };
  });
  return `${JSON.stringify({ ...meta, identical: cmp.differing === 0 && nodes.every((n) => n.ok), differing: cmp.differing, nodes, rows }, null, 2)}\n`;
}

/** Short node label for table headers: host:port (and path), without the scheme. */
export function nodeLabel(url: string): string {
  return url.replace(/^https?:\/\//, '');
}

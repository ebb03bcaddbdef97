/**
 * The fast path of `/write/nnt`: parses a body that is a JSON array of plain records (no parts,
 * or a `parts` that says "no parts") straight from its bytes into log entries
 * (protocol/record-scan.ts scans each record). Anything else
 * returns null and the caller takes the general path (JSON.parse and validateNntRecord), which
 * accepts the same records and words every error.
 */
import { isWs, metricAt, sameBytes, scanNntRecord, uuidAt, type ScannedStrings } from '../protocol/index.js';
import { LOG_ENTRY, type PackedWrite, type WriteSeries } from './packed-write.js';

const COMMA = 0x2c;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

/** A parsed body, with where each record's JSON lies in it when asked (see parseNntBody). */
export interface ParsedNnt extends PackedWrite {
  /** Record i spans bytes [spans[2i], spans[2i + 1]) of the body; null unless asked for. */
  spans: Uint32Array | null;
}

/**
 * Parses a body of plain records; null when it is anything else (see the top). With `withSpans`
 * it also says where each record lies in the body, so a replicating node can journal the records
 * for a peer as the client spelled them, without encoding them again.
 */
export function parseNntBody(buf: Uint8Array, smallestSpan: number, withSpans = false): ParsedNnt | null {
  const len = buf.length;
  let p = 0;
  let entries = new Float64Array(Math.max(16, Math.ceil(len / 120)) * LOG_ENTRY);
  let spans = withSpans ? new Uint32Array((entries.length / LOG_ENTRY) * 2) : null;
  const series: WriteSeries = { id: [], metric: [] };
  const bySpelling = new Spellings();
  const at: ScannedStrings = { idFrom: -1, idTo: -1, metricFrom: -1, metricTo: -1, idIsUuid: false };
  // The previous record's id and metric bytes and series: most records repeat them.
  let idFrom = -1;
  let idTo = -1;
  let metricFrom = -1;
  let metricTo = -1;
  let k = -1;
  let n = 0;

  while (isWs(buf[p])) p++;
  if (buf[p] !== LBRACKET) return null;
  p++;
  while (isWs(buf[p])) p++;
  if (buf[p] === RBRACKET) {
    p++;
    while (isWs(buf[p])) p++;
    return p === len ? { entries: entries.subarray(0, 0), series, parts: null, spans: spans && spans.subarray(0, 0) } : null;
  }
  for (;;) {
    if ((n + 1) * LOG_ENTRY > entries.length) {
      const grown = new Float64Array(entries.length * 2);
      grown.set(entries);
      entries = grown;
      if (spans) {
        const more = new Uint32Array(spans.length * 2);
        more.set(spans);
        spans = more;
      }
    }
    // Fields left out stay 0: `entries` is fresh, and a slot is written once.
    const o = n * LOG_ENTRY;
    if (spans) spans[2 * n] = p;
    p = scanNntRecord(buf, p, entries, o, smallestSpan, at);
    if (p < 0) return null;
    if (spans) spans[2 * n + 1] = p;
    // k < 0: no previous record (its empty ranges would match an empty id and metric unchecked).
    if (k < 0 || !sameBytes(buf, at.idFrom, at.idTo, idFrom, idTo) || !sameBytes(buf, at.metricFrom, at.metricTo, metricFrom, metricTo)) {
      k = bySpelling.find(buf, at.idFrom, at.idTo, at.metricFrom, at.metricTo);
      if (k < 0) {
        // A spelling not seen in this body: check it, and find or add its series (an upper-case
        // id spells the same series as its lower-case form).
        const id = uuidAt(buf, at.idFrom, at.idTo);
        const metric = metricAt(buf, at.metricFrom, at.metricTo);
        if (id === null || metric === null) return null;
        k = bySpelling.seriesNamed(id, metric, series);
        bySpelling.add(k);
      }
      idFrom = at.idFrom;
      idTo = at.idTo;
      metricFrom = at.metricFrom;
      metricTo = at.metricTo;
    }
    entries[o] = k;
    n++;
    while (isWs(buf[p])) p++;
    const c = buf[p];
    if (c === COMMA) {
      p++;
      while (isWs(buf[p])) p++;
      continue;
    }
    if (c === RBRACKET) {
      p++;
      while (isWs(buf[p])) p++;
      return p === len ? { entries: entries.subarray(0, n * LOG_ENTRY), series, parts: null, spans: spans && spans.subarray(0, 2 * n) } : null;
    }
    return null;
  }
}

/**
 * The (id, metric) spellings of one body by the hash of their bytes, each with its series: a
 * body interleaving many series checks and decodes each spelling once, not once per record.
 */
class Spellings {
  private readonly head = new Map<number, number>();
  private readonly next: number[] = [];
  private readonly ranges: number[] = [];
  private readonly seriesOf: number[] = [];
  private readonly names = new Map<string, number>();
  private hash = 0;
  private from: [number, number, number, number] = [0, 0, 0, 0];

  /** The series of this spelling, or -1 when it is new (then `add` may follow). */
  find(buf: Uint8Array, idFrom: number, idTo: number, metricFrom: number, metricTo: number): number {
    let h = 0x811c9dc5;
    for (let i = idFrom; i < idTo; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
    for (let i = metricFrom; i < metricTo; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
    this.hash = h;
    this.from = [idFrom, idTo, metricFrom, metricTo];
    const r = this.ranges;
    for (let s = this.head.get(h) ?? -1; s >= 0; s = this.next[s]!) {
      const o = s * 4;
      if (sameBytes(buf, idFrom, idTo, r[o]!, r[o + 1]!) && sameBytes(buf, metricFrom, metricTo, r[o + 2]!, r[o + 3]!)) return this.seriesOf[s]!;
    }
    return -1;
  }

  /** The index of the series with these names in `series`, added when new. */
  seriesNamed(id: string, metric: string, series: WriteSeries): number {
    const key = `${id}\n${metric}`;
    let k = this.names.get(key);
    if (k === undefined) {
      this.names.set(key, (k = series.id.length));
      series.id.push(id);
      series.metric.push(metric);
    }
    return k;
  }

  /** Remembers the spelling `find` was last asked about as series k. */
  add(k: number): void {
    const s = this.seriesOf.length;
    this.seriesOf.push(k);
    this.ranges.push(...this.from);
    this.next.push(this.head.get(this.hash) ?? -1);
    this.head.set(this.hash, s);
  }
}

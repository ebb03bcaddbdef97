/**
 * `PUT|POST /write/nnt`, `/write/text`, `/histogram/write`: validate every record, then store all
 * in one transaction. Bodies are read as JSON whatever their Content-Type (see parseJson).
 */
import type { IncomingMessage } from 'node:http';
import {
  decodeHistogram,
  ProtocolError,
  type DataType,
  validateHistogramRecord,
  type HistogramRecord,
  validateNntRecord,
  validateTextRecord,
  type Validated,
} from '../../protocol/index.js';
import { parseJson, readBody, sendJson } from '../http.js';
import { parseNntBody } from '../nnt-body.js';
import { LOG_ENTRY } from '../packed-write.js';
import { packedShape, recordsShape, replicateWrite, selectPacked } from '../replication/write-routing.js';
import { misdirectedPacked, misdirectedRecords, writeAnswer } from '../write-answer.js';
import type { Handler, NodeContext } from './context.js';

function recordsOf(bytes: Buffer): unknown[] {
  const body = parseJson(bytes);
  if (!Array.isArray(body)) {
    throw new ProtocolError(400, 'bad_request', `the body must be a JSON array of records (got ${body === null ? 'null' : typeof body})`);
  }
  return body;
}

/** Validates every record; the first invalid one fails the whole request, naming index, field and reason. */
function validateAll<T>(items: unknown[], validate: (item: unknown) => Validated<T>): T[] {
  const out = new Array<T>(items.length);
  for (let i = 0; i < items.length; i++) {
    const v = validate(items[i]);
    if (!v.ok) {
      throw new ProtocolError(400, 'invalid_record', `record [${i}] ${v.issue.field}: ${v.issue.reason}; nothing was stored`, {
        index: i,
        field: v.issue.field,
        reason: v.issue.reason,
      });
    }
    out[i] = v.record;
  }
  return out;
}

export const writeNnt: Handler = async (req, res, _target, node) => {
  const bytes = await readBody(req, node.config.maxBodyBytes);
  const smallestSpan = node.store.rollups[0]!;
  // Plain records (also those whose parts say "no parts", as the production Go client sends them)
  // go straight from bytes to the store; anything else (real parts, extra fields, escapes, an
  // invalid record) takes the general path, which words the errors.
  // A replicating node asks where each record lies in the body: a peer's share is journaled as those bytes.
  const packed = parseNntBody(bytes, smallestSpan, node.replication !== null);
  if (packed) {
    const routed = replicateWrite(node, req, 'nnt', packedShape(packed, bytes));
    const local = routed === null ? packed : selectPacked(packed, routed.local);
    // Counted before the store takes the entries: it rewrites their series slots in place.
    const misdirected = routed?.misdirected ?? misdirectedPacked(node.identity, packed);
    node.store.writePacked(local);
    node.late.note('nnt', local.entries.length / LOG_ENTRY, (i) => local.entries[i * LOG_ENTRY + 1]!);
    sendJson(res, 200, writeAnswer(packed.entries.length / LOG_ENTRY, misdirected));
  } else {
    const items = recordsOf(bytes);
    const records = validateAll(items, (item) => validateNntRecord(item, { smallestSpan }));
    const n = storeReplicated(node, req, 'nnt', { bytes, items }, records, (local) => node.store.writeNnt(local));
    sendJson(res, 200, writeAnswer(n, misdirectedRecords(node.identity, records)));
  }
};

/** A write's body: its bytes, and the records JSON.parse read from them. */
interface Body {
  bytes: Buffer;
  items: unknown[];
}

async function readRecords(req: IncomingMessage, node: NodeContext): Promise<Body> {
  const bytes = await readBody(req, node.config.maxBodyBytes);
  return { bytes, items: recordsOf(bytes) };
}

/** Journals the other owners' share (as the body's own bytes), stores this node's, notes late data; returns the records accepted. */
function storeReplicated<T extends { id: string; metric: string; offset: number }>(
  node: NodeContext,
  req: IncomingMessage,
  kind: DataType,
  body: Body,
  records: readonly T[],
  store: (local: readonly T[]) => number,
): number {
  const routed = replicateWrite(node, req, kind, recordsShape(body.bytes, body.items, records));
  const local = routed === null || routed.local === 'all' ? records : routed.local.map((i) => records[i]!);
  store(local);
  node.late.note(kind, local.length, (i) => local[i]!.offset);
  return records.length;
}

export const writeText: Handler = async (req, res, _target, node) => {
  const body = await readRecords(req, node);
  const records = validateAll(body.items, validateTextRecord);
  const n = storeReplicated(node, req, 'text', body, records, (local) => node.store.writeText(local));
  sendJson(res, 200, writeAnswer(n, misdirectedRecords(node.identity, records)));
};

/**
 * A histogram the node could not decode is refused: its reads answer each histogram as bins and
 * counts (api/read-histogram.md), so storing bytes it cannot read would fail every later read.
 */
function decodableHistogram(v: Validated<HistogramRecord>): Validated<HistogramRecord> {
  if (!v.ok) return v;
  const decoded = decodeHistogram(v.record.histogram);
  return decoded.ok ? v : { ok: false, issue: { field: 'histogram', reason: `${decoded.reason}: not a histogram in the store's encoding` } };
}

export const writeHistogram: Handler = async (req, res, _target, node) => {
  const body = await readRecords(req, node);
  const periods = node.store.histogramRollups;
  const records = validateAll(body.items, (item) => decodableHistogram(validateHistogramRecord(item, periods)));
  const n = storeReplicated(node, req, 'histogram', body, records, (local) => node.store.writeHistogram(local));
  sendJson(res, 200, writeAnswer(n, misdirectedRecords(node.identity, records)));
};

/** `GET /rollup/<uuid>/<metric>`: numeric reads in buckets of any span. */
import {
  ADVISORY_LIMIT_HEADER,
  DEFAULT_ROLLUP_TYPE,
  CodecError,
  DEFAULT_ENGINE,
  ENGINES,
  MAX_METRIC_LENGTH,
  MEMBER_OF_TYPE,
  ProtocolError,
  RESULTS_LIMITED_HEADER,
  ROLLUP_TYPES,
  ROLLUP_TYPE_ALIASES,
  UUID_RE,
  canonicalRollupType,
  isBareSeconds,
  parseSpan,
  parseTimestamp,
  type Engine,
  type RollupType,
} from '../../protocol/index.js';
import { decodePathPart, sendJsonPieces } from '../http.js';
import { checkEngineSpan, planBuckets, readBuckets, readMember, renderRollup, renderValues } from '../rollup-read.js';
import { STORED_MEMBERS, type StoredMember } from '../store.js';
import type { Handler } from './context.js';

function required(query: URLSearchParams, name: string): string {
  const v = query.get(name);
  if (v === null) throw new ProtocolError(400, 'invalid_query', `missing query parameter ${name}`, { field: name });
  return v;
}

function codec<T>(field: string, parse: () => T, hint = ''): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof CodecError) {
      throw new ProtocolError(400, 'invalid_query', `${field}: ${err.message}; expected ${err.expected}${hint}`, { field, value: err.value, expected: err.expected });
    }
    throw err;
  }
}

/**
 * A start_ts/end_ts in epoch ms. A bare integer is what the production Go client sends: a node
 * started with --lenient-timestamps reads it as .000; a strict one says which flag would.
 */
function timestampParam(query: URLSearchParams, field: 'start_ts' | 'end_ts', lenient: boolean): number {
  const text = required(query, field);
  const hint = !lenient && isBareSeconds(text) ? ` (this node is strict: write ${text}.000, or start it with --lenient-timestamps to read a bare integer as .000)` : '';
  return codec(field, () => parseTimestamp(text, { bareSeconds: lenient }), hint);
}

/** Parses the uuid path segment (lower-cased) or throws 400 invalid_uuid. */
export function uuidParam(raw: string): string {
  const uuid = decodePathPart(raw, 'uuid');
  if (!UUID_RE.test(uuid)) {
    throw new ProtocolError(400, 'invalid_uuid', `uuid: ${JSON.stringify(uuid)} is not a UUID (expected e.g. 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f)`, {
      field: 'uuid',
      value: uuid,
    });
  }
  return uuid.toLowerCase();
}

/** Decodes the metric from the rest of the path (a raw `/` joins the pieces back), exactly once. */
export function metricParam(rawParts: readonly string[]): string {
  const metric = decodePathPart(rawParts.join('/'), 'metric');
  if (metric.length === 0) throw new ProtocolError(400, 'bad_request', 'metric: the metric name is empty', { field: 'metric' });
  if (metric.length > MAX_METRIC_LENGTH) {
    throw new ProtocolError(400, 'bad_request', `metric: the name is ${metric.length} characters long; at most ${MAX_METRIC_LENGTH} are allowed`, {
      field: 'metric',
      max: MAX_METRIC_LENGTH,
    });
  }
  return metric;
}

/**
 * `x-snowth-advisory-limit`: a positive whole number caps the answer; `none` and `-1` (the
 * store's docs give both for "no limit") and an absent header lift it. Undefined = no cap.
 */
export function advisoryLimit(raw: string | string[] | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const a = (Array.isArray(raw) ? raw[0]! : raw).trim().toLowerCase();
  if (a === 'none' || a === '-1') return undefined;
  if (!/^\d{1,12}$/.test(a) || Number(a) === 0) {
    throw new ProtocolError(400, 'invalid_header', `${ADVISORY_LIMIT_HEADER}: ${JSON.stringify(a)} is not a positive whole number, "none" or -1`, {
      field: ADVISORY_LIMIT_HEADER,
      value: a,
    });
  }
  return Number(a);
}

/**
 * The spec's engines (developer.yaml /rollup): dispatch, nnt, recalc, and `dispatch_coarsen`,
 * which after dispatch's fill from raw data fills what is still empty from coarser rollups. On
 * the reference node dispatch already fills every empty bucket from the raw records it keeps
 * (nothing is left for coarser rollups to fill), so dispatch_coarsen answers as dispatch.
 */
const SPEC_ENGINES = [...ENGINES, 'dispatch_coarsen'] as const;

function engineParam(text: string): Engine {
  if (text === 'dispatch_coarsen') return 'dispatch';
  if ((ENGINES as readonly string[]).includes(text)) return text as Engine;
  throw new ProtocolError(400, 'invalid_query', `get_engine: ${JSON.stringify(text)} is not an engine (allowed: ${SPEC_ENGINES.join(', ')})`, {
    field: 'get_engine',
    value: text,
    allowed: [...SPEC_ENGINES],
  });
}

export const rollupRead: Handler = async (req, res, target, node) => {
  const [, rawUuid, ...rawMetric] = target.segments;
  const uuid = uuidParam(rawUuid!);
  const metric = metricParam(rawMetric);
  const q = target.query;
  const startMs = timestampParam(q, 'start_ts', node.config.lenientTimestamps);
  const endMs = timestampParam(q, 'end_ts', node.config.lenientTimestamps);
  const spanMs = codec('rollup_span', () => parseSpan(required(q, 'rollup_span')));
  if (endMs <= startMs) {
    throw new ProtocolError(400, 'invalid_query', `end_ts ${q.get('end_ts')} must be after start_ts ${q.get('start_ts')}`, { field: 'end_ts' });
  }
  const engine = engineParam(q.get('get_engine') ?? DEFAULT_ENGINE);
  const typeText = q.get('type') ?? DEFAULT_ROLLUP_TYPE;
  const type: RollupType | undefined = canonicalRollupType(typeText);
  if (type === undefined) {
    const allowed = [...ROLLUP_TYPES, ...Object.keys(ROLLUP_TYPE_ALIASES)];
    throw new ProtocolError(400, 'invalid_query', `type: ${JSON.stringify(typeText)} is not a rollup type (allowed: ${allowed.join(', ')})`, {
      field: 'type',
      value: typeText,
      allowed,
    });
  }
  checkEngineSpan(engine, spanMs, node.store.rollups);
  const plan = planBuckets(startMs, endMs, spanMs);
  const headers: Record<string, string> = {};
  const advisory = advisoryLimit(req.headers[ADVISORY_LIMIT_HEADER]);
  if (advisory !== undefined && advisory < plan.count) {
    plan.count = advisory;
    headers[RESULTS_LIMITED_HEADER] = '1';
  }
  if (plan.count > node.config.maxBuckets) {
    throw new ProtocolError(
      400,
      'too_many_buckets',
      `the range holds ${plan.count} buckets of ${q.get('rollup_span')}; this node answers at most ${node.config.maxBuckets} per read: use a larger span or a shorter range`,
      { buckets: plan.count, max_buckets: node.config.maxBuckets },
    );
  }
  const seriesId = node.store.findSeries(uuid, metric);
  const member = type === 'all' ? undefined : MEMBER_OF_TYPE[type];
  if (member !== undefined && (STORED_MEMBERS as readonly string[]).includes(member)) {
    await sendJsonPieces(
      res,
      200,
      renderValues((part) => readMember(node.store, seriesId, part, engine, member as StoredMember), plan),
      headers,
    );
    return;
  }
  await sendJsonPieces(
    res,
    200,
    renderRollup((part) => readBuckets(node.store, seriesId, part, engine), plan, type),
    headers,
  );
};

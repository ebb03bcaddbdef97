import { CodecError, parseSecondsList } from './codecs.js';
import { DATA_TYPES, isDataType, type DataType } from './types.js';

import { DEFAULT_HEADER_PREFIX, HEADER_PREFIXES, type HeaderPrefix } from './constants.js';

export { DEFAULT_HEADER_PREFIX, HEADER_PREFIXES, type HeaderPrefix } from './constants.js';

/** Sweep header names without their prefix. */
export const SWEEP_HEADER = {
  deleteTime: 'Delete-Time',
  dataTypes: 'Delete-Data-Types',
  nntRollups: 'NNT-Delete-Rollups',
  histogramRollups: 'Histogram-Delete-Rollups',
} as const;
export type SweepHeaderKey = keyof typeof SWEEP_HEADER;

/**
 * `<prefix>-Sweep-Request-Id`: an id the client picks for one DELETE (tsnode's own extension; the
 * production store ignores it). A node that records it (the reference node: `request_id` while
 * running, `last_request_id` in its record) lets the client tell its own sweep from an identical
 * one another client started. 1 to 64 of `A-Z a-z 0-9 . _ : -`.
 */
export const SWEEP_REQUEST_ID = 'Sweep-Request-Id';
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;

export function sweepHeaderName(prefix: HeaderPrefix, key: SweepHeaderKey): string {
  return `${prefix}-${SWEEP_HEADER[key]}`;
}

/** Production-store rollup headers, honoured by the client and the reference node. */
export const ADVISORY_LIMIT_HEADER = 'x-snowth-advisory-limit';
export const RESULTS_LIMITED_HEADER = 'x-snowth-results-limited';

/** What one `DELETE /sweep_delete` asks for. Spans are whole seconds; absent means all spans. */
export interface SweepRequest {
  /** Epoch seconds: everything strictly before this time goes. */
  before: number;
  types: DataType[];
  nntRollups?: number[];
  histogramRollups?: number[];
  /** The client's id for this DELETE (`<prefix>-Sweep-Request-Id`); see SWEEP_REQUEST_ID. */
  requestId?: string;
}

/** Builds the request headers for a sweep. Types are always sent explicitly, never left to the node's default. */
export function buildSweepHeaders(req: SweepRequest, prefix: HeaderPrefix = DEFAULT_HEADER_PREFIX): Record<string, string> {
  const headers: Record<string, string> = {
    [sweepHeaderName(prefix, 'deleteTime')]: String(req.before),
    [sweepHeaderName(prefix, 'dataTypes')]: req.types.join(','),
  };
  if (req.nntRollups?.length && req.types.includes('nnt')) {
    headers[sweepHeaderName(prefix, 'nntRollups')] = req.nntRollups.join(',');
  }
  if (req.histogramRollups?.length && req.types.includes('histogram')) {
    headers[sweepHeaderName(prefix, 'histogramRollups')] = req.histogramRollups.join(',');
  }
  if (req.requestId !== undefined) headers[`${prefix}-${SWEEP_REQUEST_ID}`] = req.requestId;
  return headers;
}

/** Reads a header by its suffix under either prefix; lookup is by lower-case name as node:http delivers them. */
export function readPrefixedHeader(headers: Readonly<Record<string, string | string[] | undefined>>, key: SweepHeaderKey): { name: string; value: string } | undefined {
  for (const prefix of HEADER_PREFIXES) {
    const name = sweepHeaderName(prefix, key);
    const raw = headers[name.toLowerCase()];
    if (raw === undefined) continue;
    // A repeated header arrives as an array (or comma-joined): both mean the same list.
    return { name, value: Array.isArray(raw) ? raw.join(',') : raw };
  }
  return undefined;
}

/**
 * The prefix a request spelled its sweep headers with: the production store's `X-Snowth` when
 * any sweep header came that way, else ours. Errors about a header then use the request's words.
 */
export function requestHeaderPrefix(headers: Readonly<Record<string, string | string[] | undefined>>): HeaderPrefix {
  for (const key of Object.keys(SWEEP_HEADER) as SweepHeaderKey[]) {
    if (headers[sweepHeaderName('X-Snowth', key).toLowerCase()] !== undefined) return 'X-Snowth';
  }
  return DEFAULT_HEADER_PREFIX;
}

/** Each sweep header's name as the request spelled it (ours when it did not send that one). */
export function sweepHeaderNamesUsed(headers: Readonly<Record<string, string | string[] | undefined>>): Record<SweepHeaderKey, string> {
  const fallback = requestHeaderPrefix(headers);
  const out = {} as Record<SweepHeaderKey, string>;
  for (const key of Object.keys(SWEEP_HEADER) as SweepHeaderKey[]) out[key] = readPrefixedHeader(headers, key)?.name ?? sweepHeaderName(fallback, key);
  return out;
}

/**
 * Parses and validates the format of sweep headers (not the node's configuration: whether a
 * span is configured is the node's business). Throws CodecError naming the header.
 */
export function parseSweepHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): SweepRequest {
  const time = readPrefixedHeader(headers, 'deleteTime');
  if (!time) {
    throw new CodecError(`missing header ${sweepHeaderName(requestHeaderPrefix(headers), 'deleteTime')}`, '', 'integer epoch seconds');
  }
  const t = time.value.trim();
  if (!/^\d{1,12}$/.test(t)) {
    throw new CodecError(`${time.name}: ${JSON.stringify(time.value)} is not integer epoch seconds`, time.value, 'integer epoch seconds, e.g. 1700000000');
  }
  const req: SweepRequest = { before: Number(t), types: ['nnt'] };

  const types = readPrefixedHeader(headers, 'dataTypes');
  if (types) {
    const list = types.value.split(',').map((s) => s.trim().toLowerCase());
    const seen = new Set<DataType>();
    for (const item of list) {
      if (!isDataType(item)) {
        throw new CodecError(`${types.name}: ${JSON.stringify(item)} is not a data type (allowed: ${DATA_TYPES.join(', ')})`, item, `a comma list of ${DATA_TYPES.join(', ')}`);
      }
      seen.add(item);
    }
    req.types = [...seen];
  }
  for (const key of ['nntRollups', 'histogramRollups'] as const) {
    const h = readPrefixedHeader(headers, key);
    if (!h) continue;
    req[key] = [...new Set(parseSecondsList(h.value, h.name))];
  }
  const id = requestIdHeader(headers);
  if (id) {
    if (!REQUEST_ID_PATTERN.test(id.value)) {
      throw new CodecError(`${id.name}: ${JSON.stringify(id.value.slice(0, 80))} is not a request id`, id.value.slice(0, 80), '1 to 64 of A-Z a-z 0-9 . _ : -');
    }
    req.requestId = id.value;
  }
  return req;
}

/** The request id header under either prefix, as node:http delivers it (lower case). */
function requestIdHeader(headers: Readonly<Record<string, string | string[] | undefined>>): { name: string; value: string } | undefined {
  for (const prefix of HEADER_PREFIXES) {
    const name = `${prefix}-${SWEEP_REQUEST_ID}`;
    const v = headers[name.toLowerCase()];
    const value = Array.isArray(v) ? v[0] : v;
    if (value !== undefined) return { name, value: value.trim() };
  }
  return undefined;
}

/**
 * The store's "do not proxy" header (`X-Snowth-Proxied: 1`, or tsnode's `X-Service-` spelling): a
 * read that carries it is answered from the asked node's own data, never forwarded to an owner.
 */
export const NO_PROXY_HEADER = 'X-Snowth-Proxied';
/** Set by a ring node on every read it answers or forwards: the id of the node whose data answered. */
export const ANSWERED_BY_HEADER = 'X-Service-Answered-By';
/** tsnode's own: marks a write one ring node replays to another from its journal (applied locally, never replicated again). */
export const REPLAYED_FROM_HEADER = 'X-Tsnode-Replayed-From';

/** Whether a request carries the no-proxy header (either prefix) with a true value. */
export function isNoProxy(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  for (const prefix of HEADER_PREFIXES) {
    const v = headers[`${prefix}-Proxied`.toLowerCase()];
    const s = Array.isArray(v) ? v[0] : v;
    if (s !== undefined && s.trim() !== '' && s.trim() !== '0' && s.trim().toLowerCase() !== 'false') return true;
  }
  return false;
}

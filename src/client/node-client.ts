import type { Dispatcher } from 'undici';
import { z } from 'zod';
import {
  ADVISORY_LIMIT_HEADER,
  DEFAULT_HEADER_PREFIX,
  RESULTS_LIMITED_HEADER,
  buildSweepHeaders,
  formatIssues,
  formatSpan,
  formatTimestamp,
  msFromSeconds,
  normaliseStatus,
  parseJsonAllowingTrailingCommas,
  rollupAllRowsSchema,
  rollupRowsSchema,
  wireSweepStatusSchema,
  ROLLUP_MEMBERS,
  type HeaderPrefix,
  type HistogramRecord,
  type NntRecord,
  type RollupAll,
  type RollupQuery,
  type SweepRequest,
  type SweepStatus,
  type TextRecord,
} from '../protocol/index.js';
import { locateSchema, nodeStateSchema, nodeStatsSchema, type WireLocate, type WireNodeState, type WireNodeStats } from '../protocol/cluster.js';
import { TopologyError, topologyFromJson, topologyFromXml, type Topology } from '../ring/index.js';
import { READ_BACK_ANSWER_BYTES, STATUS_ANSWER_BYTES, WRITE_ANSWER_BYTES, rollupAnswerBytes } from './answer-limits.js';
import { NodeHttpError, NodeRequestError } from './errors.js';
import { DEFAULT_TIMEOUTS, send, type HttpRequest, type HttpResponse, type RequestLogEntry, type Timeouts } from './http.js';
import { DEFAULT_RETRY, NO_RETRY, withRetry, type RetryPolicy } from './retry.js';

export interface NodeClientOptions {
  /** The run's dispatcher (an undici Agent, or a MockAgent in tests). The caller closes it. */
  dispatcher: Dispatcher;
  timeouts?: Partial<Timeouts>;
  retry?: RetryPolicy;
  /** Sent with every request (auth, routing). Secret ones never appear in logs or errors (see `redact`). */
  headers?: Record<string, string>;
  /** Further header names whose values are secret; Authorization, Cookie and Proxy-Authorization always are. */
  redact?: readonly string[];
  /**
   * Told about every finished HTTP exchange (method, URL, redacted headers, status, ms), e.g. for a
   * --verbose log. The client never prints by itself.
   */
  onRequest?: (entry: RequestLogEntry) => void;
  /**
   * The run's signal (Ctrl-C, an overall deadline): bounds every call and its retries in addition
   * to each call's own signal. A deadline made with AbortSignal.timeout surfaces as code `timeout`.
   */
  signal?: AbortSignal;
  headerPrefix?: HeaderPrefix;
  /** Told about every retry, e.g. to count or log them. */
  onRetry?: (err: NodeRequestError, attempt: number, delayMs: number) => void;
  /**
   * One cap, in bytes, for every answer instead of the per-request ones (see answer-limits.ts:
   * 256 KiB for status and writes, a rollup read's from its range). A larger answer fails with
   * code `too_large`.
   */
  maxAnswerBytes?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Told about this call's retries (in addition to the client-wide `onRetry`), e.g. to count them per batch. */
  onRetry?: (err: NodeRequestError, attempt: number, delayMs: number) => void;
  /** This call's retry policy instead of the client's (a quick probe of many nodes should not wait out a dead one's backoff). */
  retry?: RetryPolicy;
}

export interface RollupPoint<V> {
  /** Bucket start, epoch milliseconds. */
  timestampMs: number;
  value: V;
}

export interface RollupResult<V> {
  points: RollupPoint<V>[];
  /** The node cut the result short (`x-snowth-results-limited`). */
  limited: boolean;
}

/**
 * A single-value rollup read as two columns, for callers that format 100,000+ rows and want no
 * object per row: `timestampsMs[i]` (epoch ms) and `values[i]`, NaN where the bucket is empty
 * (JSON has no NaN, so NaN only ever means null).
 */
export interface RollupColumns {
  timestampsMs: Float64Array;
  values: Float64Array;
  limited: boolean;
}

/** A client for one node. Every call goes to this node only: node-local operations are never re-routed. */
export class NodeClient {
  readonly url: string;
  private readonly opts: NodeClientOptions;
  private readonly timeouts: Timeouts;

  constructor(url: string, opts: NodeClientOptions) {
    this.url = url.replace(/\/+$/, '');
    this.opts = opts;
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...opts.timeouts };
  }

  private async call(req: HttpRequest, call: CallOptions, retry: RetryPolicy = call.retry ?? this.opts.retry ?? DEFAULT_RETRY, maxBytes?: number): Promise<HttpResponse> {
    const cap = this.opts.maxAnswerBytes ?? maxBytes;
    const signals = [this.opts.signal, call.signal].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const o = this.opts;
    const clientWide = this.opts.onRetry;
    const perCall = call.onRetry;
    const onRetry =
      clientWide && perCall
        ? (err: NodeRequestError, attempt: number, delayMs: number) => {
            clientWide(err, attempt, delayMs);
            perCall(err, attempt, delayMs);
          }
        : (clientWide ?? perCall);
    return withRetry(
      () =>
        send(o.dispatcher, this.url, req, {
          timeouts: this.timeouts,
          ...(cap !== undefined ? { maxBytes: cap } : {}),
          ...(signal ? { signal } : {}),
          ...(o.headers ? { headers: o.headers } : {}),
          ...(o.redact ? { redact: o.redact } : {}),
          ...(o.onRequest ? { onRequest: o.onRequest } : {}),
        }),
      retry,
      { ...(signal ? { signal } : {}), ...(onRetry ? { onRetry } : {}) },
    );
  }

  /**
   * Parses a 2xx answer against `schema`. Anything else is `bad_answer`, never "unreachable": the
   * node did answer. `expected` says in words what would have been understood.
   */
  private parse<S extends z.ZodType>(res: HttpResponse, schema: S, what: string, expected: string, opts: { trailingCommas?: boolean } = {}): z.infer<S> {
    let json: unknown;
    try {
      json = opts.trailingCommas ? parseJsonAllowingTrailingCommas(res.text) : JSON.parse(res.text);
    } catch {
      const shown = res.text.trim() === '' ? 'an empty body' : JSON.stringify(res.text.slice(0, 80));
      throw new NodeRequestError(this.url, 'bad_answer', `${what}: the answer is not JSON (${shown}); expected ${expected}`, {
        retryable: false,
        hint: 'is this address a node of the store, and not a proxy or another service?',
      });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      // A node (or proxy) that answers 200 with its error object: show its own words.
      if (json && typeof json === 'object' && !Array.isArray(json) && typeof (json as { error?: unknown }).error === 'string') {
        const code = (json as { code?: unknown }).code;
        throw new NodeRequestError(
          this.url,
          'bad_answer',
          `${what}: the node answered with an error: ${(json as { error: string }).error}${typeof code === 'string' ? ` (${code})` : ''}; expected ${expected}`,
          { retryable: false },
        );
      }
      const issues = parsed.error.issues;
      const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : '';
      throw new NodeRequestError(this.url, 'bad_answer', `${what}: unexpected answer: ${formatIssues(issues.slice(0, 3))}${more}; expected ${expected}`, { retryable: false });
    }
    return parsed.data;
  }

  /**
   * A call to the sweep API. A 404 there means the node has none (the store removed
   * /sweep_delete in version 0.19.23): a `no_sweep_api` error, not "unreachable" or a bare HTTP 404.
   */
  private async sweepCall(req: HttpRequest, call: CallOptions, retry?: RetryPolicy): Promise<HttpResponse> {
    try {
      return await this.call(req, call, retry, STATUS_ANSWER_BYTES);
    } catch (err) {
      if (err instanceof NodeHttpError && err.status === 404) {
        throw new NodeRequestError(
          this.url,
          'no_sweep_api',
          `the node has no sweep API: ${req.method} ${req.path} answered 404 (the store removed /sweep_delete in version 0.19.23)`,
          { retryable: false, hint: 'sweeps need a node from version 0.11.6 to 0.19.22 of the store, or a tsnode reference node', cause: err },
        );
      }
      throw err;
    }
  }

  /**
   * Starts a sweep delete. Never retried: a DELETE that reached the node but lost its answer
   * would, if repeated, cancel the sweep it started.
   */
  async sweepDelete(req: SweepRequest, call: CallOptions = {}): Promise<void> {
    const headers = buildSweepHeaders(req, this.opts.headerPrefix ?? DEFAULT_HEADER_PREFIX);
    const res = await this.sweepCall({ method: 'DELETE', path: '/sweep_delete', headers }, call, NO_RETRY);
    // Only `[]` means "started": a 2xx with anything else (a proxy's HTML page, an error object)
    // is not evidence that the node began this sweep.
    this.parse(res, startedAck, 'sweep delete', '[] (the sweep started)');
  }

  /** `retry` overrides the client's policy for this call (a poll loop is its own retry: it passes NO_RETRY). */
  async sweepStatus(call: CallOptions & { retry?: RetryPolicy } = {}): Promise<SweepStatus> {
    const res = await this.sweepCall({ method: 'GET', path: '/sweep_delete' }, call, call.retry);
    return normaliseStatus(this.parse(res, wireSweepStatusSchema, 'sweep status', STATUS_SHAPE, { trailingCommas: true }));
  }

  /** The production store's `GET /sweep_delete/cancel`; returns the status after cancelling. */
  async cancelSweep(call: CallOptions = {}): Promise<SweepStatus> {
    const res = await this.sweepCall({ method: 'GET', path: '/sweep_delete/cancel' }, call);
    return normaliseStatus(this.parse(res, wireSweepStatusSchema, 'sweep cancel', STATUS_SHAPE, { trailingCommas: true }));
  }

  /** The request path of a rollup read, exactly as sent (exported for --dry-run and tests). */
  static rollupPath(q: RollupQuery): string {
    const params = new URLSearchParams({
      start_ts: formatTimestamp(q.startMs),
      end_ts: formatTimestamp(q.endMs),
      rollup_span: formatSpan(q.spanMs),
      get_engine: q.engine ?? 'dispatch',
      type: q.type ?? 'average',
    });
    return `/rollup/${encodePathSegment(q.uuid)}/${encodePathSegment(q.metric)}?${params.toString()}`;
  }

  async readRollup(q: RollupQuery & { type: 'all' }, call?: CallOptions & { limit?: number | 'none' }): Promise<RollupResult<RollupAll | null>>;
  async readRollup(q: RollupQuery, call?: CallOptions & { limit?: number | 'none' }): Promise<RollupResult<number | null>>;
  async readRollup(q: RollupQuery, call: CallOptions & { limit?: number | 'none' } = {}): Promise<RollupResult<unknown>> {
    const headers: Record<string, string> = {};
    if (call.limit !== undefined) headers[ADVISORY_LIMIT_HEADER] = String(call.limit);
    const res = await this.call({ method: 'GET', path: NodeClient.rollupPath(q), headers }, call, undefined, rollupAnswerBytes(q));
    const limitedHeader = res.headers[RESULTS_LIMITED_HEADER];
    const limited = limitedHeader !== undefined && limitedHeader !== '0';
    if (q.type === 'all') {
      const rows = this.parse(res, rollupAllRowsSchema, 'rollup read', ROLLUP_ALL_SHAPE);
      return {
        limited,
        points: rows.map(([ts, v]) => ({ timestampMs: msFromSeconds(ts), value: v === null ? null : fillAll(v) })),
      };
    }
    // A year of 300 s buckets is 105,120 rows: check the plain shape by hand and leave zod to
    // explain an answer that does not fit it.
    const fast = numericPoints(res.text);
    if (fast) return { limited, points: fast };
    const rows = this.parse(res, rollupRowsSchema, 'rollup read', ROLLUP_SHAPE);
    return { limited, points: rows.map(([ts, v]) => ({ timestampMs: msFromSeconds(ts), value: v })) };
  }

  /**
   * The same read as {@link readRollup} for one value type (not `all`), as columns: no array or
   * object per row. Same request, same errors (an answer that does not fit goes through the same
   * checks and messages as readRollup).
   */
  async readRollupColumns(q: RollupQuery, call: CallOptions & { limit?: number | 'none' } = {}): Promise<RollupColumns> {
    if (q.type === 'all') throw new TypeError('readRollupColumns reads one value type; use readRollup for type all');
    const headers: Record<string, string> = {};
    if (call.limit !== undefined) headers[ADVISORY_LIMIT_HEADER] = String(call.limit);
    const res = await this.call({ method: 'GET', path: NodeClient.rollupPath(q), headers }, call, undefined, rollupAnswerBytes(q));
    const limitedHeader = res.headers[RESULTS_LIMITED_HEADER];
    const limited = limitedHeader !== undefined && limitedHeader !== '0';
    const fast = scanNumericRows(res.text);
    if (fast) return { ...fast, limited };
    const rows = this.parse(res, rollupRowsSchema, 'rollup read', ROLLUP_SHAPE);
    const timestampsMs = new Float64Array(rows.length);
    const values = new Float64Array(rows.length);
    rows.forEach(([ts, v], i) => {
      timestampsMs[i] = msFromSeconds(ts);
      values[i] = v === null ? NaN : v;
    });
    return { timestampsMs, values, limited };
  }

  /**
   * Writes numeric records. `body` may be the records or an already serialised JSON array,
   * as a string or UTF-8 bytes (the replay path serialises once, straight into bytes). Retried: a rewrite of the same id/metric/offset replaces.
   * Any 2xx is the node's acknowledgement; see {@link WriteAck} for what it says about the count.
   */
  async writeNnt(body: readonly NntRecord[] | string | Uint8Array, call: CallOptions & { method?: 'POST' | 'PUT' } = {}): Promise<WriteAck> {
    return this.write('/write/nnt', body, call);
  }

  /** Writes text records (`/write/text`); the body as for writeNnt. */
  async writeText(body: readonly TextRecord[] | string | Uint8Array, call: CallOptions & { method?: 'POST' | 'PUT' } = {}): Promise<WriteAck> {
    return this.write('/write/text', body, call);
  }

  /** Writes histogram records (`/histogram/write`); the body as for writeNnt. */
  async writeHistogram(body: readonly HistogramRecord[] | string | Uint8Array, call: CallOptions & { method?: 'POST' | 'PUT' } = {}): Promise<WriteAck> {
    return this.write('/histogram/write', body, call);
  }

  /**
   * Reads text records back (`GET /read/<start>/<end>/<uuid>/<metric>`): `[epoch milliseconds,
   * value]` change points, as the store's api/read-text.md gives them (the reference node stores
   * whole seconds, so its timestamps end in 000). Start inclusive, end exclusive; whole seconds
   * are sent, the start rounded down and the end up.
   */
  async readText(q: { uuid: string; metric: string; startMs: number; endMs: number }, call: CallOptions = {}): Promise<Array<[number, string]>> {
    const path = `/read/${Math.floor(q.startMs / 1000)}/${Math.ceil(q.endMs / 1000)}/${encodePathSegment(q.uuid)}/${encodePathSegment(q.metric)}`;
    const res = await this.call({ method: 'GET', path }, call, undefined, READ_BACK_ANSWER_BYTES);
    return this.parse(res, textRows, 'text read', 'a JSON array of [milliseconds, text] pairs');
  }

  /**
   * Reads histogram records back (`GET /histogram/<start>/<end>/<period>/<uuid>/<metric>`):
   * `[epoch seconds, period, histogram]` rows with `startMs <= ts < endMs`. The node's end is
   * inclusive (api/read-histogram.md), so the last whole second before endMs is sent.
   */
  async readHistogram(
    q: { uuid: string; metric: string; startMs: number; endMs: number; periodS: number },
    call: CallOptions = {},
  ): Promise<Array<[number, number, string]>> {
    const start = Math.ceil(q.startMs / 1000);
    const end = Math.max(start, Math.ceil(q.endMs / 1000) - 1);
    const path = `/histogram/${start}/${end}/${q.periodS}/${encodePathSegment(q.uuid)}/${encodePathSegment(q.metric)}`;
    const res = await this.call({ method: 'GET', path }, call, undefined, READ_BACK_ANSWER_BYTES);
    return this.parse(res, histogramRows, 'histogram read', 'a JSON array of [seconds, period, histogram] rows');
  }


  /** `GET /state`: the node's identity, topology hashes (`current`, `next`), spans and version. */
  async nodeState(call: CallOptions = {}): Promise<WireNodeState> {
    const res = await this.call({ method: 'GET', path: '/state' }, call, undefined, STATUS_ANSWER_BYTES);
    return this.parse(res, nodeStateSchema, 'node state', 'a JSON object with the node\'s identity, topology hashes (current, next) and spans');
  }

  /** `GET /stats.json`: the node's stats tree (identity, semver, topology.current/next leaves). */
  async nodeStats(call: CallOptions = {}): Promise<WireNodeStats> {
    const res = await this.call({ method: 'GET', path: '/stats.json' }, call, undefined, STATUS_ANSWER_BYTES);
    return this.parse(res, nodeStatsSchema, 'node stats', 'a JSON stats tree with identity and topology leaves');
  }

  /**
   * `GET /topology/json/<hash>` or `GET /topology/xml/<hash>`: the ring's nodes and copies, validated
   * (ids kept byte for byte: the hash covers them). A 404 means the node has no topology of that hash.
   */
  async topology(hash: string, format: 'json' | 'xml' = 'json', call: CallOptions = {}): Promise<Topology> {
    const res = await this.call({ method: 'GET', path: `/topology/${format}/${encodePathSegment(hash)}` }, call);
    try {
      if (format === 'xml') return topologyFromXml(res.text);
      let json: unknown;
      try {
        json = JSON.parse(res.text);
      } catch {
        throw new TopologyError('', `the answer is not JSON (${JSON.stringify(res.text.slice(0, 80))})`, 'a JSON array of nodes');
      }
      return topologyFromJson(json);
    } catch (err) {
      if (err instanceof TopologyError) {
        throw new NodeRequestError(this.url, 'bad_answer', `topology ${hash.slice(0, 12)} (${format}): ${err.message}`, { retryable: false, hint: `expected ${err.expected}` });
      }
      throw err;
    }
  }

  /** `GET /locate/json/<uuid>/<metric>`: the owners of a metric as the node places it, primary first. */
  async locate(uuid: string, metric: string, call: CallOptions = {}): Promise<WireLocate> {
    const res = await this.call({ method: 'GET', path: `/locate/json/${encodePathSegment(uuid)}/${encodePathSegment(metric)}` }, call, undefined, STATUS_ANSWER_BYTES);
    return this.parse(res, locateSchema, 'locate', 'a JSON array of the owner nodes');
  }

  private async write(path: string, body: readonly unknown[] | string | Uint8Array, call: CallOptions & { method?: 'POST' | 'PUT' }): Promise<WriteAck> {
    const res = await this.call(
      {
        method: call.method ?? 'POST',
        path,
        headers: { 'content-type': 'application/json' },
        body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
      },
      call,
      undefined,
      WRITE_ANSWER_BYTES,
    );
    return writeAck(this.url, res.text);
  }
}

/**
 * A write's acknowledgement. Any 2xx means the node took the request; `records` is its count of
 * stored records, present only when the answer carried one. The production store's answer body
 * is not documented (the production Go client's test node answers 200 with no body at all), so
 * an answer without a count is an acknowledgement without a count, never a failure.
 */
export interface WriteAck {
  records?: number;
}

/**
 * Reads the count out of a 2xx write answer: a JSON object with a whole `records` >= 0 gives it;
 * an empty body or one without `records` gives `{}`; a `records` that is not a count is
 * `bad_answer` (the node claims a count the client cannot read), and so is a JSON object that
 * carries only an `error` (a 2xx that says it failed).
 */
function writeAck(node: string, text: string): WriteAck {
  if (text.trim() === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return {};
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return {};
  const o = json as Record<string, unknown>;
  if (!('records' in o)) {
    if (typeof o.error === 'string') {
      throw new NodeRequestError(node, 'bad_answer', `write: the node answered 2xx with an error: ${o.error}; expected an acknowledgement`, { retryable: false });
    }
    return {};
  }
  const n = o.records;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    const shown = JSON.stringify(n) ?? String(n);
    throw new NodeRequestError(node, 'bad_answer', `write: the answer's records is ${shown.slice(0, 40)}; expected a whole number >= 0 (or no records member)`, {
      retryable: false,
    });
  }
  return { records: n };
}

/** What each answer should look like, for `bad_answer` messages. */
const STATUS_SHAPE = 'a JSON object with nnt, text and histogram members, each holding string attributes with running "true" or "false"';
const ROLLUP_SHAPE = 'a JSON array of [seconds, number or null] rows';
const ROLLUP_ALL_SHAPE = 'a JSON array of [seconds, object of numbers or null] rows';

const textRows = z.array(z.tuple([z.number(), z.string()]));
const histogramRows = z.array(z.tuple([z.number(), z.number(), z.string()]));

/**
 * One path segment, percent-encoded. `.` and `..` are encoded too (`%2E`), so no client, proxy
 * or server resolves a metric named `..` as "the parent directory".
 */
export function encodePathSegment(text: string): string {
  const enc = encodeURIComponent(text);
  return enc === '.' || enc === '..' ? enc.replace(/\./g, '%2E') : enc;
}

/** The only answer that means a DELETE started a sweep. */
const startedAck = z.array(z.unknown()).length(0, { message: 'expected [] (the sweep started)' });

/** `[[ts, number|null], ...]` as points, or undefined when the text is anything else. */
function numericPoints(text: string): RollupPoint<number | null>[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(json)) return undefined;
  const points = new Array<RollupPoint<number | null>>(json.length);
  for (let i = 0; i < json.length; i++) {
    const row: unknown = json[i];
    if (!Array.isArray(row) || row.length !== 2) return undefined;
    const ts: unknown = row[0];
    const v: unknown = row[1];
    if (typeof ts !== 'number' || (v !== null && typeof v !== 'number')) return undefined;
    points[i] = { timestampMs: msFromSeconds(ts), value: v };
  }
  return points;
}

const JSON_NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

function skipWs(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) i++;
    else return i;
  }
}

/**
 * `[[seconds, number|null], ...]` straight from the text into two Float64Arrays, without
 * JSON.parse's array per row. Strict JSON grammar for this shape; anything else (another shape,
 * bad JSON) returns undefined and the caller falls back to JSON.parse + the schema's messages.
 */
function scanNumericRows(text: string): { timestampsMs: Float64Array; values: Float64Array } | undefined {
  // Rows are at least `[0,0]` plus a comma: an upper bound for the arrays, trimmed at the end.
  const cap = Math.max(0, Math.floor(text.length / 6) + 1);
  let timestampsMs = new Float64Array(cap);
  let values = new Float64Array(cap);
  let n = 0;
  let i = skipWs(text, 0);
  if (text.charCodeAt(i) !== 91 /* [ */) return undefined;
  i = skipWs(text, i + 1);
  if (text.charCodeAt(i) === 93 /* ] */) {
    i = skipWs(text, i + 1);
    return i === text.length ? { timestampsMs: new Float64Array(0), values: new Float64Array(0) } : undefined;
  }
  for (;;) {
    if (text.charCodeAt(i) !== 91) return undefined;
    i = skipWs(text, i + 1);
    // Timestamp: whole seconds are read digit by digit (exact below 2^53); anything else via Number.
    let ts = 0;
    let j = i;
    let c = text.charCodeAt(j);
    while (c >= 48 && c <= 57) {
      ts = ts * 10 + (c - 48);
      c = text.charCodeAt(++j);
    }
    const digits = j - i;
    if (digits === 0 || digits > 15 || (digits > 1 && text.charCodeAt(i) === 48) || c === 46 || c === 101 || c === 69) {
      JSON_NUMBER.lastIndex = i;
      if (!JSON_NUMBER.test(text)) return undefined;
      j = JSON_NUMBER.lastIndex;
      ts = Number(text.slice(i, j));
    }
    if (n === cap) return undefined; // cannot happen for valid JSON of this shape
    timestampsMs[n] = Math.round(ts * 1000);
    i = skipWs(text, j);
    if (text.charCodeAt(i) !== 44 /* , */) return undefined;
    i = skipWs(text, i + 1);
    c = text.charCodeAt(i);
    if (c === 110 /* n */) {
      if (text.charCodeAt(i + 1) !== 117 || text.charCodeAt(i + 2) !== 108 || text.charCodeAt(i + 3) !== 108) return undefined;
      values[n] = NaN;
      i += 4;
    } else {
      JSON_NUMBER.lastIndex = i;
      if (!JSON_NUMBER.test(text)) return undefined;
      j = JSON_NUMBER.lastIndex;
      values[n] = Number(text.slice(i, j));
      i = j;
    }
    n++;
    i = skipWs(text, i);
    if (text.charCodeAt(i) !== 93) return undefined;
    i = skipWs(text, i + 1);
    c = text.charCodeAt(i);
    if (c === 44) {
      i = skipWs(text, i + 1);
      continue;
    }
    if (c !== 93) return undefined;
    i = skipWs(text, i + 1);
    if (i !== text.length) return undefined;
    break;
  }
  timestampsMs = timestampsMs.slice(0, n);
  values = values.slice(0, n);
  return { timestampsMs, values };
}

/** Every member present, null where the node left one out. */
function fillAll(v: Partial<Record<keyof RollupAll, number | null | undefined>>): RollupAll {
  const out = {} as RollupAll;
  for (const key of ROLLUP_MEMBERS) out[key] = v[key] ?? null;
  return out;
}

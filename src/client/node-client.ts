import type { Dispatcher } from 'undici';
import {
  ADVISORY_LIMIT_HEADER,
  DEFAULT_ROLLUP_TYPE,
  DEFAULT_HEADER_PREFIX,
  RESULTS_LIMITED_HEADER,
  buildSweepHeaders,
  formatSpan,
  formatTimestamp,
  msFromSeconds,
  isWireSweepStatus,
  normaliseStatus,
  NNT_SHARDS_SHAPE,
  nntShardsByPeriod,
  scanNntShards,
  scanStartEndShards,
  START_END_SHARDS_SHAPE,
  type HeaderPrefix,
  type HistogramBins,
  type HistogramRecord,
  type NntRecord,
  type RollupAll,
  type ShardRange,
  type RollupQuery,
  type SweepRequest,
  type SweepStatus,
  type TextRecord,
  readTagHeader,
  tagHeaderName,
  type DataType,
  type DeleteResultRow,
  type FoundMetric,
} from '../protocol/index.js';
import { isReplicationStatus, isWireNodeState, type ReplicationStatus, type WireGossip, type WireLocate, type WireNodeState, type WireNodeStats } from '../protocol/cluster.js';
import { TopologyError, topologyFromJson, topologyFromXml, type Topology } from '../ring/index.js';
import { HISTOGRAM_ROWS_SHAPE, parseAnswer, ROLLUP_ALL_SHAPE, ROLLUP_SHAPE, STATUS_SHAPE, writeAck, type WriteAck } from './answers.js';
import {
  GOSSIP_ANSWER_BYTES,
  INVENTORY_ANSWER_BYTES,
  READ_BACK_ANSWER_BYTES,
  STATUS_ANSWER_BYTES,
  WRITE_ANSWER_BYTES,
  rollupAnswerBytes,
  rollupBuckets,
  tagAnswerBytes,
} from './answer-limits.js';
import { NodeHttpError, NodeRequestError } from './errors.js';
import { DEFAULT_TIMEOUTS, parseHttpDate, send, type BodySink, type HttpRequest, type HttpResponse, type RequestLogEntry, type Timeouts, type WaitingNotice } from './http.js';
import { DEFAULT_RETRY, NO_RETRY, withRetry, type RetryPolicy } from './retry.js';
import { fillAll, NumericRowStream, numericPoints, type RollupPoint, type RowsSoFar, type ValueDigits } from './rollup-rows.js';

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
  /** Told while a request waits for its answer (see SendOptions.onWaiting), e.g. for "waiting for <node>" lines. */
  onWaiting?: (w: WaitingNotice) => void;
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
  /** A probe of a run's phase: a timeout is not retried (a frozen node is asked once per phase). */
  probe?: boolean;
}

export interface RollupResult<V> {
  points: RollupPoint<V>[];
  /** The node cut the result short (`x-snowth-results-limited`). */
  limited: boolean;
}

/** What a tag-query delete removes: everything of each metric, or one type's data before a time (epoch s). */
export type TagDeleteScope = { kind: 'full' } | { kind: 'before'; type: DataType; before: number };

export interface TagCall {
  /** The tag query, as typed: sent URL-encoded exactly once. */
  query: string;
  account: number;
  /** `X-Snowth-Advisory-Limit`: the most metrics one answer lists (bounds the answer's size). */
  limit: number;
  /** Ask the node for its own data only (`X-Snowth-Proxied: 1`). */
  local?: boolean;
}

/** One page of a tag-query answer; `incomplete`: the node said more remain (`X-Snowth-Incomplete-Results`). */
export interface TagPage<T> {
  rows: T[];
  incomplete: boolean;
}

/**
 * A single-value rollup read as two columns, for callers that format 100,000+ rows and want no
 * object per row: `timestampsMs[i]` (epoch ms) and `values[i]`, NaN where the bucket is empty
 * (JSON has no NaN, so NaN only ever means null).
 */
export interface RollupColumns {
  timestampsMs: Float64Array;
  values: Float64Array;
  /** Each value's digits as the node wrote them, when asked for (`keepDigits`) and the answer was read as it arrived. */
  digits?: ValueDigits;
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

  private async call(
    req: HttpRequest,
    call: CallOptions,
    policy: RetryPolicy = call.retry ?? this.opts.retry ?? DEFAULT_RETRY,
    maxBytes?: number,
    sink?: BodySink,
  ): Promise<HttpResponse> {
    const retry = call.probe ? { ...policy, retryTimeouts: false } : policy;
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
          ...(sink ? { sink } : {}),
          ...(o.onWaiting ? { onWaiting: o.onWaiting } : {}),
        }),
      retry,
      { ...(signal ? { signal } : {}), ...(onRetry ? { onRetry } : {}) },
    );
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
    await parseAnswer(this.url, res.text, (s) => s.startedAck, 'sweep delete', '[] (the sweep started)');
  }

  /** `retry` overrides the client's policy for this call (a poll loop is its own retry: it passes NO_RETRY). */
  async sweepStatus(call: CallOptions & { retry?: RetryPolicy } = {}): Promise<SweepStatus> {
    const res = await this.sweepCall({ method: 'GET', path: '/sweep_delete' }, call, call.retry);
    return normaliseStatus(
      await parseAnswer(this.url, res.text, (s) => s.wireSweepStatusSchema, 'sweep status', STATUS_SHAPE, { trailingCommas: true, matches: isWireSweepStatus }),
    );
  }

  /** The production store's `GET /sweep_delete/cancel`; returns the status after cancelling. */
  async cancelSweep(call: CallOptions = {}): Promise<SweepStatus> {
    const res = await this.sweepCall({ method: 'GET', path: '/sweep_delete/cancel' }, call);
    return normaliseStatus(
      await parseAnswer(this.url, res.text, (s) => s.wireSweepStatusSchema, 'sweep cancel', STATUS_SHAPE, { trailingCommas: true, matches: isWireSweepStatus }),
    );
  }

  /** The request path of a rollup read, exactly as sent (exported for --dry-run and tests). */
  static rollupPath(q: RollupQuery): string {
    const params = new URLSearchParams({
      start_ts: formatTimestamp(q.startMs),
      end_ts: formatTimestamp(q.endMs),
      rollup_span: formatSpan(q.spanMs),
      get_engine: q.engine ?? 'dispatch',
      type: q.type ?? DEFAULT_ROLLUP_TYPE,
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
      const rows = await parseAnswer(this.url, res.text, (s) => s.rollupAllRowsSchema, 'rollup read', ROLLUP_ALL_SHAPE);
      return {
        limited,
        points: rows.map(([ts, v]) => ({ timestampMs: msFromSeconds(ts), value: v === null ? null : fillAll(v) })),
      };
    }
    // A year of 300 s buckets is 105,120 rows: check the plain shape by hand and leave zod to
    // explain an answer that does not fit it.
    const fast = numericPoints(res.text);
    if (fast) return { limited, points: fast };
    const rows = await parseAnswer(this.url, res.text, (s) => s.rollupRowsSchema, 'rollup read', ROLLUP_SHAPE);
    return { limited, points: rows.map(([ts, v]) => ({ timestampMs: msFromSeconds(ts), value: v })) };
  }

  /**
   * The same read as {@link readRollup} for one value type (not `all`), as columns: no array or
   * object per row. Same request, same errors (an answer that does not fit goes through the same
   * checks and messages as readRollup). `keepDigits`: also each value's digits as the node wrote
   * them (ValueDigits), for a printer that would otherwise turn the doubles back into text.
   */
  async readRollupColumns(q: RollupQuery, call: CallOptions & { limit?: number | 'none'; onRows?: RowsSoFar; keepDigits?: boolean } = {}): Promise<RollupColumns> {
    if (q.type === 'all') throw new TypeError('readRollupColumns reads one value type; use readRollup for type all');
    const headers: Record<string, string> = {};
    if (call.limit !== undefined) headers[ADVISORY_LIMIT_HEADER] = String(call.limit);
    // Read as it arrives (a year of 300 s buckets is 3 MiB): the rows are scanned while the rest is on its way.
    const stream = new NumericRowStream(rollupBuckets(q), call.onRows, call.keepDigits);
    const res = await this.call({ method: 'GET', path: NodeClient.rollupPath(q), headers }, call, undefined, rollupAnswerBytes(q), stream);
    const limitedHeader = res.headers[RESULTS_LIMITED_HEADER];
    const limited = limitedHeader !== undefined && limitedHeader !== '0';
    const fast = stream.end();
    if (fast) return { ...fast, limited };
    const rows = await parseAnswer(this.url, stream.text(), (s) => s.rollupRowsSchema, 'rollup read', ROLLUP_SHAPE);
    const timestampsMs = new Float64Array(rows.length);
    const values = new Float64Array(rows.length);
    rows.forEach(([ts, v], i) => {
      timestampsMs[i] = msFromSeconds(ts);
      values[i] = v === null ? NaN : v;
    });
    // The rows told so far came from a scan that gave up: these are the rows.
    call.onRows?.(timestampsMs, values, 0);
    call.onRows?.(timestampsMs, values, rows.length);
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
    return await parseAnswer(this.url, res.text, (s) => s.textRows, 'text read', 'a JSON array of [milliseconds, text] pairs');
  }

  /**
   * Reads histogram records back (`GET /histogram/<start>/<end>/<period>/<uuid>/<metric>`):
   * `[epoch seconds, period, bins]` rows with `startMs <= ts < endMs`, each histogram a map of
   * bins to counts (api/read-histogram.md; an answer holding anything else, such as an encoded
   * string, is `bad_answer`). The node's end is inclusive, so the last whole second before endMs is sent.
   */
  async readHistogram(
    q: { uuid: string; metric: string; startMs: number; endMs: number; periodS: number },
    call: CallOptions = {},
  ): Promise<Array<[number, number, HistogramBins]>> {
    const start = Math.ceil(q.startMs / 1000);
    const end = Math.max(start, Math.ceil(q.endMs / 1000) - 1);
    const path = `/histogram/${start}/${end}/${q.periodS}/${encodePathSegment(q.uuid)}/${encodePathSegment(q.metric)}`;
    const res = await this.call({ method: 'GET', path }, call, undefined, READ_BACK_ANSWER_BYTES);
    return await parseAnswer(this.url, res.text, (s) => s.histogramRows, 'histogram read', HISTOGRAM_ROWS_SHAPE);
  }

  /** `GET /state`: the node's identity, topology hashes (`current`, `next`), spans and version. */
  async nodeState(call: CallOptions = {}): Promise<WireNodeState> {
    const res = await this.call({ method: 'GET', path: '/state' }, call, undefined, STATUS_ANSWER_BYTES);
    return await parseAnswer(this.url, res.text, (s) => s.nodeStateSchema, 'node state', "a JSON object with the node's identity, topology hashes (current, next) and spans", {
      matches: isWireNodeState,
    });
  }

  /**
   * `GET /sweep_delete` (the read-only sweep status, which every store with a sweep API answers;
   * the production store has no `/state`), for the time its answer carries: the HTTP `Date`
   * header, epoch ms, null when it has none.
   */
  async answerDate(call: CallOptions = {}): Promise<number | null> {
    const res = await this.call({ method: 'GET', path: '/sweep_delete' }, call, undefined, STATUS_ANSWER_BYTES);
    return parseHttpDate(res.headers.date);
  }

  /** `GET /list_nntbs_shards` (JSON): the numeric rollup shards per period. */
  async nntShards(call: CallOptions = {}): Promise<Map<number, ShardRange[]>> {
    const res = await this.call({ method: 'GET', path: '/list_nntbs_shards', headers: { accept: 'application/json' } }, call, undefined, INVENTORY_ANSWER_BYTES);
    const fast = scanNntShards(jsonOrUndefined(res.text));
    return fast ?? nntShardsByPeriod(await parseAnswer(this.url, res.text, (s) => s.nntShardListSchema, 'nntbs shard list', NNT_SHARDS_SHAPE));
  }

  /**
   * A `[{start, end}]` shard list: `/raw/list_shards`, `/histogram_raw/list_shards` or
   * `/histogram/<period>/list_shards`.
   */
  async startEndShards(list: { kind: 'raw' } | { kind: 'histogram_raw' } | { kind: 'histogram'; period: number }, call: CallOptions = {}): Promise<ShardRange[]> {
    const path = list.kind === 'histogram' ? `/histogram/${list.period}/list_shards` : `/${list.kind}/list_shards`;
    const res = await this.call({ method: 'GET', path, headers: { accept: 'application/json' } }, call, undefined, INVENTORY_ANSWER_BYTES);
    const fast = scanStartEndShards(jsonOrUndefined(res.text));
    return (
      fast ??
      (await parseAnswer(this.url, res.text, (s) => s.startEndShardListSchema, `${list.kind} shard list`, START_END_SHARDS_SHAPE)).map((s) => ({ start: s.start, end: s.end }))
    );
  }

  /** `GET /stats.json`: the node's stats tree (identity, semver, topology.current/next leaves). */
  async nodeStats(call: CallOptions = {}): Promise<WireNodeStats> {
    const res = await this.call({ method: 'GET', path: '/stats.json' }, call, undefined, STATUS_ANSWER_BYTES);
    return await parseAnswer(this.url, res.text, (s) => s.nodeStatsSchema, 'node stats', 'a JSON stats tree with identity and topology leaves');
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
    return await parseAnswer(this.url, res.text, (s) => s.locateSchema, 'locate', 'a JSON array of the owner nodes');
  }

  /** `GET /replication/json` (tsnode's own): what this node's journals still hold per peer, and what it received. */
  async replicationStatus(call: CallOptions = {}): Promise<ReplicationStatus> {
    const res = await this.call({ method: 'GET', path: '/replication/json' }, call, undefined, STATUS_ANSWER_BYTES);
    return await parseAnswer(this.url, res.text, (s) => s.replicationStatusSchema, 'replication status', 'a JSON object {peers: [{id, url, pending, ...}], received}', {
      matches: isReplicationStatus,
    });
  }

  /** `GET /gossip/json`: each node's gossip entry, the answering node's own first (its `latency` says how far each peer is behind it). */
  async gossip(call: CallOptions = {}): Promise<WireGossip> {
    const res = await this.call({ method: 'GET', path: '/gossip/json' }, call, undefined, GOSSIP_ANSWER_BYTES);
    return await parseAnswer(this.url, res.text, (s) => s.gossipSchema, 'gossip', 'a JSON array [{id, gossip_time, gossip_age, latency: {<peer id>: "<seconds>"}}]');
  }

  /**
   * `POST /replication/pause/<peer>` or `/replication/resume/<peer>` (tsnode's own): stops or restarts
   * this node's replay towards a peer. Answers the peer's replication entry (`GET /replication/json`).
   */
  async setReplicationPaused(peerId: string, paused: boolean, call: CallOptions = {}): Promise<Record<string, unknown>> {
    const path = `/replication/${paused ? 'pause' : 'resume'}/${encodePathSegment(peerId)}`;
    const res = await this.call({ method: 'POST', path }, call, undefined, STATUS_ANSWER_BYTES);
    let json: unknown;
    try {
      json = JSON.parse(res.text);
    } catch {
      json = undefined;
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      throw new NodeRequestError(this.url, 'bad_answer', `replication ${paused ? 'pause' : 'resume'}: the answer is not a JSON object`, { retryable: false });
    }
    return json as Record<string, unknown>;
  }

  /** The request path of a tag-query call, exactly as sent (for --dry-run and tests). */
  static tagPath(endpoint: 'find' | 'full' | DataType, query: string, account?: number, countOnly = false): string {
    const q = `query=${encodeURIComponent(query)}${countOnly ? '&count_only=1' : ''}`;
    return endpoint === 'find' ? `/find/${account ?? 1}/tags?${q}` : `/${endpoint}/tags?${q}`;
  }

  private tagHeaders(c: Pick<TagCall, 'account' | 'local'> & { limit?: number }): Record<string, string> {
    const h: Record<string, string> = { [tagHeaderName('account')]: String(c.account) };
    if (c.limit !== undefined) h[tagHeaderName('advisoryLimit')] = String(c.limit);
    if (c.local) h[tagHeaderName('proxied')] = '1';
    return h;
  }

  /** `GET /find/<account>/tags`: the metrics the query selects on this node, at most `limit`. */
  async findTags(c: TagCall, call: CallOptions = {}): Promise<TagPage<FoundMetric>> {
    const res = await this.call({ method: 'GET', path: NodeClient.tagPath('find', c.query, c.account), headers: this.tagHeaders(c) }, call, undefined, tagAnswerBytes(c.limit));
    const rows = await parseAnswer(this.url, res.text, (s) => s.findAnswerSchema, 'find', 'a JSON array of {uuid, metric_name, category, type, account_id}');
    return { rows, incomplete: readTagHeader(res.headers, 'incomplete')?.value === 'true' };
  }

  /** `GET /find/<account>/tags?count_only=1`: how many metrics the query selects on this node. */
  async countTags(c: Omit<TagCall, 'limit'>, call: CallOptions = {}): Promise<{ count: number; estimate: boolean }> {
    const res = await this.call({ method: 'GET', path: NodeClient.tagPath('find', c.query, c.account, true), headers: this.tagHeaders(c) }, call, undefined, STATUS_ANSWER_BYTES);
    const body = await parseAnswer(this.url, res.text, (s) => s.findCountSchema, 'find count', 'a JSON object {count, estimate}');
    return { count: body.count, estimate: body.estimate === true };
  }

  /**
   * A tag-query delete on this node. Without `confirm` the node only reports (the store's dry run).
   * Retried like any call (a connection reset, a timeout, a 5xx): a repeat of a confirmed call is
   * safe, it deletes the next batch of the same query; what a lost answer deleted is settled by the
   * caller's after-look (a metric found before and absent after is gone, whoever said so).
   */
  async tagDelete(c: TagCall & { scope: TagDeleteScope; confirm: boolean }, call: CallOptions = {}): Promise<TagPage<DeleteResultRow>> {
    const headers = this.tagHeaders(c);
    if (c.confirm) headers[tagHeaderName('confirm')] = '1';
    if (c.scope.kind === 'before') headers[tagHeaderName('deleteTime')] = String(c.scope.before);
    const path = NodeClient.tagPath(c.scope.kind === 'full' ? 'full' : c.scope.type, c.query);
    const res = await this.call({ method: 'DELETE', path, headers }, call, undefined, tagAnswerBytes(c.limit));
    const rows = await parseAnswer(this.url, res.text, (s) => s.deleteAnswerSchema, 'tag delete', 'a JSON array of {metric_name, delete_result, payload}');
    return { rows, incomplete: readTagHeader(res.headers, 'incomplete')?.value === 'true' };
  }

  /** `DELETE /full/canonical/<uuid>/<metric>`: one exact metric, every type (never retried, as a confirmed tag delete). */
  async deleteCanonical(c: { uuid: string; metric: string; account: number }, call: CallOptions = {}): Promise<void> {
    const path = `/full/canonical/${encodePathSegment(c.uuid)}/${encodePathSegment(c.metric)}`;
    const res = await this.call({ method: 'DELETE', path, headers: this.tagHeaders({ account: c.account }) }, call, NO_RETRY, STATUS_ANSWER_BYTES);
    await parseAnswer(this.url, res.text, (s) => s.canonicalDeleteSchema, 'full delete', '{"status": "succeeded"}');
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

/** The answer as JSON, or undefined when it is not (then the schema's path reports it). */
function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * One path segment, percent-encoded. `.` and `..` are encoded too (`%2E`), so no client, proxy
 * or server resolves a metric named `..` as "the parent directory".
 */
export function encodePathSegment(text: string): string {
  const enc = encodeURIComponent(text);
  return enc === '.' || enc === '..' ? enc.replace(/\./g, '%2E') : enc;
}

/**
 * Tag-query endpoints (circonus/product-docs 363d7be `irondb/api/data-deletion.md`,
 * `irondb/metric-names-tags-queries.md`, `static/yaml/developer.yaml`):
 *
 * - `GET /find/<account>/tags?query=` and `GET /find/tags?query=` (account in `X-Snowth-Account-Id`):
 *   the matching metrics, or `{count, estimate}` with `count_only=1`.
 * - `DELETE /full/tags?query=`: every matching metric's data of every type and its index entry.
 * - `DELETE /{nnt,text,histogram}/tags?query=` with `X-Snowth-Delete-Time`: that type's data before it.
 * - `DELETE /full/canonical/<uuid>/<metric>`: one metric, `{"status":"succeeded"}`.
 *
 * Without `X-Snowth-Confirm-Delete: 1` a tag-query delete only reports (`found - ...`, `no content`).
 * `X-Snowth-Advisory-Limit` caps the metrics one call lists (default 10,000; `-1`/`none` lift it);
 * `X-Snowth-Incomplete-Results: true` says more remain. A confirmed call lists what it deleted, so
 * the next call with the same query goes on where it stopped. Node-local, never journaled.
 */
import type { ServerResponse } from 'node:http';
import { DEFAULT_TAG_ADVISORY_LIMIT, ProtocolError, readTagHeader, tagHeaderName, type DataType, type DeleteResultRow } from '../../protocol/index.js';
import { parseTagQuery, TagQueryError, type TagQuery } from '../../tags/index.js';
import { sendJson } from '../http.js';
import { deleteScoped, hasContent, matchingSeries, typeWords, type DeleteScope } from '../tag-search.js';
import type { Handler, NodeContext } from './context.js';
import { advisoryLimit, metricParam, uuidParam } from './rollup.js';

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** The find answer's `category` for every metric (what the store reports for checks' metrics). */
const CATEGORY = 'reconnoiter';
const FOUND_DETAIL = 'found - resubmit with confirmation to attempt delete';

function accountOf(raw: string | undefined, field: string): number {
  if (raw === undefined) throw new ProtocolError(400, 'invalid_header', `missing header ${field} (the account whose metrics to search)`, { field });
  if (!/^\d{1,15}$/.test(raw)) throw new ProtocolError(400, 'invalid_header', `${field}: ${JSON.stringify(raw)} is not an account id (a whole number)`, { field, value: raw });
  return Number(raw);
}

function headerAccount(headers: Headers): number {
  const h = readTagHeader(headers, 'account');
  return accountOf(h?.value, h?.name ?? tagHeaderName('account'));
}

/** The `query` parameter, parsed; a query that does not parse is a 400 naming its column. */
export function queryParam(query: URLSearchParams): TagQuery {
  const text = query.get('query');
  if (text === null) throw new ProtocolError(400, 'invalid_query', 'missing query parameter query (a tag query such as and(host:web1))', { field: 'query' });
  try {
    return parseTagQuery(text);
  } catch (err) {
    if (err instanceof TagQueryError) throw new ProtocolError(400, 'invalid_query', `query: ${err.message}`, { field: 'query', value: text, column: err.column });
    throw err;
  }
}

function limitOf(headers: Headers): number {
  const h = readTagHeader(headers, 'advisoryLimit');
  if (h === undefined) return DEFAULT_TAG_ADVISORY_LIMIT;
  return advisoryLimit(h.value) ?? Infinity;
}

function send(res: ServerResponse, body: unknown, incomplete: boolean): void {
  sendJson(res, 200, JSON.stringify(body), incomplete ? { [tagHeaderName('incomplete')]: 'true' } : {});
}

/** `GET /find/<account>/tags` and `GET /find/tags`. */
export const findTags: Handler = (req, res, target, node) => {
  const account = target.segments.length === 3 ? accountOf(target.segments[1], 'account (path)') : headerAccount(req.headers);
  const query = queryParam(target.query);
  const mine = account === node.config.account;
  if (target.query.get('count_only') === '1') {
    let count = 0;
    if (mine) for (const _ of matchingSeries(node.store, query)) count++;
    send(res, { count, estimate: false }, false);
    return;
  }
  const limit = limitOf(req.headers);
  const out: unknown[] = [];
  let incomplete = false;
  if (mine) {
    for (const s of matchingSeries(node.store, query)) {
      if (out.length >= limit) {
        incomplete = true;
        break;
      }
      out.push({ uuid: s.uuid, metric_name: s.metric, category: CATEGORY, type: typeWords(s.kinds), account_id: account });
    }
  }
  send(res, out, incomplete);
};

/** Runs one tag-query delete: reports, or deletes when confirmed; never more than the advisory limit. */
function tagDelete(headers: Headers, query: URLSearchParams, node: NodeContext, scope: DeleteScope): { rows: DeleteResultRow[]; incomplete: boolean } {
  const account = headerAccount(headers);
  const parsed = queryParam(query);
  const confirmed = readTagHeader(headers, 'confirm')?.value === '1';
  const limit = limitOf(headers);
  const rows: DeleteResultRow[] = [];
  if (account !== node.config.account) return { rows, incomplete: false };
  for (const s of matchingSeries(node.store, parsed)) {
    const content = hasContent(node.store, s, scope);
    // A confirmed call lists what it deleted: a metric with nothing to delete would come back in
    // every later call and the caller's loop would never end.
    if (confirmed && !content) continue;
    if (rows.length >= limit) return { rows, incomplete: true };
    if (!content) rows.push({ metric_name: s.metric, delete_result: 'no content', payload: s.uuid });
    else if (!confirmed) rows.push({ metric_name: s.metric, delete_result: FOUND_DETAIL, payload: s.uuid });
    else {
      deleteScoped(node.store, s, scope);
      rows.push({ metric_name: s.metric, delete_result: 'deleted', payload: s.uuid });
    }
  }
  return { rows, incomplete: false };
}

/** `DELETE /full/tags`. */
export const fullTagsDelete: Handler = (req, res, target, node) => {
  const { rows, incomplete } = tagDelete(req.headers, target.query, node, { kind: 'full' });
  send(res, rows, incomplete);
};

/** `DELETE /nnt/tags`, `/text/tags`, `/histogram/tags`: one type's data before `X-Snowth-Delete-Time`. */
export function typedTagsDelete(type: DataType): Handler {
  return (req, res, target, node) => {
    const h = readTagHeader(req.headers, 'deleteTime');
    const field = h?.name ?? tagHeaderName('deleteTime');
    if (h === undefined) throw new ProtocolError(400, 'invalid_header', `missing header ${field} (epoch seconds: data before it is deleted)`, { field });
    if (!/^\d{1,12}$/.test(h.value)) {
      throw new ProtocolError(400, 'invalid_header', `${field}: ${JSON.stringify(h.value)} is not integer epoch seconds`, { field, value: h.value });
    }
    const { rows, incomplete } = tagDelete(req.headers, target.query, node, { kind: 'before', type, before: Number(h.value) });
    send(res, rows, incomplete);
  };
}

/** `DELETE /full/canonical/<uuid>/<metric>`: one exact metric (no confirmation header, as the docs' example). */
export const fullCanonicalDelete: Handler = (req, res, target, node) => {
  const account = headerAccount(req.headers);
  const [, , rawUuid, ...rawMetric] = target.segments;
  const uuid = uuidParam(rawUuid!);
  const metric = metricParam(rawMetric);
  const id = account === node.config.account ? node.store.findSeries(uuid, metric) : undefined;
  const indexed = id !== undefined && node.store.indexedSeries(id - 1, 1)[0]?.id === id;
  if (!indexed) throw new ProtocolError(404, 'not_found', `metric ${JSON.stringify(metric)} of check ${uuid} is not stored on this node for account ${account}`, { uuid, metric });
  node.store.deleteSeries(id);
  sendJson(res, 200, JSON.stringify({ status: 'succeeded' }));
};

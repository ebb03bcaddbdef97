/**
 * Proxied reads: a read at a ring node that does not own the metric is answered by an owner. The
 * node forwards the request as it came (with the no-proxy header, so the owner answers from its own
 * data and never forwards again) to the owner with the smallest replication lag (gossip.ts), and
 * to the next one when that one cannot answer (no connection, a timeout, a 5xx). Every read a ring
 * node answers names the node whose data answered it (ANSWERED_BY_HEADER). A read carrying the
 * no-proxy header is always answered locally.
 */
import { ANSWERED_BY_HEADER, NO_PROXY_HEADER, ProtocolError, isNoProxy } from '../../protocol/index.js';
import type { Handler } from '../routes/context.js';
import { metricParam, uuidParam } from '../routes/rollup.js';
import { callPeer } from './peer-call.js';

const TIMEOUT_MS = 60_000;

/** Where a read's path holds its uuid (the metric is every segment after it). */
export function proxied(handler: Handler, uuidSegment: number): Handler {
  return async (req, res, target, node) => {
    const repl = node.replication;
    if (!repl) return handler(req, res, target, node);
    const local = (): void | Promise<void> => {
      res.setHeader(ANSWERED_BY_HEADER, repl.selfId);
      return handler(req, res, target, node);
    };
    if (isNoProxy(req.headers)) return local();
    let owners: string[];
    try {
      const uuid = uuidParam(target.segments[uuidSegment]!);
      const metric = metricParam(target.segments.slice(uuidSegment + 1));
      owners = repl.owners(uuid, metric).map((n) => n.id.toLowerCase());
    } catch {
      return local(); // the handler words what is wrong with the path
    }
    if (owners.includes(repl.selfId)) return local();
    // The most up-to-date owner first; ties keep placement order (primary first).
    const order = owners.map((id, i) => ({ id, i, lag: repl.lagOf(id) })).sort((a, b) => a.lag - b.lag || a.i - b.i);
    const failures: string[] = [];
    for (const { id } of order) {
      const url = repl.urlOf(id);
      if (!url) continue;
      try {
        const answer = await callPeer({
          method: 'GET',
          url: `${url}${req.url ?? '/'}`,
          headers: { [NO_PROXY_HEADER]: '1' },
          timeoutMs: TIMEOUT_MS,
          maxAnswerBytes: node.config.maxBodyBytes,
        });
        if (answer.status >= 500) {
          failures.push(`${id}: HTTP ${answer.status}`);
          continue;
        }
        const headers: Record<string, string> = { 'content-type': String(answer.headers['content-type'] ?? 'application/json'), 'cache-control': 'no-store' };
        for (const [name, value] of Object.entries(answer.headers)) {
          if (/^x-(snowth|service)-/i.test(name) && name !== ANSWERED_BY_HEADER.toLowerCase() && typeof value === 'string') headers[name] = value;
        }
        headers[ANSWERED_BY_HEADER] = id;
        res.writeHead(answer.status, headers);
        res.end(answer.body);
        return;
      } catch (err) {
        failures.push(`${id}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    throw new ProtocolError(
      502,
      'owners_unreachable',
      `this node does not own the metric, and none of its owners answered (${failures.join('; ')}); ask an owner directly, or send ${NO_PROXY_HEADER}: 1 to read this node's own data`,
      {
        owners,
      },
    );
  };
}

/**
 * Is the local clock close enough to the nodes' to pin cut-offs from it? A cut-off is "now minus
 * an age", and "now" is this host's clock: twenty days fast, a 30-day rule deletes 10-day-old
 * data. Each node's clock is read from the `Date` header of a small answer, which
 * every HTTP server sends with one-second resolution, of the read-only sweep status (`GET /sweep_delete`); the local time of that answer is somewhere
 * between sending and receiving. The judgement is pure: only the gap beyond that uncertainty
 * counts, so a slow answer never reads as skew.
 */
import type { NodeClient } from './node-client.js';
import type { CallOptions } from './node-client.js';
import { forEachBounded } from './concurrency.js';
import { NO_RETRY } from './retry.js';
import type { PreflightCheck, PreflightProblem } from './sweep-preflight.js';

/** One node's clock as read: when the request left, when its answer came, and the answer's Date (null: none or unreadable). */
export interface ClockSample {
  node: string;
  sentMs: number;
  receivedMs: number;
  dateMs: number | null;
  /** Why the node's clock could not be read (a failed request), when it could not. */
  error?: string;
}

export interface SkewedNode {
  node: string;
  /** The node's time (its Date header) and the local time when the answer arrived, epoch ms. */
  nodeMs: number;
  localMs: number;
  /** How far the local clock is ahead of the node's at least (negative: behind), beyond the uncertainty. */
  skewMs: number;
}

export interface ClockSkewReport {
  /** `ok`: every readable node within the limit; `skewed`: at least one beyond it; `unknown`: no node's clock could be read. */
  verdict: 'ok' | 'skewed' | 'unknown';
  maxSkewMs: number;
  /** Nodes beyond the limit, worst first. */
  skewed: SkewedNode[];
  /** The largest gap seen on a readable node (skewed or not), for the log. */
  worst: SkewedNode | null;
  /** Nodes whose clock could not be read, with why. */
  unread: Array<{ node: string; why: string }>;
}

/** The least the local clock can be ahead (positive) or behind (negative) of the node's, given the sample's uncertainty. */
export function leastSkewMs(s: { sentMs: number; receivedMs: number; dateMs: number }): number {
  // The node's clock read somewhere in [dateMs, dateMs + 1 s) at a local moment in [sentMs, receivedMs].
  const nodeLatest = s.dateMs + 999;
  if (s.sentMs > nodeLatest) return s.sentMs - nodeLatest;
  if (s.dateMs > s.receivedMs) return s.receivedMs - s.dateMs;
  return 0;
}

/** Judges the samples against `maxSkewMs` (pure). */
export function judgeClockSkew(samples: readonly ClockSample[], maxSkewMs: number): ClockSkewReport {
  const read: SkewedNode[] = [];
  const unread: ClockSkewReport['unread'] = [];
  for (const s of samples) {
    if (s.dateMs === null) {
      unread.push({ node: s.node, why: s.error ?? 'its answer has no Date header' });
      continue;
    }
    read.push({ node: s.node, nodeMs: s.dateMs, localMs: s.receivedMs, skewMs: leastSkewMs({ ...s, dateMs: s.dateMs }) });
  }
  read.sort((a, b) => Math.abs(b.skewMs) - Math.abs(a.skewMs));
  const skewed = read.filter((r) => Math.abs(r.skewMs) > maxSkewMs);
  const verdict = skewed.length ? 'skewed' : read.length ? 'ok' : 'unknown';
  return { verdict, maxSkewMs, skewed, worst: read[0] ?? null, unread };
}

/** Reads each node's clock with one `GET /sweep_delete` (no retries: a node that does not answer is only unread here). */
export async function sampleClocks(clients: readonly NodeClient[], opts: { concurrency: number; call?: CallOptions; now?: () => number }): Promise<ClockSample[]> {
  const now = opts.now ?? Date.now;
  const out: ClockSample[] = new Array<ClockSample>(clients.length);
  await forEachBounded(clients.length, opts.concurrency, async (i) => {
    const client = clients[i]!;
    const sentMs = now();
    try {
      const dateMs = await client.answerDate({ ...opts.call, retry: NO_RETRY });
      out[i] = { node: client.url, sentMs, receivedMs: now(), dateMs };
    } catch (err) {
      out[i] = { node: client.url, sentMs, receivedMs: now(), dateMs: null, error: err instanceof Error ? err.message : String(err) };
    }
  });
  return out;
}

/** A span of time for a message: `20 days`, `3 h 5 min`, `42 s`. */
export function describeGap(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s >= 2 * 86_400) return `${Math.round(s / 8640) / 10} days`;
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
  if (s >= 120) return `${Math.round(s / 60)} min`;
  return `${s} s`;
}

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** One line for a node beyond the limit, naming both times: `the local clock reads ... while <node>'s reads ...`. */
export function describeSkew(s: SkewedNode, maxSkewMs: number, limitName: string): string {
  const way = s.skewMs > 0 ? 'ahead of' : 'behind';
  return `the local clock reads ${iso(s.localMs)} while ${s.node}'s reads ${iso(s.nodeMs)}: ${describeGap(s.skewMs)} ${way} it, more than ${limitName} ${describeGap(maxSkewMs)} (cut-offs pinned from this clock would delete the wrong data)`;
}

/**
 * The clock check as a preflight rule (sweep): one problem per node beyond the limit. A node
 * whose clock cannot be read is no problem here (the preflight reports nodes that do not answer).
 */
export function clockSkewCheck(
  clients: readonly NodeClient[],
  opts: { maxSkewMs: number; limitName: string; concurrency: number; call?: CallOptions; now?: () => number; onReport?: (r: ClockSkewReport) => void },
): PreflightCheck {
  return async (pre): Promise<PreflightProblem[]> => {
    const answering = new Set(pre.nodes.filter((n) => n.status !== undefined).map((n) => n.node));
    const report = judgeClockSkew(
      await sampleClocks(
        clients.filter((c) => answering.has(c.url)),
        opts,
      ),
      opts.maxSkewMs,
    );
    opts.onReport?.(report);
    return report.skewed.map((s) => ({ node: s.node, message: describeSkew(s, opts.maxSkewMs, opts.limitName) }));
  };
}

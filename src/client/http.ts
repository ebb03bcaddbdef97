import type { Dispatcher } from 'undici';
import { NodeHttpError, NodeRequestError, AbortedError } from './errors.js';

export interface Timeouts {
  /** Until the response headers arrive. */
  headersMs: number;
  /** Longest silence while the body streams in. */
  bodyMs: number;
  /** The whole exchange, however it trickles. */
  totalMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { headersMs: 10_000, bodyMs: 30_000, totalMs: 120_000 };

export interface HttpRequest {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** Path and query, starting with `/`, already encoded. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);
const TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  // undici wraps socket errors; the useful code may sit one level down.
  for (let depth = 0; e && depth < 3; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_ABORTED') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Turns whatever undici threw into a classified NodeRequestError. */
export function classifyError(node: string, err: unknown, ctx: { runSignal?: AbortSignal; timedOut: boolean; timeouts: Timeouts }): NodeRequestError {
  if (err instanceof NodeRequestError) return err;
  if (ctx.runSignal?.aborted) return new AbortedError(node, 'request cancelled');
  const code = errorCode(err);
  const msg = err instanceof Error ? err.message : String(err);
  if (ctx.timedOut) {
    return new NodeRequestError(node, 'timeout', `no complete answer within ${ctx.timeouts.totalMs / 1000}s`, {
      retryable: true,
      hint: 'the node is slow or overloaded; raise --request-timeout if it is expected',
      cause: err,
    });
  }
  if (code && TIMEOUTS.has(code)) {
    const what = code === 'UND_ERR_CONNECT_TIMEOUT' ? 'connect timed out' : code === 'UND_ERR_BODY_TIMEOUT' ? 'response body stalled' : 'no response headers in time';
    return new NodeRequestError(node, 'timeout', `${what} (${code})`, { retryable: true, cause: err, hint: 'is the node overloaded or behind a firewall?' });
  }
  if (code && (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL') || /certificate|ssl|tls/i.test(msg))) {
    return new NodeRequestError(node, 'tls', `TLS failed: ${msg} (${code})`, {
      retryable: false,
      cause: err,
      hint: 'pass the CA that signed the node certificate with --cacert (or --insecure to skip verification)',
    });
  }
  if (code && UNREACHABLE.has(code)) {
    const what = code === 'ECONNREFUSED' ? 'connection refused' : code === 'ENOTFOUND' ? 'host not found' : code === 'ECONNRESET' ? 'connection reset' : 'connection failed';
    return new NodeRequestError(node, 'unreachable', `${what} (${code})`, { retryable: true, cause: err, hint: 'is the node running, and is the address in the node list right?' });
  }
  return new NodeRequestError(node, 'unreachable', `request failed: ${msg}${code ? ` (${code})` : ''}`, { retryable: true, cause: err });
}

function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Builds the NodeHttpError for a non-2xx answer, quoting the node's own message when it sent one. */
export function httpError(node: string, res: HttpResponse): NodeHttpError {
  let body: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(res.text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    // not JSON: quoted below as text
  }
  const nodeMessage = typeof body?.error === 'string' ? body.error : res.text.trim().slice(0, 200) || '(empty body)';
  return new NodeHttpError(node, res.status, `HTTP ${res.status}: ${nodeMessage}`, {
    ...(body ? { body } : {}),
    ...(typeof body?.code === 'string' ? { errorCode: body.code } : {}),
    ...(() => {
      const ms = parseRetryAfter(res.headers['retry-after'], Date.now());
      return ms === undefined ? {} : { retryAfterMs: ms };
    })(),
  });
}

/**
 * One HTTP exchange with a node: bounded by header, body and total timeouts and by the run's
 * signal; the body is always consumed. Non-2xx answers become NodeHttpError.
 */
export async function send(
  dispatcher: Dispatcher,
  node: string,
  req: HttpRequest,
  opts: { timeouts: Timeouts; signal?: AbortSignal; headers?: Record<string, string> },
): Promise<HttpResponse> {
  const total = AbortSignal.timeout(opts.timeouts.totalMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, total]) : total;
  try {
    // dispatcher.request takes origin and path apart, so the path goes out byte for byte:
    // the top-level request(url) runs it through WHATWG URL, which would resolve a `..` segment.
    const base = new URL(node);
    const res = await dispatcher.request({
      origin: base.origin,
      path: base.pathname.replace(/\/+$/, '') + req.path,
      method: req.method,
      headers: { ...opts.headers, ...req.headers },
      body: req.body ?? null,
      headersTimeout: opts.timeouts.headersMs,
      bodyTimeout: opts.timeouts.bodyMs,
      signal,
    });
    const text = await res.body.text();
    const out: HttpResponse = { status: res.statusCode, headers: res.headers, text };
    if (res.statusCode < 200 || res.statusCode >= 300) throw httpError(node, out);
    return out;
  } catch (err) {
    throw classifyError(node, err, { runSignal: opts.signal, timedOut: total.aborted, timeouts: opts.timeouts });
  }
}

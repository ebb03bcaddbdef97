import type { Dispatcher } from 'undici';
import { NodeHttpError, NodeRequestError, AbortedError, TimeLimitReached } from './errors.js';
import { redactHeaders, scrubSecrets, secretValues } from './headers.js';

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

/** One finished exchange, for a --verbose request log. Secret header values are already redacted. */
export interface RequestLogEntry {
  method: string;
  /** Full URL (node address + path and query). */
  url: string;
  headers: Record<string, string>;
  /** The HTTP status, or undefined when no answer came. */
  status: number | undefined;
  /** The error code (`timeout`, `unreachable`, `tls`, ...) when the exchange failed. */
  error?: string;
  ms: number;
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
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
  if (ctx.runSignal?.aborted) {
    const reason: unknown = ctx.runSignal.reason;
    // A named limit says which one passed: --deadline only when it was --deadline.
    if (reason instanceof TimeLimitReached) {
      return new NodeRequestError(node, 'timeout', `${reason.message} before the node answered`, {
        retryable: false,
        ...(reason.flag ? { hint: `raise ${reason.flag} if the command needs more time` } : {}),
        cause: err,
      });
    }
    // A run signal that fired because of a deadline (AbortSignal.timeout) is a timeout, not a Ctrl-C.
    if (typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'TimeoutError') {
      return new NodeRequestError(node, 'timeout', 'the overall deadline passed before the node answered', {
        retryable: false,
        hint: 'the signal passed as the run signal (or the call signal) timed out: give it more time',
        cause: err,
      });
    }
    return new AbortedError(node, 'request cancelled');
  }
  const code = errorCode(err);
  const msg = err instanceof Error ? err.message : String(err);
  if (ctx.timedOut) {
    return new NodeRequestError(node, 'timeout', `no complete answer within ${ctx.timeouts.totalMs / 1000}s (--request-timeout)`, {
      retryable: true,
      hint: 'the node is slow or overloaded; raise --request-timeout if it is expected',
      cause: err,
    });
  }
  if (code && TIMEOUTS.has(code)) {
    // Each says the limit that fired, with the flag that sets it.
    const what =
      code === 'UND_ERR_CONNECT_TIMEOUT'
        ? 'connect timed out (--connect-timeout)'
        : code === 'UND_ERR_BODY_TIMEOUT'
          ? `response body stalled for ${ctx.timeouts.bodyMs / 1000}s`
          : code === 'UND_ERR_HEADERS_TIMEOUT'
            ? `no answer within ${ctx.timeouts.headersMs / 1000}s (--headers-timeout)`
            : 'timed out';
    const hint =
      code === 'UND_ERR_HEADERS_TIMEOUT'
        ? 'the node accepts connections but does not answer: it may be frozen or overloaded (wait, or restart it)'
        : 'is the node overloaded or behind a firewall?';
    return new NodeRequestError(node, 'timeout', `${what} (${code})`, { retryable: true, cause: err, hint });
  }
  if (code && (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL') || /certificate|ssl|tls/i.test(msg))) {
    // The remedy is in the message itself: per-node tables show the message, not the hint.
    return new NodeRequestError(node, 'tls', `TLS failed: ${msg} (${code}); pass the CA that signed the node certificate with --cacert`, {
      retryable: false,
      cause: err,
      hint: 'the CLI takes --cacert <pem>; scripts pass TlsOptions.ca to createAgent (--insecure skips verification: never in production)',
    });
  }
  if (code && UNREACHABLE.has(code)) {
    const what = code === 'ECONNREFUSED' ? 'connection refused' : code === 'ENOTFOUND' ? 'host not found' : code === 'ECONNRESET' ? 'connection reset' : 'connection failed';
    // Over https a node that closes right after the handshake is often refusing a missing client certificate.
    const closedEarly = node.startsWith('https:') && (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET');
    const hint = closedEarly
      ? 'the node closed the TLS connection without answering: if it requires a client certificate, pass --cert and --key'
      : 'is the node running, and is the address in the node list right?';
    return new NodeRequestError(node, 'unreachable', `${what} (${code})`, { retryable: true, cause: err, hint });
  }
  return new NodeRequestError(node, 'unreachable', `request failed: ${msg}${code ? ` (${code})` : ''}`, { retryable: true, cause: err });
}

/**
 * A failure while the body of an answer was arriving. A connection that closed then did reach the
 * node, which began answering: say so, not "is the node running?" (a long answer is sent in
 * pieces, so a node failing partway can only close the connection).
 */
function cutShort(node: string, status: number, err: unknown, ctx: Parameters<typeof classifyError>[2]): NodeRequestError {
  const classified = classifyError(node, err, ctx);
  if (classified.code !== 'unreachable') return classified;
  const code = errorCode(err);
  return new NodeRequestError(node, 'unreachable', `the answer was cut short: the connection closed while the node was sending it (HTTP ${status}${code ? `, ${code}` : ''})`, {
    retryable: true,
    cause: err,
    hint: 'the node or the network dropped the connection partway (a node restarting, a proxy timing out): run again, or allow a retry with --retries',
  });
}

function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Builds the NodeHttpError for a non-2xx answer, quoting the node's own message when it sent one. */
export function httpError(node: string, res: HttpResponse, secrets: readonly string[] = []): NodeHttpError {
  let body: Record<string, unknown> | undefined;
  // A node (or a proxy in front of it) may echo a request header; never pass a secret on.
  const text = secrets.length ? scrubSecrets(res.text, secrets) : res.text;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    // not JSON: quoted below as text
  }
  const nodeMessage = typeof body?.error === 'string' ? body.error : text.trim().slice(0, 200) || '(empty body)';
  return new NodeHttpError(node, res.status, `HTTP ${res.status}: ${nodeMessage}`, {
    ...(body ? { body } : {}),
    ...(typeof body?.code === 'string' ? { errorCode: body.code } : {}),
    // A 401/403 is an answer: the node runs, and wants other credentials.
    ...(res.status === 401 || res.status === 403 ? { hint: 'the node refused the credentials sent: check the token and headers (Authorization and the like)' } : {}),
    ...(() => {
      const ms = parseRetryAfter(res.headers['retry-after'], Date.now());
      return ms === undefined ? {} : { retryAfterMs: ms };
    })(),
  });
}

/**
 * The largest answer `send` reads when the caller names no cap. Every answer is bounded: an
 * endless body from a broken or hostile node must not grow the heap until the process dies.
 */
export const DEFAULT_MAX_ANSWER_BYTES = 8 * 1024 * 1024;
/** Of an error answer (non-2xx) only this much is read: enough for any message, and the status says the rest. */
export const ERROR_BODY_BYTES = 64 * 1024;

/** `1.5 MiB`: a byte count for a message. */
export function describeBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${Number(v.toFixed(1))} ${units[u]}`;
}

/** The answer was larger than the caller's cap: reading stopped there and the connection was dropped. */
export function tooLargeError(node: string, capBytes: number, announcedBytes?: number): NodeRequestError {
  const limit = `the limit for this request is ${describeBytes(capBytes)}`;
  const what = announcedBytes !== undefined ? `it announced ${describeBytes(announcedBytes)}, ${limit}; not read` : `${limit}, and more arrived; stopped reading`;
  return new NodeRequestError(node, 'too_large', `answer too large: ${what}`, {
    retryable: false,
    hint: 'no legitimate answer to this request is that large: is the address a node of the store? (raise the limit with --max-answer if it is)',
  });
}

type Body = Dispatcher.ResponseData['body'];

/**
 * Reads a body as UTF-8 text, at most `cap` bytes. Over the cap: with `truncate` the first `cap`
 * bytes are kept, otherwise `onOver` is thrown; either way the rest is never read (the stream
 * is destroyed, which drops the connection), so memory stays bounded by the cap.
 */
async function readCapped(body: Body, cap: number, truncate: boolean, onOver: () => Error): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (size + chunk.length > cap) {
        if (!truncate) throw onOver();
        chunks.push(chunk.subarray(0, cap - size));
        size = cap;
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } finally {
    if (!body.destroyed && !body.readableEnded) body.destroy();
  }
  const text = Buffer.concat(chunks, size).toString('utf8');
  // undici's text() drops a byte-order mark; so do we.
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Takes a 2xx answer's body chunk by chunk as it arrives, instead of `send` collecting it into
 * `text` (which is then empty): a large answer is worked on while the rest is on its way, and
 * never held as one string. `start` is called once per attempt, before its first chunk (a retry
 * starts over).
 */
export interface BodySink {
  start(): void;
  chunk(bytes: Buffer): void;
}

/** Feeds a body to `sink`, at most `cap` bytes (over it: `onOver` is thrown and the rest never read). */
async function feedCapped(body: Body, cap: number, sink: BodySink, onOver: () => Error): Promise<void> {
  let size = 0;
  sink.start();
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > cap) throw onOver();
      sink.chunk(chunk);
    }
  } finally {
    if (!body.destroyed && !body.readableEnded) body.destroy();
  }
}

/** Options of one exchange beyond the request itself. */
export interface SendOptions {
  /** A 2xx body goes here as it arrives (BodySink); the response's `text` is then empty. */
  sink?: BodySink;
  timeouts: Timeouts;
  /**
   * The largest answer accepted, in bytes (default DEFAULT_MAX_ANSWER_BYTES). A bigger 2xx answer
   * fails with code `too_large` as soon as the cap is passed; an error answer is cut at
   * ERROR_BODY_BYTES and reported by its status.
   */
  maxBytes?: number;
  /** The run's signal (Ctrl-C, overall deadline). */
  signal?: AbortSignal;
  /** Sent with every request; the request's own headers win. */
  headers?: Record<string, string>;
  /** Extra header names whose values are secret (Authorization, Cookie, Proxy-Authorization always are). */
  redact?: readonly string[];
  /** Told about every finished exchange (redacted), e.g. for a --verbose log. Must not throw. */
  onRequest?: (entry: RequestLogEntry) => void;
  /**
   * Told while no answer has come: at half the headers timeout (at most 5 s), then every 5 s, so a
   * frozen node is visible instead of silence. Must not throw.
   */
  onWaiting?: (w: WaitingNotice) => void;
  now?: () => number;
}

/** A request still without an answer, for "waiting for <node>" lines. */
export interface WaitingNotice {
  node: string;
  method: string;
  path: string;
  waitedMs: number;
  /** When the request gives up waiting for the answer's headers. */
  headersMs: number;
}

/** Calls `notify` with the time waited, at min(headers/2, 5 s) and every 5 s after, until stop(). */
function waitingTimer(notify: (waitedMs: number) => void, headersMs: number): { stop(): void } {
  const every = Math.max(1, Math.min(5000, Math.floor(headersMs / 2)));
  let waited = 0;
  let timer: NodeJS.Timeout | undefined;
  const next = (): void => {
    timer = setTimeout(() => {
      waited += every;
      // Not at the very moment the timeout itself fires: that moment has its own message.
      if (waited > headersMs - 100) return;
      try {
        notify(waited);
      } catch {
        // a listener's failure is not the request's
      }
      next();
    }, every);
    timer.unref();
  };
  next();
  return { stop: () => clearTimeout(timer) };
}

/**
 * One HTTP exchange with a node: bounded by header, body and total timeouts, by the run's
 * signal, and in size (`maxBytes`); the body is always consumed or dropped. Non-2xx answers become NodeHttpError. Secret header
 * values never reach the log callback or an error message.
 */
export async function send(dispatcher: Dispatcher, node: string, req: HttpRequest, opts: SendOptions): Promise<HttpResponse> {
  const total = AbortSignal.timeout(opts.timeouts.totalMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, total]) : total;
  const headers = { ...opts.headers, ...req.headers };
  const now = opts.now ?? Date.now;
  const started = now();
  const log = (status: number | undefined, error?: string): void => {
    if (!opts.onRequest) return;
    try {
      opts.onRequest({
        method: req.method,
        url: node + req.path,
        headers: redactHeaders(headers, opts.redact),
        status,
        ...(error ? { error } : {}),
        ms: now() - started,
      });
    } catch {
      // a logger's failure is not the request's failure
    }
  };
  const waiting = opts.onWaiting
    ? waitingTimer((waitedMs) => opts.onWaiting!({ node, method: req.method, path: req.path, waitedMs, headersMs: opts.timeouts.headersMs }), opts.timeouts.headersMs)
    : undefined;
  try {
    // dispatcher.request takes origin and path apart, so the path goes out byte for byte:
    // the top-level request(url) runs it through WHATWG URL, which would resolve a `..` segment.
    const base = new URL(node);
    const res = await dispatcher.request({
      origin: base.origin,
      path: base.pathname.replace(/\/+$/, '') + req.path,
      method: req.method,
      headers,
      body: req.body ?? null,
      headersTimeout: opts.timeouts.headersMs,
      bodyTimeout: opts.timeouts.bodyMs,
      signal,
    });
    waiting?.stop();
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    const cap = ok ? (opts.maxBytes ?? DEFAULT_MAX_ANSWER_BYTES) : Math.min(ERROR_BODY_BYTES, opts.maxBytes ?? ERROR_BODY_BYTES);
    const declared = Number(res.headers['content-length']);
    if (ok && Number.isFinite(declared) && declared > cap) {
      // Announced too big: not a byte of it is read.
      res.body.destroy();
      log(res.statusCode, 'too_large');
      throw tooLargeError(node, cap, declared);
    }
    let text: string;
    try {
      if (ok && opts.sink) {
        await feedCapped(res.body, cap, opts.sink, () => tooLargeError(node, cap));
        text = '';
      } else text = await readCapped(res.body, cap, !ok, () => tooLargeError(node, cap));
    } catch (err) {
      const failed = err instanceof NodeRequestError ? err : cutShort(node, res.statusCode, err, { runSignal: opts.signal, timedOut: total.aborted, timeouts: opts.timeouts });
      log(res.statusCode, failed.code);
      throw failed;
    }
    const out: HttpResponse = { status: res.statusCode, headers: res.headers, text };
    log(res.statusCode);
    if (!ok) throw httpError(node, out, secretValues(headers, opts.redact));
    return out;
  } catch (err) {
    const classified = classifyError(node, err, { runSignal: opts.signal, timedOut: total.aborted, timeouts: opts.timeouts });
    if (!(err instanceof NodeRequestError)) log(undefined, classified.code);
    const secrets = secretValues(headers, opts.redact);
    if (secrets.length) classified.message = scrubSecrets(classified.message, secrets);
    throw classified;
  } finally {
    waiting?.stop();
  }
}

/** The HTTP Date header (RFC 9110 IMF-fixdate, or what Date.parse reads), epoch ms; null when absent or not a time. */
export function parseHttpDate(value: string | string[] | undefined): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

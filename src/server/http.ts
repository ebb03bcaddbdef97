/**
 * HTTP plumbing of the node on node:http: request targets, JSON bodies with a streaming byte
 * limit, and JSON answers. Every error leaves as `{"error", "code", ...details}` with its status.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ProtocolError, withoutTrailingCommas } from '../protocol/index.js';

export interface RequestTarget {
  /** Raw (still percent-encoded) path segments after the leading slash. */
  segments: string[];
  query: URLSearchParams;
}

/** Splits a request target into raw path segments and the query; nothing is decoded yet. */
export function parseTarget(url: string): RequestTarget {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  const trimmed = path.replace(/^\/+/, '');
  return { segments: trimmed === '' ? [] : trimmed.split('/'), query };
}

/** Decodes one URL-encoded path piece exactly once; a broken escape is a 400 naming the field. */
export function decodePathPart(raw: string, field: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ProtocolError(400, 'bad_request', `${field}: ${JSON.stringify(raw)} is not correctly URL-encoded`, {
      field,
      value: raw,
      hint: 'encode the name with encodeURIComponent (a literal % is %25, / is %2F, ? is %3F, # is %23)',
    });
  }
}

export function sendJson(res: ServerResponse, status: number, body: string, headers: Record<string, string | number> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(body);
}

/**
 * Sends a JSON answer rendered in pieces (a long rollup read) as it is rendered, in chunked
 * encoding: the client reads the first rows while the node reads and renders the rest, and the
 * node never holds the whole text. An answer of one piece (`one`, decided before anything is
 * rendered) goes as sendJson sends it, with its length. The first piece leaves before the second
 * is rendered; later ones wait for the socket to drain. Stops when the client goes away.
 */
export async function sendJsonPieces(
  res: ServerResponse,
  status: number,
  answer: { one: boolean; pieces: Iterable<string> },
  headers: Record<string, string | number> = {},
): Promise<void> {
  if (answer.one) {
    let body = '';
    for (const piece of answer.pieces) body += piece;
    sendJson(res, status, body, headers);
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  let first = true;
  for (const piece of answer.pieces) {
    const more = res.write(piece);
    // node:http holds a response's writes until the end of the tick: yield once, so the first
    // piece is on the wire while the next is read and rendered.
    if (first && more && !(await flushed(res))) return;
    first = false;
    if (!more && !(await drained(res))) return;
  }
  res.end();
}

/** Resolves once what `res` was given this tick has gone to the socket: true, or false when the connection closed. */
function flushed(res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => setImmediate(() => resolve(!res.destroyed)));
}

/** Resolves true once `res` may take more, false when the connection closed first. */
function drained(res: ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = (): void => done(true);
    const onClose = (): void => done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

export function sendError(res: ServerResponse, err: unknown, onInternal?: (err: unknown) => void): void {
  if (err instanceof ProtocolError) {
    const headers: Record<string, string> = {};
    const allow = err.details.allow;
    if (err.status === 405 && Array.isArray(allow)) headers.allow = allow.join(', ');
    if (err.status === 413) headers.connection = 'close';
    sendJson(res, err.status, JSON.stringify(err.toBody()), headers);
    return;
  }
  onInternal?.(err);
  sendJson(res, 500, JSON.stringify({ error: 'internal error in the node (see its log)', code: 'internal' }));
}

/**
 * Reads a body up to `limit` bytes. Over the limit it stops collecting at once (413) and lets
 * the rest of the upload drain to nowhere, so memory never holds more than the limit.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tooLarge = (): ProtocolError =>
      new ProtocolError(413, 'body_too_large', `request body is larger than the node's limit of ${limit} bytes; send smaller batches`, { limit });
    const declared = req.headers['content-length'];
    if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limit) {
      req.resume();
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const onData = (chunk: Buffer): void => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        chunks.length = 0;
        req.off('data', onData);
        req.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => {
      if (done) return;
      done = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.once('error', (err) => {
      if (done) return;
      done = true;
      reject(new ProtocolError(400, 'bad_request', `could not read the request body: ${err.message}`));
    });
    req.once('aborted', () => {
      if (done) return;
      done = true;
      reject(new ProtocolError(400, 'bad_request', 'the client aborted the request body'));
    });
  });
}

/**
 * Parses a request body as JSON whatever its Content-Type says: the store's own examples post
 * with `curl -d` (labelled application/x-www-form-urlencoded), fetch() labels a string
 * text/plain, and the production Go client sends no type at all. Anything unparsable
 * (empty, truncated, not UTF-8 JSON, too deep) is 400 invalid_json.
 */
export function parseJson(body: Buffer): unknown {
  const text = isUtf8(body) ? body.toString('utf8') : decodeMarkingInvalid(body);
  if (text.trim() === '') {
    throw new ProtocolError(400, 'invalid_json', 'the request body is empty, not JSON; send a JSON array of records', { bytes: body.length });
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const reason = err instanceof SyntaxError ? err.message : 'it is nested too deeply';
    // The store's write-text example has one; name it when it is the only thing wrong.
    const fixed = withoutTrailingCommas(text);
    const comma = fixed !== undefined && parsesAsJson(fixed) ? ' (it has a trailing comma before ] or }, which JSON does not allow)' : '';
    throw new ProtocolError(400, 'invalid_json', `the request body is not JSON${comma}: ${reason}`, { bytes: body.length });
  }
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * UTF-8 with each byte that is not part of a valid sequence as a lone surrogate (U+DC80 + byte)
 * instead of U+FFFD: the record validators then refuse the string naming the record and field,
 * where U+FFFD would have let two different names become one.
 */
function decodeMarkingInvalid(buf: Buffer): string {
  let out = '';
  let start = 0;
  for (let i = 0; i < buf.length;) {
    const b = buf[i]!;
    const len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    let ok = len > 0 && i + len <= buf.length;
    for (let k = 1; ok && k < len; k++) ok = (buf[i + k]! & 0xc0) === 0x80;
    // No overlong forms, no encoded surrogates, nothing past U+10FFFF.
    if (ok && len === 3) ok = !(b === 0xe0 && buf[i + 1]! < 0xa0) && !(b === 0xed && buf[i + 1]! >= 0xa0);
    if (ok && len === 4) ok = !(b === 0xf0 && buf[i + 1]! < 0x90) && !(b === 0xf4 && buf[i + 1]! >= 0x90);
    if (ok) {
      i += len;
      continue;
    }
    out += buf.toString('utf8', start, i) + String.fromCharCode(0xdc00 + b);
    start = ++i;
  }
  return out + buf.toString('utf8', start);
}

export function methodNotAllowed(method: string, path: string, allow: readonly string[]): ProtocolError {
  return new ProtocolError(405, 'method_not_allowed', `${method} is not allowed on ${path}; use ${allow.join(' or ')}`, { allow: [...allow] });
}

/** The 404 for a path no endpoint has; `sweepApi: false` (serve --no-sweep-api) leaves the sweep endpoints out of the list. */
export function notFound(path: string, opts: { sweepApi?: boolean } = {}): ProtocolError {
  const endpoints = [
    'DELETE|GET /sweep_delete',
    'GET /sweep_delete/cancel',
    'GET /rollup/<uuid>/<metric>',
    'PUT|POST /write/nnt',
    'PUT|POST /write/text',
    'PUT|POST /histogram/write',
    'GET /read/<start>/<end>/<uuid>/<metric>',
    'GET /histogram/<start>/<end>/<period>/<uuid>/<metric>',
    'GET /state',
    'GET /stats.json',
    'GET /topology/json/<hash>',
    'GET /topology/xml/<hash>',
    'GET /gossip/json',
    'GET /locate/json/<uuid>/<metric>',
    'GET /locate/xml/<uuid>/<metric>',
    'GET /toporing/json/<hash>',
    'GET /capa.json',
    'GET /list_nntbs_shards',
    'GET /raw/list_shards',
    'GET /histogram_raw/list_shards',
    'GET /histogram/<period>/list_shards',
    'GET /find/<account>/tags?query=',
    'GET /find/tags?query=',
    'DELETE /full/tags?query=',
    'DELETE /full/canonical/<uuid>/<metric>',
    'DELETE /nnt/tags?query=, /text/tags?query=, /histogram/tags?query=',
  ];
  return new ProtocolError(404, 'not_found', `no such endpoint: ${path.length > 200 ? `${path.slice(0, 200)}…` : path}`, {
    endpoints: opts.sweepApi === false ? endpoints.filter((e) => !e.includes('/sweep_delete')) : endpoints,
  });
}

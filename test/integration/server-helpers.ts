import { request } from 'undici';
import { startServer, type RunningNode } from '../../src/server/server.js';
import type { ServerConfig } from '../../src/server/config.js';

export const UUID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
export const UUID2 = 'aaaaaaaa-0b7d-4c55-9a0e-1d2b3c4d5e6f';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** One raw HTTP exchange; `path` is sent exactly as given (already encoded). */
export async function call(
  base: string,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string | Buffer | AsyncIterable<Buffer> } = {},
): Promise<Reply> {
  // A fresh connection per call: a kept-alive socket a node or proxy has just closed fails a POST with ECONNRESET.
  const res = await request(base + path, { method: method as 'GET', headers: opts.headers ?? {}, body: (opts.body ?? null) as string | null, reset: true });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

export function nnt(offset: number, fields: Record<string, unknown> = {}, metric = 'cpu', id = UUID): Record<string, unknown> {
  return { metric, id, offset, count: 1, value: 1, ...fields };
}

export const write = (base: string, records: unknown, path = '/write/nnt'): Promise<Reply> =>
  call(base, 'POST', path, { headers: { 'content-type': 'application/json' }, body: typeof records === 'string' ? records : JSON.stringify(records) });

export function rollupPath(q: { start: string; end: string; span: string; engine?: string; type?: string }, metric = 'cpu', id = UUID): string {
  const p = new URLSearchParams({ start_ts: q.start, end_ts: q.end, rollup_span: q.span });
  if (q.engine) p.set('get_engine', q.engine);
  if (q.type) p.set('type', q.type);
  return `/rollup/${id}/${encodeURIComponent(metric)}?${p.toString()}`;
}

export async function rollup(base: string, q: Parameters<typeof rollupPath>[0], metric = 'cpu', id = UUID): Promise<any[]> {
  const r = await call(base, 'GET', rollupPath(q, metric, id));
  if (r.status !== 200) throw new Error(`rollup ${r.status}: ${r.text}`);
  return r.json;
}

export async function memoryNode(overrides: Partial<ServerConfig> = {}): Promise<RunningNode> {
  return startServer({ port: 0, dataDir: null, ...overrides }, { onInternalError: (err) => console.error('node internal error', err) });
}

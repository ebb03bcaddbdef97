import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A plain node:http server that answers the node API's shapes (idle sweep status, rollup rows,
 * write acks), and can be told to answer the next requests with a given status. For fault tests
 * that need exact control over what the node says (503 then 200, a 400) or a big body to trickle.
 * `answer` lets a test play a node no real node would be: one that lies in its acknowledgement,
 * sends an endless body, or puts terminal escapes in its strings.
 */
export interface StubNode {
  url: string;
  port: number;
  /** Every request seen: method, path, headers. */
  readonly requests: Array<{ method: string; path: string; headers: IncomingHttpHeaders }>;
  /** Answer the next requests with these statuses (and a JSON error body), one each. */
  failNext(...statuses: number[]): void;
  close(): Promise<void>;
}

const IDLE = JSON.stringify({ nnt: { running: 'false' }, text: { running: 'false' }, histogram: { running: 'false' } });

/** Answers a request itself (return true), or leaves it to the stub's normal answers (false). `body` is the request body. */
export type StubAnswer = (req: IncomingMessage, res: ServerResponse, body: string) => boolean;

/**
 * Writes `chunk` to `res` for ever (until the client hangs up), as fast as the socket drains;
 * resolves with the bytes written. For "an endless answer" tests.
 */
export function answerEndlessly(res: ServerResponse, chunk: string, contentType = 'application/json'): Promise<number> {
  res.writeHead(200, { 'content-type': contentType });
  const buf = Buffer.from(chunk);
  let sent = 0;
  return new Promise((resolve) => {
    const pump = (): void => {
      while (!res.destroyed && !res.writableEnded) {
        sent += buf.length;
        if (!res.write(buf)) return void res.once('drain', pump);
      }
    };
    res.on('close', () => resolve(sent));
    pump();
  });
}

export async function startStubNode(opts: { rollupRows?: number; answer?: StubAnswer } = {}): Promise<StubNode> {
  const requests: StubNode['requests'] = [];
  const failures: number[] = [];
  const rows = JSON.stringify(Array.from({ length: opts.rollupRows ?? 200 }, (_, i) => [1_700_000_000 + i * 60, null]));
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
      if (opts.answer?.(req, res, body)) return;
      const json = (status: number, payload: string, extra: Record<string, string> = {}): void => {
        res.writeHead(status, { 'content-type': 'application/json', ...extra });
        res.end(payload);
      };
      const fail = failures.shift();
      if (fail !== undefined) {
        json(fail, JSON.stringify({ error: `stub says ${fail}`, code: fail === 400 ? 'bad_request' : 'internal' }), fail === 503 ? { 'retry-after': '0' } : {});
        return;
      }
      const path = (req.url ?? '').split('?')[0]!;
      if (req.method === 'GET' && path === '/sweep_delete') {
        json(200, IDLE);
        return;
      }
      if (req.method === 'GET' && path.startsWith('/rollup/')) {
        json(200, rows);
        return;
      }
      if ((req.method === 'POST' || req.method === 'PUT') && path === '/write/nnt') {
        let n: number;
        try {
          n = (JSON.parse(body) as unknown[]).length;
        } catch {
          json(400, JSON.stringify({ error: 'not JSON', code: 'invalid_json' }));
          return;
        }
        json(200, JSON.stringify({ records: n }));
        return;
      }
      json(404, JSON.stringify({ error: 'not found', code: 'not_found' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    failNext: (...s) => failures.push(...s),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Recorded {
  method: string;
  /** The raw request target, exactly as it arrived (still percent-encoded). */
  rawUrl: string;
  headers: IncomingHttpHeaders;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body: string;
  /** Answer this much later (to test cancellation while a request is in flight). */
  delayMs?: number;
}

export interface RecordingNode {
  url: string;
  requests: Recorded[];
  /** What the next requests get; a function sees the request. */
  reply: Reply | ((req: Recorded) => Reply);
  close(): Promise<void>;
}

/**
 * A plain node:http server that records every request and answers with whatever the test
 * sets: for checking what the client sends and how it copes with unusual or broken answers.
 */
export async function startRecordingNode(reply: RecordingNode['reply'] = { body: '[]' }): Promise<RecordingNode> {
  const node: RecordingNode = {
    url: '',
    requests: [],
    reply,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const rec: Recorded = { method: req.method ?? '', rawUrl: req.url ?? '', headers: req.headers };
      node.requests.push(rec);
      const r = typeof node.reply === 'function' ? node.reply(rec) : node.reply;
      const answer = (): void => {
        if (res.destroyed) return;
        res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers });
        res.end(r.body);
      };
      if (r.delayMs) {
        const timer = setTimeout(answer, r.delayMs);
        res.on('close', () => clearTimeout(timer));
      } else answer();
    });
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  node.url = `http://127.0.0.1:${port}`;
  return node;
}

/** The query of a recorded rollup read. */
export function queryOf(rec: Recorded): URLSearchParams {
  return new URL(rec.rawUrl, 'http://x').searchParams;
}

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
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const rec: Recorded = { method: req.method ?? '', rawUrl: req.url ?? '', headers: req.headers };
      node.requests.push(rec);
      const r = typeof node.reply === 'function' ? node.reply(rec) : node.reply;
      res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers });
      res.end(r.body);
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

/**
 * One bounded HTTP exchange with a peer node (replay batches, proxied reads, gossip). The server
 * does not use tsnode's client library (the layers keep them apart): this is the little it needs,
 * with a deadline and a cap on the answer's size.
 */
import { Agent, request, type IncomingHttpHeaders } from 'node:http';

/** Connections to peers are kept open between calls (a replayer sends batch after batch). */
const agent = new Agent({ keepAlive: true });

export interface PeerAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface PeerCall {
  method: 'GET' | 'PUT' | 'POST';
  url: string;
  headers?: Record<string, string>;
  /** A body in pieces is sent as they are, without joining them. */
  body?: Buffer | string | readonly Uint8Array[];
  timeoutMs: number;
  /** Answers longer than this fail the call (the peer is not believed). */
  maxAnswerBytes: number;
}

export function callPeer(call: PeerCall): Promise<PeerAnswer> {
  return new Promise((resolve, reject) => {
    const body = call.body === undefined ? [] : typeof call.body === 'string' ? [Buffer.from(call.body)] : Buffer.isBuffer(call.body) ? [call.body] : call.body;
    const headers: Record<string, string> = { ...call.headers };
    if (call.body !== undefined) headers['content-length'] = String(body.reduce((n, b) => n + b.byteLength, 0));
    const req = request(call.url, { method: call.method, headers, timeout: call.timeoutMs, agent }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.byteLength;
        if (size > call.maxAnswerBytes) {
          req.destroy(new Error(`the answer of ${call.url} is larger than ${call.maxAnswerBytes} bytes`));
          return;
        }
        chunks.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${call.url} within ${call.timeoutMs} ms`)));
    req.on('error', reject);
    for (const piece of body) req.write(piece);
    req.end();
  });
}

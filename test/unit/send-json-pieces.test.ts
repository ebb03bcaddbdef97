import { createServer, get, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendJsonPieces } from '../../src/server/http.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** Serves one answer made by `answer(res)` and returns what a client got: headers and body. */
async function serve(answer: (res: ServerResponse) => Promise<void>): Promise<{ headers: Record<string, unknown>; body: string }> {
  server = createServer((_req, res) => void answer(res));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return new Promise((resolve, reject) => {
    get(`http://127.0.0.1:${port}/`, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ headers: res.headers, body }));
    }).on('error', reject);
  });
}

describe('sendJsonPieces', () => {
  it('sends the first piece before it renders the second', async () => {
    // What the socket still held, and whether the headers were out, when the second piece was asked for.
    let seen: { headersSent: boolean; pending: number } | undefined;
    const got = await serve(async (res) => {
      function* pieces(): Generator<string> {
        yield '[1';
        seen = { headersSent: res.headersSent, pending: res.socket?.writableLength ?? -1 };
        yield ',2]';
      }
      await sendJsonPieces(res, 200, { one: false, pieces: pieces() });
    });
    expect(got.body).toBe('[1,2]');
    expect(got.headers['transfer-encoding']).toBe('chunked');
    expect(seen).toEqual({ headersSent: true, pending: 0 });
  });

  it('an answer known to be one piece goes with its length, rendered whole', async () => {
    const got = await serve((res) => sendJsonPieces(res, 200, { one: true, pieces: ['[1,2]'] }));
    expect(got.body).toBe('[1,2]');
    expect(got.headers['content-length']).toBe('5');
    expect(got.headers['transfer-encoding']).toBeUndefined();
  });
});

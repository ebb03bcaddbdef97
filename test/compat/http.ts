import { request as httpRequest } from 'node:http';

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/**
 * One request with exactly the headers given (node:http adds only Host and, for a body,
 * Content-Length; no Content-Type unless the caller sets one), as curl or Go's client would
 * send it. The target goes out byte for byte.
 */
export function rawRequest(base: string, method: string, target: string, opts: { headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<RawReply> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...opts.headers };
    if (opts.body !== undefined) headers['content-length'] = Buffer.byteLength(opts.body);
    const req = httpRequest({ host: url.hostname, port: url.port, method, path: target, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** What curl sends for `-d`/`--data-binary` when no -H sets a type. */
export const CURL_FORM = { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'curl/8.5.0', accept: '*/*' } as const;

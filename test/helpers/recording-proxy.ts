import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';

export interface ProxiedExchange {
  method: string;
  /** Path and query as the client sent them. */
  url: string;
  headers: IncomingHttpHeaders;
  /** performance.now() when the request arrived and when its answer was sent back. */
  start: number;
  end?: number;
  status?: number;
  /** The answer's body (every answer here is small JSON). */
  body?: string;
  /** The request's body. */
  requestBody?: Buffer;
}

export interface RecordingProxy {
  url: string;
  exchanges: ProxiedExchange[];
  /** Points the proxy at another node (a ring whose topology names the proxies starts its nodes after them). */
  retarget(url: string): void;
  /**
   * Holds the first request from now on that `match` accepts (its headers and body read, nothing
   * forwarded) until `release()`: a test acts in between (kills the node, resumes replication).
   * `arrived` resolves with the held exchange.
   */
  hold(match: (ex: ProxiedExchange) => boolean): { arrived: Promise<ProxiedExchange>; release(): void };
  close(): Promise<void>;
}

interface Hold {
  match: (ex: ProxiedExchange) => boolean;
  arrive: (ex: ProxiedExchange) => void;
  released: Promise<void>;
}

/**
 * An HTTP proxy in front of one real node that records every exchange with its timing and its
 * answer, so a test can check what a client sent and when (e.g. that a node never had two DELETEs
 * in flight, or that the next DELETE went out only after a status poll showed the node idle).
 * The node itself stays real: the proxy forwards everything unchanged.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  let t = new URL(target);
  const exchanges: ProxiedExchange[] = [];
  const holds: Hold[] = [];
  const server: Server = createServer((req, res) => {
    const ex: ProxiedExchange = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, start: performance.now() };
    exchanges.push(ex);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      ex.requestBody = Buffer.concat(chunks);
      const held = holds.findIndex((h) => h.match(ex));
      if (held === -1) {
        forward();
        return;
      }
      const [h] = holds.splice(held, 1);
      h!.arrive(ex);
      void h!.released.then(forward);
    });
    const forward = (): void => {
      const up = httpRequest({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: { ...req.headers, host: t.host } }, (upRes) => {
        const body: Buffer[] = [];
        upRes.on('data', (c: Buffer) => body.push(c));
        upRes.on('end', () => {
          ex.status = upRes.statusCode;
          ex.body = Buffer.concat(body).toString('utf8');
          ex.end = performance.now();
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          res.end(Buffer.concat(body));
        });
      });
      up.on('error', () => {
        ex.end = performance.now();
        res.destroy();
      });
      up.end(Buffer.concat(chunks));
    };
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    retarget: (url) => {
      t = new URL(url);
    },
    hold: (match) => {
      let arrive!: (ex: ProxiedExchange) => void;
      let release!: () => void;
      const arrived = new Promise<ProxiedExchange>((resolve) => (arrive = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.push({ match, arrive, released });
      return { arrived, release };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** For a node's exchanges: are all its sweep types idle in this GET /sweep_delete answer? */
export function showsIdle(ex: ProxiedExchange): boolean {
  if (ex.method !== 'GET' || !ex.url.startsWith('/sweep_delete') || ex.status !== 200 || !ex.body) return false;
  const s = JSON.parse(ex.body) as Record<string, { running?: string }>;
  return ['nnt', 'text', 'histogram'].every((t) => s[t]?.running === 'false');
}

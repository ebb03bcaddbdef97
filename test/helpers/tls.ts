import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  dir: string;
  /** Paths of PEM files. */
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A second CA that signed nothing we use: trusting it must not make the server trusted. */
  otherCa: string;
}

/**
 * A throwaway CA, a server certificate for 127.0.0.1/localhost and a client certificate, made
 * with the openssl CLI in a temp dir at test time (nothing secret is committed).
 */
export function makePki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-pki-'));
  const p = (f: string): string => join(dir, f);
  const ssl = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const ca = (name: string): void =>
    ssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      p(`${name}-key.pem`),
      '-out',
      p(`${name}.pem`),
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
    );
  ca('ca');
  ca('other-ca');
  const leaf = (name: string, ext: string): void => {
    ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', p(`${name}-key.pem`), '-out', p(`${name}.csr`), '-subj', `/CN=${name}`);
    writeFileSync(p(`${name}.ext`), ext);
    ssl(
      'x509',
      '-req',
      '-in',
      p(`${name}.csr`),
      '-CA',
      p('ca.pem'),
      '-CAkey',
      p('ca-key.pem'),
      '-CAcreateserial',
      '-out',
      p(`${name}.pem`),
      '-days',
      '2',
      '-extfile',
      p(`${name}.ext`),
    );
  };
  leaf('server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  leaf('client', 'extendedKeyUsage=clientAuth\n');
  return {
    dir,
    caCert: p('ca.pem'),
    serverCert: p('server.pem'),
    serverKey: p('server-key.pem'),
    clientCert: p('client.pem'),
    clientKey: p('client-key.pem'),
    otherCa: p('other-ca.pem'),
  };
}

export interface TlsFrontend {
  url: string;
  /** Request headers as the node would see them, in arrival order. */
  readonly seen: IncomingHttpHeaders[];
  /** Client certificate subjects presented (mutual TLS). */
  readonly clientSubjects: string[];
  close(): Promise<void>;
}

/** A TLS-terminating HTTP proxy in front of `upstream` (an http:// node) that records request headers. */
export async function startTlsFrontend(pki: TestPki, upstream: string, opts: { requireClientCert?: boolean } = {}): Promise<TlsFrontend> {
  const seen: IncomingHttpHeaders[] = [];
  const clientSubjects: string[] = [];
  const target = new URL(upstream);
  const server: Server = createHttpsServer(
    {
      key: readFileSync(pki.serverKey),
      cert: readFileSync(pki.serverCert),
      ...(opts.requireClientCert ? { ca: readFileSync(pki.caCert), requestCert: true, rejectUnauthorized: true } : {}),
    },
    (req, res) => {
      seen.push(req.headers);
      const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate?.();
      if (peer && peer.subject) clientSubjects.push(String(peer.subject.CN));
      const out = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      out.on('error', () => {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'upstream failed', code: 'internal' }));
      });
      req.pipe(out);
    },
  );
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    seen,
    clientSubjects,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

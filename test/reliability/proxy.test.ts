import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, proxyFromEnv } from '../../src/client/agent.js';
import { NodeClient } from '../../src/client/node-client.js';
import { testContext } from '../helpers/context.js';
import { openNetworkFromArgs } from '../helpers/network.js';
import { startStubNode, type StubNode } from '../helpers/stub-node.js';

// HTTP_PROXY / HTTPS_PROXY / NO_PROXY: a small CONNECT proxy records which targets it tunnelled.
let node: StubNode;
let proxy: Server;
let proxyUrl: string;
const tunnels: Array<{ target: string; auth: string | undefined }> = [];
const sockets = new Set<Socket>();

beforeAll(async () => {
  node = await startStubNode();
  proxy = createServer((_req, res) => {
    res.writeHead(405).end();
  });
  proxy.on('connect', (req, client: Socket) => {
    tunnels.push({ target: req.url ?? '', auth: req.headers['proxy-authorization'] });
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => proxy.close(() => r()));
  await node.close();
});

describe('proxies from the environment', () => {
  it('proxyFromEnv reads either case, lower case first, and nothing when unset', () => {
    expect(proxyFromEnv({})).toBeUndefined();
    expect(proxyFromEnv({ HTTP_PROXY: '  ' })).toBeUndefined();
    expect(proxyFromEnv({ HTTPS_PROXY: 'http://p:3128' })).toEqual({ httpsProxy: 'http://p:3128' });
    expect(proxyFromEnv({ http_proxy: 'http://a:1', HTTP_PROXY: 'http://b:2', NO_PROXY: 'localhost' })).toEqual({ httpProxy: 'http://a:1', noProxy: 'localhost' });
  });

  it('HTTP_PROXY tunnels requests to the node through the proxy', async () => {
    const before = tunnels.length;
    const t = testContext({ env: { HTTP_PROXY: proxyUrl.replace('//', '//user:pw-hidden@') }, verbose: true });
    const net = openNetworkFromArgs(['--nodes', node.url, '--connect-timeout', '2s', '--request-timeout', '5s', '--retries', '0'], t.ctx);
    try {
      const status = await net.client(node.url).sweepStatus();
      expect(status.nnt.running).toBe(false);
    } finally {
      await net.close();
    }
    expect(tunnels.slice(before).map((x) => x.target)).toEqual([`127.0.0.1:${node.port}`]);
    expect(tunnels.at(-1)?.auth).toMatch(/^Basic /);
    // The proxy's credentials are not logged.
    expect(t.err()).toMatch(/proxy from environment: http via http:\/\/\[redacted\]@127\.0\.0\.1/);
    expect(t.err()).not.toContain('pw-hidden');
  });

  it('NO_PROXY sends matching nodes directly', async () => {
    const before = tunnels.length;
    const dispatcher = createAgent({ proxy: { httpProxy: proxyUrl, noProxy: '127.0.0.1' } });
    try {
      const c = new NodeClient(node.url, { dispatcher });
      await c.sweepStatus();
    } finally {
      await dispatcher.close();
    }
    expect(tunnels.length).toBe(before);
  });

  it('without proxy settings the agent connects directly (no hidden read of process.env)', async () => {
    const before = tunnels.length;
    const dispatcher = createAgent({});
    try {
      await new NodeClient(node.url, { dispatcher }).sweepStatus();
    } finally {
      await dispatcher.close();
    }
    expect(tunnels.length).toBe(before);
  });
});

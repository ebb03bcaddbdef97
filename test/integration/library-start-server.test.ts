import { expect, it } from 'vitest';
import { createAgent, NodeClient, startServer } from '../../src/index.js';

// The library's startServer: the node it starts is a real one the library's client can talk to.
it('starts a reference node through the library entry point', async () => {
  const node = await startServer({ host: '127.0.0.1', port: 0, dataDir: null });
  const dispatcher = createAgent();
  try {
    const status = await new NodeClient(node.url, { dispatcher }).sweepStatus();
    expect(Object.keys(status).sort()).toEqual(['histogram', 'nnt', 'text']);
  } finally {
    await dispatcher.close();
    await node.close();
  }
});

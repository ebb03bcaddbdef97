/**
 * A receipt's look asks a node its lists one after another, on the kept-alive connections the run's
 * polls already hold (one request after another keeps two: the pool frees a connection a moment
 * after its answer): a look asking its lists in parallel opened more, on both sides, at every look
 * of every node. Counted by a TCP relay in front of a real (in-process) node.
 */
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/client/agent.js';
import { NodeClient } from '../../src/client/node-client.js';
import { lookScopeOf, takeLook } from '../../src/client/receipt.js';
import { startServer, type RunningNode } from '../../src/server/server.js';

let node: RunningNode;
let relay: Server;
let relayUrl: string;
let connections = 0;
const sockets = new Set<Socket>();

beforeAll(async () => {
  node = await startServer({ host: '127.0.0.1', port: 0, histogramRollups: [60, 300] });
  const target = new URL(node.url);
  relay = createServer((down) => {
    connections++;
    const up = createConnection({ host: target.hostname, port: Number(target.port) });
    for (const s of [down, up]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    down.pipe(up).pipe(down);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => relay.close(resolve));
  await node.close();
});

describe("a receipt's look", () => {
  it('reads /state and three lists on the connections sequential polls keep, opening none, every list answered', async () => {
    const dispatcher = createAgent();
    try {
      const client = new NodeClient(relayUrl, { dispatcher });
      // What a run's polls leave open: status requests one after another.
      for (let i = 0; i < 4; i++) await client.sweepStatus();
      const polled = connections;
      expect(polled).toBeGreaterThan(0);
      // A numeric step for span 60 and a histogram step for the smallest period: the nntbs list, the raw histograms and period 60.
      const scope = lookScopeOf([
        { types: ['nnt'], nntRollups: [60] },
        { types: ['histogram'], histogramRollups: [60] },
      ]);
      const [look] = await takeLook([client], { scope });
      expect(look!.problem).toBeUndefined();
      const inv = look!.inventory!;
      expect(inv.nnt && 'byPeriod' in inv.nnt).toBe(true);
      expect(inv.histogramRaw && 'shards' in inv.histogramRaw).toBe(true);
      expect([...inv.histogram.keys()]).toEqual([60]);
      expect('shards' in inv.histogram.get(60)!).toBe(true);
      expect(connections - polled).toBe(0);
    } finally {
      await dispatcher.close();
    }
  });
});

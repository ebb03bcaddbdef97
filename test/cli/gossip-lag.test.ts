/**
 * A store that reports replication lag only in `/gossip/json` (no `max_peer_lag` in `/state`, no
 * `/replication/json`): its own gossip entry's `latency` (seconds it is behind each peer, as the
 * store's docs define it) is lag evidence for the sweep preflight, `status` and the library. Small
 * fake nodes: a real reference node always answers `/replication/json`, so it cannot play this store.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { NodeClient } from '../../src/client/node-client.js';
import { readReplicationLag } from '../../src/client/replication-lag.js';
import { runCli } from '../helpers/cli.js';
import { startStubNode, type StubNode } from '../helpers/stub-node.js';

const ids = [randomUUID(), randomUUID()];
/** Node 1 is 12.5 s behind node 0; node 0 is behind nobody. */
const latency = [{ [ids[1]!]: '0' }, { [ids[0]!]: '12.500000' }];
let nodes: StubNode[] = [];
const dispatcher = new Agent();

const send = (res: ServerResponse, body: unknown): boolean => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
  return true;
};

beforeAll(async () => {
  nodes = await Promise.all(
    [0, 1].map((i) =>
      startStubNode({
        answer: (req, res) => {
          if (req.url === '/state') return send(res, { identity: ids[i], current: '-', next: '-' });
          if (req.url === '/gossip/json')
            return send(res, [
              { id: ids[i], gossip_time: '1795366477.983000', gossip_age: '0.000000', topo_current: '-', topo_next: '-', topo_state: 'n/a', latency: latency[i] },
              // What it last heard from the other: never read as this node's own lag.
              { id: ids[1 - i], gossip_time: '1795366477.512000', gossip_age: '0.471000', latency: { [ids[i]!]: '999' } },
            ]);
          return false;
        },
      }),
    ),
  );
});
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.close()));
  await dispatcher.close();
});

const list = (): string => nodes.map((n) => n.url).join(',');

describe('replication lag from /gossip/json', () => {
  it('the library: checked, the lagging node 12.5 s behind the peer its gossip names, the other at 0', async () => {
    const report = await readReplicationLag(nodes.map((n) => new NodeClient(n.url, { dispatcher })));
    expect(report.checked).toBe(true);
    expect(report.nodes[0]).toMatchObject({ checked: true, lagSeconds: 0, from: [] });
    expect(report.nodes[1]).toMatchObject({ checked: true, lagSeconds: 12.5, from: [{ node: nodes[0]!.url, id: ids[0], lagSeconds: 12.5, via: 'gossip' }] });
  });

  it('sweep refuses the lagging node, naming its gossip (exit 2, nothing sent)', async () => {
    const r = await runCli(['sweep', '--nodes', list(), '--before', '1700000000', '--yes', '--retries', '0']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${nodes[1]!.url}: replication is behind: 12.5s behind: data from ${nodes[0]!.url} (12.5s, its gossip)`);
    expect(r.stderr).toContain('nothing was sent');
    for (const n of nodes) expect(n.requests.some((q) => q.method === 'DELETE')).toBe(false);
  });

  it('status shows the lag the gossip reports', async () => {
    const r = await runCli(['status', '--nodes', list(), '-o', 'json', '--retries', '0']);
    expect(r.code, r.stderr).toBe(0);
    const lag = new Map((JSON.parse(r.stdout) as { nodes: Array<{ node: string; lag_seconds: number | null }> }).nodes.map((n) => [n.node, n.lag_seconds]));
    expect(lag.get(nodes[1]!.url)).toBe(12.5);
    expect(lag.get(nodes[0]!.url)).toBe(0);
  });
});

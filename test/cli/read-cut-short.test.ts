/**
 * A long rollup answer goes out in pieces (chunked), so a node or a network that fails after the
 * first piece cannot answer with an error object: the answer just ends without its last chunk.
 * `read` must call that a failed read and print none of it, and a retry must start over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/client/agent.js';
import { NodeClient } from '../../src/client/node-client.js';
import { runCli } from '../helpers/cli.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';

const U = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const T0 = 1_700_000_040; // a multiple of 60
const ROWS = 20_000; // more than one piece (8,192 rows): the node sends it chunked
const ARGS = ['read', U, 'cpu', '--start', String(T0), '--end', String(T0 + ROWS * 60), '--span', '60s', '-o', 'csv'];

let node: TestNode;
let proxy: FaultProxy;

beforeAll(async () => {
  node = await startNode({ memory: true });
  const agent = createAgent();
  try {
    // The node fills the other members with 0: the body need not spell them out.
    const records = Array.from({ length: 100 }, (_, i) => ({ metric: 'cpu', id: U, offset: T0 + i * 600, count: 1, value: i + 0.5 }));
    await new NodeClient(node.url, { dispatcher: agent }).writeNnt(JSON.stringify(records));
  } finally {
    await agent.close();
  }
  proxy = await startFaultProxy(node.url);
});
afterAll(async () => {
  await proxy.close();
  await stopAllNodes();
});

describe('read of a long answer cut short', () => {
  it('the whole answer, read straight, has every row', async () => {
    const r = await runCli([...ARGS, '--node', node.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(ROWS + 1);
  });

  it('an answer that ends after its first pieces is a failed read: nothing printed, exit 1', async () => {
    // Past the headers and the first 1,024-row piece, inside the second.
    proxy.queue({ kind: 'reset', afterBytes: 60_000 });
    const r = await runCli([...ARGS, '--node', proxy.url, '--retries', '0']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('the answer was cut short: the connection closed while the node was sending it (HTTP 200');
    expect(r.stderr).not.toContain('is the node running');
  });

  it('a retry after an answer cut short starts over and prints the whole answer once', async () => {
    proxy.queue({ kind: 'reset', afterBytes: 60_000 });
    const r = await runCli([...ARGS, '--node', proxy.url, '--retries', '1']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(ROWS + 1);
    expect(new Set(lines).size).toBe(ROWS + 1);
  });
});

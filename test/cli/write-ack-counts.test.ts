/**
 * The write summary reads the four counts of the spec's FourPointResponse: a node that counts
 * records misdirected (not its own on its ring) or failed says so, and the summary warns per node.
 * A real ring node for misdirected records; a small fake node for errors (a real reference node
 * stores a request whole or refuses it, so it never acknowledges with errors).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ring, type Topology } from '../../src/ring/index.js';
import { runCli } from '../helpers/cli.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { startStubNode, type StubNode } from '../helpers/stub-node.js';

const dir = mkdtempSync(join(tmpdir(), 'tsnode-ackcounts-'));
const IDS = [randomUUID(), randomUUID(), randomUUID()];
const CHECK = 'fc85e0ab-f568-45e6-86ee-d7443be8277d';
const topology: Topology = { writeCopies: 2, nodes: IDS.map((id, i) => ({ id, address: '127.0.0.1', port: 22_000 + i, apiport: 22_000 + i, weight: 8 })) };
const ring = Ring.compile(topology);
const T = 1_700_000_040;

let node: TestNode;
let stub: StubNode;

beforeAll(async () => {
  writeFileSync(join(dir, 'ring.json'), JSON.stringify({ write_copies: 2, nodes: topology.nodes }));
  node = await startNode({ memory: true, args: ['--node-id', IDS[0]!, '--topology', join(dir, 'ring.json')] });
  stub = await startStubNode({
    answer: (req, res, body) => {
      if (req.url !== '/write/nnt') return false;
      const n = (JSON.parse(body) as unknown[]).length;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ records: n, updated: n - 2, misdirected: 0, errors: 2 }));
      return true;
    },
  });
});
afterAll(async () => {
  await stub.close();
  await stopAllNodes();
});

const recordsFile = (name: string, metrics: readonly string[]): string => {
  const f = join(dir, name);
  writeFileSync(f, metrics.map((metric) => JSON.stringify({ metric, id: CHECK, offset: T, count: 1, value: 1 })).join('\n') + '\n');
  return f;
};

describe('write: the node counts misdirected records and errors', () => {
  it('a ring node pinned with --node that does not own some metrics: written, with a warning naming the count', async () => {
    const notOwned = Array.from({ length: 40 }, (_, i) => `m${i}`).filter((m) => !ring.ownersOf(CHECK, m).some((n) => n.id === IDS[0]));
    const f = recordsFile('misdirected.ndjson', [...notOwned.slice(0, 3)]);
    const r = await runCli(['write', f, '--node', node.url, '--to', 'all', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${node.url} acknowledged records but counted 3 misdirected (records whose metric it says it does not own)`);
    const doc = JSON.parse(r.stdout);
    expect(doc.written).toBe(3);
    expect(doc.nodes[0]).toMatchObject({ node: node.url, records: 3, misdirected: 3, errors: 0 });
  });

  it('records of its own metrics: no warning', async () => {
    const owned = Array.from({ length: 40 }, (_, i) => `m${i}`).filter((m) => ring.ownersOf(CHECK, m).some((n) => n.id === IDS[0]));
    const r = await runCli(['write', recordsFile('owned.ndjson', owned.slice(0, 2)), '--node', node.url, '--to', 'all']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('misdirected');
  });

  it('a node that acknowledges with errors: the summary warns, per node', async () => {
    const r = await runCli(['write', recordsFile('errors.ndjson', ['a', 'b', 'c']), '--node', stub.url, '--to', 'all', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${stub.url} acknowledged records but counted 2 with errors`);
    expect(JSON.parse(r.stdout).nodes[0]).toMatchObject({ misdirected: 0, errors: 2 });
  });
});

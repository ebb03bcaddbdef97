/**
 * A real ring of `tsnode serve` processes on 127.0.0.1: free ports picked first (the topology
 * names them), a topology file, then one node per entry under its own identity.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { Ring, topologyFromJson, type Topology } from '../../src/ring/index.js';
import { deadAddress, startNode, type NodeOptions, type TestNode } from './nodes.js';
import { startRecordingProxy, type RecordingProxy } from './recording-proxy.js';

export interface TestRing {
  nodes: TestNode[];
  ids: string[];
  topology: Topology;
  ring: Ring;
  file: string;
  /** Node index by id. */
  indexOf(id: string): number;
}

export async function startRing(count: number, writeCopies: number, opts: NodeOptions & { perNode?: string[][] } = {}): Promise<TestRing> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = Number(new URL(await deadAddress()).port);
    if (!ports.includes(port)) ports.push(port);
  }
  const ids = ports.map(() => randomUUID());
  const doc = { write_copies: writeCopies, nodes: ids.map((id, i) => ({ id, address: '127.0.0.1', port: ports[i]!, apiport: ports[i]!, weight: 32 })) };
  const file = join(mkdtempSync(join(tmpdir(), 'tsnode-ring-')), 'topology.json');
  writeFileSync(file, JSON.stringify(doc));
  const topology = topologyFromJson(doc);
  const nodes = await Promise.all(
    ids.map((id, i) => startNode({ ...opts, port: ports[i]!, args: ['--topology', file, '--node-id', id, ...(opts.args ?? []), ...(opts.perNode?.[i] ?? [])] })),
  );
  return { nodes, ids, topology, ring: Ring.compile(topology), file, indexOf: (id) => (ids as string[]).indexOf(id.toLowerCase()) };
}

/**
 * A replicating ring whose topology names a recording proxy in front of each node (the proxies
 * first, then the nodes behind them): everything a client or a peer sends a node passes its proxy,
 * which records it and can hold one request while the test acts (kill the node, resume
 * replication). `nodes[i].url` is the node itself (for reads of its own copy), `proxies[i].url` its
 * ring address; a node restarted on its port is still behind its proxy.
 */
export async function startProxiedRing(count: number, writeCopies: number, opts: NodeOptions = {}): Promise<TestRing & { proxies: RecordingProxy[] }> {
  const proxies = await Promise.all(Array.from({ length: count }, () => startRecordingProxy('http://127.0.0.1:9')));
  const ids = proxies.map(() => randomUUID());
  const doc = {
    write_copies: writeCopies,
    nodes: ids.map((id, i) => {
      const port = Number(new URL(proxies[i]!.url).port);
      return { id, address: '127.0.0.1', port, apiport: port, weight: 32 };
    }),
  };
  const file = join(mkdtempSync(join(tmpdir(), 'tsnode-ring-')), 'topology.json');
  writeFileSync(file, JSON.stringify(doc));
  const topology = topologyFromJson(doc);
  const nodes = await Promise.all(ids.map((id) => startNode({ ...opts, args: ['--topology', file, '--node-id', id, ...(opts.args ?? [])] })));
  nodes.forEach((n, i) => proxies[i]!.retarget(n.url));
  return { nodes, ids, topology, ring: Ring.compile(topology), file, indexOf: (id) => (ids as string[]).indexOf(id.toLowerCase()), proxies };
}

export async function getJson(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown; headers: Record<string, string | string[] | undefined> }> {
  const res = await request(url, { headers });
  const text = await res.body.text();
  return { status: res.statusCode, body: text === '' ? null : (JSON.parse(text) as unknown), headers: res.headers };
}

export async function putJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const res = await request(url, { method: 'PUT', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });
  const text = await res.body.text();
  return { status: res.statusCode, body: text === '' ? null : (JSON.parse(text) as unknown) };
}

/** Polls `check` until it returns true or the deadline passes (then throws with the last value). */
export async function eventually(what: string, check: () => Promise<boolean>, deadlineMs = 20_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`not within ${deadlineMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Until no node holds journaled records for a peer (`/replication/json` pending 0 everywhere) and
 * every node's `/state` says it is not behind (`max_peer_lag` 0, which gossip carries a moment
 * later). A record can reach its owner before the sender has its ack and empties the journal: a
 * destructive run in between sees lag and, rightly, refuses.
 */
export async function caughtUp(ring: TestRing, deadlineMs = 20_000): Promise<void> {
  await eventually(
    'every replication journal empty and no node behind',
    async () => {
      const journals = await Promise.all(ring.nodes.map((n) => getJson(`${n.url}/replication/json`)));
      const states = await Promise.all(ring.nodes.map((n) => getJson(`${n.url}/state`)));
      return (
        journals.every((r) => r.status === 200 && (r.body as { peers: Array<{ pending: number }> }).peers.every((p) => p.pending === 0)) &&
        states.every((r) => r.status === 200 && Number((r.body as { max_peer_lag?: unknown }).max_peer_lag ?? 0) === 0)
      );
    },
    deadlineMs,
  );
}

/**
 * For the lag tests (sweep, retention apply): a series of `ring` owned by `a` (primary) and `b`,
 * whether node `node` holds its record at `t` (read locally: the no-proxy header), and pausing or
 * resuming `from`'s replication towards `to` (the node's admin endpoint).
 */
export function lagRing(ringOf: () => TestRing, t: number) {
  const local = { 'X-Snowth-Proxied': '1' };
  return {
    seriesOwnedBy(a: number, b: number): { id: string; metric: string } {
      for (;;) {
        const id = randomUUID();
        const metric = `lag${Math.random().toString(36).slice(2, 8)}`;
        const owners = ringOf()
          .ring.ownersOf(id, metric)
          .map((n) => ringOf().indexOf(n.id));
        if (owners[0] === a && owners[1] === b) return { id, metric };
      }
    },
    async held(node: number, s: { id: string; metric: string }): Promise<boolean> {
      const r = await getJson(`${ringOf().nodes[node]!.url}/rollup/${s.id}/${s.metric}?start_ts=${t - 60}.000&end_ts=${t + 600}.000&rollup_span=60s&type=count`, local);
      return (r.body as Array<[number, number | null]>).some(([, v]) => v !== null);
    },
    async pause(from: number, to: number, paused: boolean): Promise<void> {
      const r = await fetch(`${ringOf().nodes[from]!.url}/replication/${paused ? 'pause' : 'resume'}/${ringOf().ids[to]}`, { method: 'POST' });
      if (r.status !== 200) throw new Error(`replication ${paused ? 'pause' : 'resume'} answered ${r.status}`);
    },
  };
}

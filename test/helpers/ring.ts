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

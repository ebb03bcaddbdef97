/**
 * The demo's replication step: one record written to one node only (its primary) appears on the
 * metric's second owner, replayed from the primary's journal; then every journal drains before the
 * sweep (a sweep is not replicated: data still in a journal would land after it).
 */
import { readFileSync } from 'node:fs';
import type { NodeClient } from '../../../client/node-client.js';
import { hasLag, readReplicationLag } from '../../../client/replication-lag.js';
import type { RunningCluster } from '../../local-cluster/start.js';
import { Ring, topologyFromJson } from '../../../ring/index.js';

export const REPLICATED_METRIC = 'demo.replicated';
const DEADLINE_MS = 15_000;

async function until(what: string, check: () => Promise<boolean>, signal: AbortSignal): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (signal.aborted) throw new Error('interrupted');
    if (Date.now() - started > DEADLINE_MS) throw new Error(`not within ${DEADLINE_MS / 1000} s: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function showReplication(
  cluster: RunningCluster,
  clients: readonly NodeClient[],
  opts: { checkId: string; offsetS: number; signal: AbortSignal; say: (line: string) => void },
): Promise<void> {
  const nodes = cluster.state.nodes;
  if (!cluster.state.ring || nodes.length < 2) {
    opts.say('(a single node: nothing to replicate)');
    return;
  }
  const ring = Ring.compile(topologyFromJson(JSON.parse(readFileSync(cluster.state.ring.file, 'utf8'))));
  const [primary, second] = ring.ownersOf(opts.checkId, REPLICATED_METRIC).map((o) => nodes.findIndex((n) => n.id === o.id));
  if (primary === undefined || second === undefined || primary < 0 || second < 0) throw new Error(`the owners of ${REPLICATED_METRIC} are not nodes of this cluster`);
  const record = {
    id: opts.checkId,
    metric: REPLICATED_METRIC,
    offset: opts.offsetS,
    count: 1,
    value: 42,
    derivative: 0,
    counter: 0,
    stddev: 0,
    derivative_stddev: 0,
    counter_stddev: 0,
  };
  await clients[primary]!.writeNnt([record], { signal: opts.signal });
  opts.say(`wrote 1 record (${REPLICATED_METRIC} = 42) to node ${primary + 1} only, ${nodes[primary]!.url}: the metric's primary owner`);
  const ms = await until(
    `node ${second + 1} has the record`,
    async () => {
      const r = await clients[second]!.readRollup(
        { uuid: opts.checkId, metric: REPLICATED_METRIC, startMs: opts.offsetS * 1000, endMs: (opts.offsetS + 60) * 1000, spanMs: 60_000, engine: 'nnt', type: 'average' },
        { signal: opts.signal },
      );
      return r.points.some((p) => p.value === 42);
    },
    opts.signal,
  );
  opts.say(`node ${second + 1} (${nodes[second]!.url}), its second owner, has it ${ms} ms later: replayed from node ${primary + 1}'s journal, no client wrote it there`);
  // The sweep's own preflight check: journals empty is not enough, since each node's /state
  // max_peer_lag (carried by gossip) reaches 0 a moment later, and the sweep reads that too.
  const drained = await until(
    'every journal is empty and no node reports lag',
    async () => (await readReplicationLag(clients, { call: { signal: opts.signal } })).nodes.every((n) => !hasLag(n)),
    opts.signal,
  );
  opts.say(
    `every node's journals are empty and no node reports lag${drained > 0 ? ` (after ${drained} ms)` : ''}: safe to sweep (sweeps are not replicated; data still in a journal would land after one)`,
  );
}

/**
 * Replication on a real three-node ring (write_copies 2) of `tsnode serve` processes: a record
 * written once to any node reaches each owner; reads at a non-owner are proxied; the no-proxy
 * header reads one node's own data; a paused peer builds a backlog that shows in /replication/json,
 * /gossip/json and /state, and gets everything once resumed; sweeps stay node-local, and a late
 * replay below a sweep's cut-off is stored and counted.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAllNodes } from '../helpers/nodes.js';
import { eventually, getJson, putJson, startRing, type TestRing } from '../helpers/ring.js';

let ring: TestRing;
const NOW = Math.floor(Date.now() / 1000);
const T = NOW - (NOW % 60) - 3600;

beforeAll(async () => {
  ring = await startRing(3, 2);
}, 60_000);
afterAll(() => stopAllNodes());

/** A series whose owners leave out node `outsider` (and, when asked, have `primary` first). */
function seriesOwnedWithout(outsider: number): { id: string; metric: string; owners: number[] } {
  for (;;) {
    const id = randomUUID();
    const metric = `m${Math.random().toString(36).slice(2, 8)}`;
    const owners = ring.ring.ownersOf(id, metric).map((n) => ring.indexOf(n.id));
    if (!owners.includes(outsider)) return { id, metric, owners };
  }
}

const rollup = (node: number, s: { id: string; metric: string }, headers: Record<string, string> = {}) =>
  getJson(`${ring.nodes[node]!.url}/rollup/${s.id}/${s.metric}?start_ts=${T - 60}.000&end_ts=${T + 600}.000&rollup_span=60s&type=average`, headers);
const local = { 'X-Snowth-Proxied': '1' };
const valueAt = (body: unknown): unknown => (body as Array<[number, unknown]>).find((r) => r[0] === T)?.[1] ?? null;

describe('a record written once', () => {
  it('to a node that does not own it: kept by none but its owners, each of which gets it', async () => {
    const s = seriesOwnedWithout(0);
    const w = await putJson(`${ring.nodes[0]!.url}/write/nnt`, [{ id: s.id, metric: s.metric, offset: T, count: 1, value: 42 }]);
    expect(w.status).toBe(200);
    for (const o of s.owners) await eventually(`owner ${o} has the record`, async () => valueAt((await rollup(o, s, local)).body) === 42);
    expect(valueAt((await rollup(0, s, local)).body)).toBeNull();
    const repl = (await getJson(`${ring.nodes[0]!.url}/replication/json`)).body as { peers: Array<Record<string, unknown>>; received: { clients: number } };
    expect(repl.received.clients).toBeGreaterThanOrEqual(1);
    expect(repl.peers.map((p) => Object.keys(p).sort())[0]).toEqual(
      ['bytes', 'dead_letters', 'id', 'lag_seconds', 'last_error', 'oldest_offset', 'paused', 'pending', 'url'].sort(),
    );
  });

  it('to its primary: the second owner gets it by replay', async () => {
    const s = seriesOwnedWithout(-1);
    const [primary, second] = s.owners as [number, number];
    expect((await putJson(`${ring.nodes[primary]!.url}/write/nnt`, [{ id: s.id, metric: s.metric, offset: T, count: 1, value: 7 }])).status).toBe(200);
    await eventually('the second owner has it', async () => valueAt((await rollup(second, s, local)).body) === 7);
    const received = (await getJson(`${ring.nodes[second]!.url}/replication/json`)).body as { received: { peers: number } };
    expect(received.received.peers).toBeGreaterThanOrEqual(1);
  });

  it('text and histogram records replicate too', async () => {
    const s = seriesOwnedWithout(1);
    expect((await putJson(`${ring.nodes[1]!.url}/write/text`, [{ id: s.id, metric: s.metric, offset: T, value: 'hello' }])).status).toBe(200);
    const h = seriesOwnedWithout(1);
    expect((await putJson(`${ring.nodes[1]!.url}/histogram/write`, [{ id: h.id, metric: h.metric, offset: T, period: 60, histogram: 'AAEX/QAB' }])).status).toBe(200);
    for (const o of s.owners) {
      await eventually(`owner ${o} has the text`, async () =>
        JSON.stringify((await getJson(`${ring.nodes[o]!.url}/read/${T}/${T + 60}/${s.id}/${s.metric}`, local)).body).includes('hello'),
      );
    }
    for (const o of h.owners) {
      await eventually(
        `owner ${o} has the histogram`,
        async () => ((await getJson(`${ring.nodes[o]!.url}/histogram/${T}/${T + 60}/60/${h.id}/${h.metric}`, local)).body as unknown[]).length === 1,
      );
    }
  });
});

describe('reads at a non-owner', () => {
  it("are proxied to an owner and equal the owner's answer; with the no-proxy header they answer local data only", async () => {
    const s = seriesOwnedWithout(2);
    expect((await putJson(`${ring.nodes[s.owners[0]!]!.url}/write/nnt`, [{ id: s.id, metric: s.metric, offset: T, count: 1, value: 3 }])).status).toBe(200);
    for (const o of s.owners) await eventually(`owner ${o} has it`, async () => valueAt((await rollup(o, s, local)).body) === 3);
    const proxied = await rollup(2, s);
    expect(proxied.status).toBe(200);
    expect(s.owners.map((o) => ring.ids[o])).toContain(proxied.headers['x-service-answered-by']);
    expect(proxied.body).toEqual((await rollup(s.owners[0]!, s, local)).body);
    const own = await rollup(2, s, local);
    expect(own.headers['x-service-answered-by']).toBe(ring.ids[2]);
    expect(valueAt(own.body)).toBeNull();
    const spelled = await rollup(2, s, { 'X-Service-Proxied': '1' });
    expect(valueAt(spelled.body)).toBeNull();
  });
});

describe('a paused peer', () => {
  it('builds a backlog visible in /replication/json, /gossip/json and /state, and gets it all once resumed', async () => {
    const s = seriesOwnedWithout(-1);
    const [primary, second] = s.owners as [number, number];
    const secondId = ring.ids[second]!;
    for (const [i, n] of ring.nodes.entries()) if (i !== second) expect((await putJson(`${n.url}/replication/pause/${secondId}`, null)).status).toBe(200);
    const records = Array.from({ length: 10 }, (_, k) => ({ id: s.id, metric: s.metric, offset: T + 60 * k, count: 1, value: k }));
    expect((await putJson(`${ring.nodes[primary]!.url}/write/nnt`, records)).status).toBe(200);
    const peerOf = async (): Promise<Record<string, unknown>> =>
      ((await getJson(`${ring.nodes[primary]!.url}/replication/json`)).body as { peers: Array<Record<string, unknown>> }).peers.find((p) => p.id === secondId)!;
    const before = await peerOf();
    expect(before).toMatchObject({ pending: 10, paused: true, oldest_offset: T, last_error: null, dead_letters: 0 });
    expect(before.bytes).toBeGreaterThan(0);
    await eventually('the lag shows in gossip', async () => {
      const gossip = (await getJson(`${ring.nodes[primary]!.url}/gossip/json`)).body as Array<{ id: string; latency: Record<string, string> }>;
      return gossip.length === 3 && Number(gossip[0]!.latency[secondId]) > 0;
    });
    await eventually('the second owner knows it is behind', async () => {
      const state = (await getJson(`${ring.nodes[second]!.url}/state`)).body as { max_peer_lag: number; avg_peer_lag: number };
      return state.max_peer_lag > 0 && state.avg_peer_lag > 0;
    });
    expect(valueAt((await rollup(second, s, local)).body)).toBeNull();
    for (const [i, n] of ring.nodes.entries()) if (i !== second) expect((await putJson(`${n.url}/replication/resume/${secondId}`, null)).status).toBe(200);
    await eventually('the backlog is delivered', async () => (await peerOf()).pending === 0);
    const got = (await rollup(second, s, local)).body as Array<[number, number]>;
    expect(got.filter((r) => r[1] !== null)).toHaveLength(10);
    expect((await peerOf()).lag_seconds).toBe(0);
  });

  it('an unknown peer is a 404 naming the peers', async () => {
    const r = await putJson(`${ring.nodes[0]!.url}/replication/pause/${randomUUID()}`, null);
    expect(r.status).toBe(404);
    expect(JSON.stringify(r.body)).toContain(ring.ids[1]!);
  });
});

describe('sweeps stay node-local', () => {
  it('a sweep on one owner is not repeated on the other; a late replay below its cut-off is stored and counted', async () => {
    const s = seriesOwnedWithout(-1);
    const [a, b] = s.owners as [number, number];
    const aId = ring.ids[a]!;
    expect((await putJson(`${ring.nodes[a]!.url}/write/nnt`, [{ id: s.id, metric: s.metric, offset: T, count: 1, value: 5 }])).status).toBe(200);
    await eventually('both owners have it', async () => valueAt((await rollup(b, s, local)).body) === 5);
    // Replay towards `a` stops; `b` takes an old record meant for both.
    for (const [i, n] of ring.nodes.entries()) if (i !== a) await putJson(`${n.url}/replication/pause/${aId}`, null);
    const late = T - 600;
    expect((await putJson(`${ring.nodes[b]!.url}/write/nnt`, [{ id: s.id, metric: s.metric, offset: late, count: 1, value: 9 }])).status).toBe(200);
    const sweep = await fetch(`${ring.nodes[a]!.url}/sweep_delete`, { method: 'DELETE', headers: { 'X-Snowth-Delete-Time': String(NOW - 60), 'X-Snowth-Data-Types': 'nnt' } });
    expect(sweep.status).toBe(200);
    await eventually('the sweep on a finished', async () => {
      const st = (await getJson(`${ring.nodes[a]!.url}/sweep_delete`)).body as { nnt: Record<string, string> };
      return st.nnt.last_result === 'completed';
    });
    expect(valueAt((await rollup(a, s, local)).body)).toBeNull();
    expect(valueAt((await rollup(b, s, local)).body)).toBe(5);
    for (const [i, n] of ring.nodes.entries()) if (i !== a) await putJson(`${n.url}/replication/resume/${aId}`, null);
    await eventually('the late record reaches a', async () => {
      const st = (await getJson(`${ring.nodes[a]!.url}/sweep_delete`)).body as { nnt: Record<string, string> };
      return st.nnt.last_late_records === '1';
    });
    const st = (await getJson(`${ring.nodes[a]!.url}/sweep_delete`)).body as { nnt: Record<string, string> };
    expect(st.nnt.last_late_oldest).toBe(String(late));
    const rows = (await getJson(`${ring.nodes[a]!.url}/rollup/${s.id}/${s.metric}?start_ts=${late}.000&end_ts=${late + 60}.000&rollup_span=60s&type=average`, local)).body;
    expect(rows).toEqual([[late, 9]]);
    // The peer that never swept shows no late data.
    expect(((await getJson(`${ring.nodes[b]!.url}/sweep_delete`)).body as { nnt: Record<string, string> }).nnt.last_late_records).toBeUndefined();
  });
});

describe('a record a peer refuses for good', () => {
  it('goes to the dead letters with the answer; the rest of its write is delivered', async () => {
    // Node 0 takes 10 s records, node 1 only 60 s ones: a record at :10 is valid on 0 and refused by 1.
    const pair = await startRing(2, 2, { perNode: [['--rollups', '10,60'], []] });
    const id = randomUUID();
    const w = await putJson(`${pair.nodes[0]!.url}/write/nnt`, [
      { id, metric: 'dl', offset: T, count: 1, value: 1 },
      { id, metric: 'dl', offset: T + 10, count: 1, value: 2 },
    ]);
    expect(w.status).toBe(200);
    const peer = async (): Promise<Record<string, unknown>> =>
      ((await getJson(`${pair.nodes[0]!.url}/replication/json`)).body as { peers: Array<Record<string, unknown>> }).peers[0]!;
    await eventually('the refused entry is dead-lettered', async () => (await peer()).dead_letters === 1);
    expect(await peer()).toMatchObject({ pending: 0, dead_letters: 1 });
    const dead = readFileSync(join(pair.nodes[0]!.dataDir, 'replication', pair.ids[1]!, 'dead-letters.ndjson'), 'utf8')
      .trim()
      .split('\n');
    expect(dead).toHaveLength(1);
    expect(JSON.parse(dead[0]!)).toMatchObject({ status: 400, kind: 'nnt' });
    expect(JSON.parse(dead[0]!).answer).toContain('invalid_record');
    const refused = JSON.parse(dead[0]!).records as unknown[];
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ id, metric: 'dl', offset: T + 10, count: 1, value: 2 });
    const delivered = await getJson(`${pair.nodes[1]!.url}/rollup/${id}/dl?start_ts=${T}.000&end_ts=${T + 60}.000&rollup_span=60s&type=average`, local);
    expect(delivered.body).toEqual([[T, 1]]);
    await pair.nodes[0]!.stop();
    await pair.nodes[1]!.stop();
  });
});

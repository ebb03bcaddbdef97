/**
 * Replication on a real five-node ring with write_copies 3: a record written once to a node that
 * does not own it reaches all three owners, the writer keeps no copy, and a read at any non-owner
 * is answered by an owner.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAllNodes } from '../helpers/nodes.js';
import { eventually, getJson, putJson, startRing, type TestRing } from '../helpers/ring.js';

let ring: TestRing;
const T = Math.floor(Date.now() / 1000 / 60) * 60 - 7200;
const local = { 'X-Snowth-Proxied': '1' };

beforeAll(async () => {
  ring = await startRing(5, 3, { memory: true });
}, 60_000);
afterAll(() => stopAllNodes());

describe('five nodes, write_copies 3', () => {
  it('a record written once to a non-owner reaches its three owners; every non-owner answers reads from an owner', async () => {
    const id = randomUUID();
    const metric = 'five.cpu';
    const owners = ring.ring.ownersOf(id, metric).map((n) => ring.indexOf(n.id));
    const others = [0, 1, 2, 3, 4].filter((i) => !owners.includes(i));
    expect(owners).toHaveLength(3);
    const path = `/rollup/${id}/${metric}?start_ts=${T}.000&end_ts=${T + 60}.000&rollup_span=60s&type=average`;
    expect((await putJson(`${ring.nodes[others[0]!]!.url}/write/nnt`, [{ id, metric, offset: T, count: 1, value: 5 }])).status).toBe(200);
    for (const o of owners)
      await eventually(`owner ${o} has it`, async () => JSON.stringify((await getJson(`${ring.nodes[o]!.url}${path}`, local)).body) === JSON.stringify([[T, 5]]));
    for (const o of others) {
      expect((await getJson(`${ring.nodes[o]!.url}${path}`, local)).body).toEqual([[T, null]]);
      const proxied = await getJson(`${ring.nodes[o]!.url}${path}`);
      expect(proxied.body).toEqual([[T, 5]]);
      expect(owners.map((i) => ring.ids[i])).toContain(proxied.headers['x-service-answered-by']);
    }
    const repl = (await getJson(`${ring.nodes[others[0]!]!.url}/replication/json`)).body as { peers: unknown[]; received: { clients: number } };
    expect(repl.peers).toHaveLength(4);
    expect(repl.received.clients).toBe(1);
  });
});

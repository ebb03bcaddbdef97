import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { eventually, getJson, startRing } from '../helpers/ring.js';

// Durability on a replicating ring: writers stream batches to every node; one node at a time (the
// one taking writes, or one only receiving replay) is SIGKILLed at a seeded random moment while
// batches and replays are in flight, then restarted on its data dir. Once every journal is empty,
// every acknowledged record must be on each of its owners.
const SEED = Number(process.env.TSNODE_CRASH_SEED ?? 2626);
const ROUNDS = Number(process.env.TSNODE_CRASH_ROUNDS ?? 3);
const BATCH = 40;
const IN_FLIGHT = 3;
const UUID = randomUUID();
const T0 = Math.floor((Date.now() / 1000 - 10 * 86_400) / 60) * 60;

afterAll(stopAllNodes);

const recordsOf = (b: number) => Array.from({ length: BATCH }, (_, k) => ({ id: UUID, metric: `crash.b${b}`, offset: T0 + k * 60, count: 1, value: b + k / 100 }));

describe('crash on a ring', () => {
  it(`SIGKILL of a node mid-write and mid-replay, ${ROUNDS} times: every acknowledged record reaches every owner`, async () => {
    const ring = await startRing(3, 2, { args: ['--replay-batch', '50'] });
    const nodes: TestNode[] = [...ring.nodes];
    const acked = new Set<number>();
    let next = 0;
    const delays = fc.sample(fc.integer({ min: 150, max: 700 }), { seed: SEED, numRuns: ROUNDS });
    for (const [round, killAfterMs] of delays.entries()) {
      const victim = round % nodes.length;
      let alive = true;
      const streams = Array.from({ length: IN_FLIGHT }, async (_, s) => {
        while (alive) {
          const b = next++;
          const target = nodes[(b + s) % nodes.length]!;
          try {
            const res = await request(`${target.url}/write/nnt`, { method: 'PUT', body: JSON.stringify(recordsOf(b)), headersTimeout: 5000, bodyTimeout: 5000 });
            const text = await res.body.text();
            if (res.statusCode === 200 && (JSON.parse(text) as { records: number }).records === BATCH) acked.add(b);
          } catch {
            // never acknowledged: fine (the victim died under it)
            await new Promise((r) => setTimeout(r, 20));
          }
        }
      });
      await new Promise((r) => setTimeout(r, killAfterMs));
      await nodes[victim]!.kill();
      await new Promise((r) => setTimeout(r, 100));
      alive = false;
      await Promise.all(streams);
      nodes[victim] = await nodes[victim]!.restart();
    }
    // Every journal drained...
    await eventually(
      'every journal is empty',
      async () => {
        for (const n of nodes) {
          const r = (await getJson(`${n.url}/replication/json`)).body as { peers: Array<{ pending: number }> };
          if (r.peers.some((p) => p.pending > 0)) return false;
        }
        return true;
      },
      60_000,
    );
    // ...and every acknowledged batch whole on each owner (its own data: no proxying).
    let lost = 0;
    for (const b of acked) {
      for (const owner of ring.ring.ownersOf(UUID, `crash.b${b}`)) {
        const n = nodes[ring.indexOf(owner.id)]!;
        const rows = (await getJson(`${n.url}/rollup/${UUID}/crash.b${b}?start_ts=${T0}.000&end_ts=${T0 + BATCH * 60}.000&rollup_span=60s&type=count`, { 'X-Snowth-Proxied': '1' }))
          .body as Array<[number, number | null]>;
        lost += BATCH - rows.filter((r) => r[1] === 1).length;
      }
    }
    console.log(`crash-ring: ${ROUNDS} SIGKILLs, ${next} batches sent, ${acked.size} acknowledged (${acked.size * BATCH} records x 2 owners), ${lost} owner copies lost`);
    expect(acked.size).toBeGreaterThan(ROUNDS);
    expect(lost).toBe(0);
  }, 120_000);
});

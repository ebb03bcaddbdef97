import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/client/agent.js';
import { NodeRequestError } from '../../src/client/errors.js';
import { NodeClient } from '../../src/client/node-client.js';
import type { NntRecord } from '../../src/protocol/index.js';
import { NO_RETRY } from '../../src/client/retry.js';
import { startNode, stopAllNodes } from '../helpers/nodes.js';

// Durability: a writer streams batches; the node is SIGKILLed at a (seeded) random moment while
// batches are in flight, then restarted on the same data dir. Every batch that got a 200 must be there.
const SEED = Number(process.env.TSNODE_CRASH_SEED ?? 4242);
const ROUNDS = Number(process.env.TSNODE_CRASH_ROUNDS ?? 4);
const BATCH = 200;
const IN_FLIGHT = 4;
const UUID = 'c4a5b000-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const T0 = Math.floor((Date.now() / 1000 - 20 * 86_400) / 60) * 60;

const rec = (i: number): NntRecord => ({
  metric: 'crash.m',
  id: UUID,
  offset: T0 + i * 60,
  count: 1,
  value: i + 0.5,
  derivative: 0,
  counter: 0,
  stddev: 0,
  derivative_stddev: 0,
  counter_stddev: 0,
});

afterAll(stopAllNodes);

describe('crash', () => {
  it(`SIGKILL mid-stream, ${ROUNDS} times: every acknowledged batch survives the restart`, async () => {
    const rand = fc.sample(fc.integer({ min: 150, max: 900 }), { seed: SEED, numRuns: ROUNDS });
    let node = await startNode();
    // A dispatcher per node process: sockets to a killed process are dead.
    let dispatcher = createAgent({ connectionsPerNode: IN_FLIGHT });
    const ackedBatches = new Set<number>();
    let nextBatch = 0;
    let lost = 0;
    try {
      for (const killAfterMs of rand) {
        const client = new NodeClient(node.url, { dispatcher, retry: NO_RETRY, timeouts: { totalMs: 5_000, headersMs: 5_000, bodyMs: 5_000 } });
        let alive = true;
        // IN_FLIGHT concurrent streams of batches until the node dies under them.
        const streams = Array.from({ length: IN_FLIGHT }, async () => {
          while (alive) {
            const b = nextBatch++;
            try {
              const res = await client.writeNnt(Array.from({ length: BATCH }, (_, k) => rec(b * BATCH + k)));
              if (res.records === BATCH) ackedBatches.add(b);
            } catch (err) {
              expect(err).toBeInstanceOf(NodeRequestError); // a failed batch is fine: it was never acknowledged
              return;
            }
          }
        });
        await new Promise((r) => setTimeout(r, killAfterMs));
        await node.kill();
        alive = false;
        await Promise.all(streams);
        node = await node.restart();
        await dispatcher.destroy();
        dispatcher = createAgent({ connectionsPerNode: IN_FLIGHT });
      }
      // Everything acknowledged, read back from the restarted node.
      const client = new NodeClient(node.url, { dispatcher });
      const res = await client.readRollup(
        { uuid: UUID, metric: 'crash.m', startMs: T0 * 1000, endMs: (T0 + nextBatch * BATCH * 60) * 1000, spanMs: 60_000, type: 'all', engine: 'nnt' },
        { limit: 'none' },
      );
      for (const b of ackedBatches) {
        for (let k = 0; k < BATCH; k++) {
          const i = b * BATCH + k;
          const p = res.points[i];
          if (!p || p.value === null || p.value.value !== i + 0.5 || p.value.count !== 1) lost += 1;
        }
      }
      console.log(
        `crash: ${ROUNDS} SIGKILLs, ${nextBatch} batches sent, ${ackedBatches.size} acknowledged (${ackedBatches.size * BATCH} records), ${lost} acknowledged records lost`,
      );
      expect(ackedBatches.size).toBeGreaterThan(ROUNDS); // the test did write something between kills
      expect(lost).toBe(0);
    } finally {
      await dispatcher.close();
      await node.stop();
    }
  }, 60_000);
});

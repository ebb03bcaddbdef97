import { afterAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/client/agent.js';
import { NodeClient } from '../../src/client/node-client.js';
import type { NntRecord } from '../../src/protocol/index.js';
import { startNode, stopAllNodes } from '../helpers/nodes.js';

// One node under load: 16 concurrent writers (>= 200,000 records), 2 readers and 3 sweeps at rising
// delete times, all at once. Afterwards every acknowledged record at or after the last delete time
// must be readable with its exact values ("data that should remain is never removed").
const WRITERS = 16;
const PER_WRITER = Number(process.env.TSNODE_LOAD_PER_WRITER ?? 12_500); // 16 x 12,500 = 200,000
const BATCH = 500;
const UUID = '5e1f0000-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const T0 = Math.floor((Date.now() / 1000 - 40 * 86_400) / 60) * 60; // 40 days ago, minute-aligned
const valueOf = (w: number, i: number): number => w * 1_000_000 + i + 0.25;

function record(w: number, i: number): NntRecord {
  return {
    metric: `load.m${w}`,
    id: UUID,
    offset: T0 + i * 60,
    count: (i % 7) + 1,
    value: valueOf(w, i),
    derivative: i,
    counter: w,
    stddev: 0,
    derivative_stddev: 0,
    counter_stddev: 0,
  };
}

afterAll(stopAllNodes);

describe('load', () => {
  it(`${WRITERS} writers (${WRITERS * PER_WRITER} records) + readers + 3 sweeps on one node: nothing that should remain is lost`, async () => {
    const node = await startNode();
    const dispatcher = createAgent({ connectionsPerNode: 32 });
    const client = new NodeClient(node.url, {
      dispatcher,
      timeouts: { totalMs: 60_000, headersMs: 60_000, bodyMs: 60_000 },
      retry: { retries: 5, baseDelayMs: 50, maxDelayMs: 500 },
    });
    const started = Date.now();
    const acked: boolean[][] = Array.from({ length: WRITERS }, () => new Array<boolean>(PER_WRITER).fill(false));
    let writing = true;
    let reads = 0;
    let batchesAcked = 0;
    // Which records were acknowledged before the last DELETE was sent: those below its time must be gone.
    let ackedBeforeLastSweep: boolean[][] | undefined;
    const deleteTimes = [0.2, 0.35, 0.5].map((f) => T0 + Math.floor(PER_WRITER * f) * 60);

    try {
      const writers = Array.from({ length: WRITERS }, async (_, w) => {
        for (let from = 0; from < PER_WRITER; from += BATCH) {
          const batch = Array.from({ length: Math.min(BATCH, PER_WRITER - from) }, (_, k) => record(w, from + k));
          const res = await client.writeNnt(batch);
          expect(res.records).toBe(batch.length);
          for (let k = 0; k < batch.length; k++) acked[w]![from + k] = true;
          batchesAcked += 1;
        }
      });
      const readers = Array.from({ length: 2 }, async (_, r) => {
        while (writing) {
          const w = (reads + r) % WRITERS;
          await client.readRollup({ uuid: UUID, metric: `load.m${w}`, startMs: T0 * 1000, endMs: (T0 + PER_WRITER * 60) * 1000, spanMs: 3_600_000 });
          reads += 1;
        }
      });
      // Three sweeps while the writers run, each started once a share of the batches is in.
      const sweeps = (async () => {
        const total = WRITERS * Math.ceil(PER_WRITER / BATCH);
        for (const [k, before] of deleteTimes.entries()) {
          await expect.poll(() => batchesAcked, { timeout: 60_000, interval: 20 }).toBeGreaterThanOrEqual(total * (k + 1) * 0.2);
          if (k === deleteTimes.length - 1) ackedBeforeLastSweep = acked.map((a) => [...a]);
          await client.sweepDelete({ before, types: ['nnt'] });
        }
      })();
      await Promise.all([...writers, sweeps]);
      writing = false;
      await Promise.all(readers);

      // Let the last sweep finish (a later DELETE cancels an earlier one; the last one must complete).
      await expect.poll(async () => (await client.sweepStatus()).nnt.running, { timeout: 30_000, interval: 100, message: 'the last sweep to finish' }).toBe(false);
      const loadMs = Date.now() - started;

      // Verify: every acknowledged record at or after the last delete time, exactly.
      const last = deleteTimes.at(-1)!;
      const firstKept = (last - T0) / 60;
      let checked = 0;
      const wrong: string[] = [];
      for (let w = 0; w < WRITERS; w++) {
        const res = await client.readRollup(
          { uuid: UUID, metric: `load.m${w}`, startMs: last * 1000, endMs: (T0 + PER_WRITER * 60) * 1000, spanMs: 60_000, type: 'all', engine: 'nnt' },
          { limit: 'none' },
        );
        expect(res.points).toHaveLength(PER_WRITER - firstKept);
        res.points.forEach((p, k) => {
          const i = firstKept + k;
          if (!acked[w]![i]) return;
          checked += 1;
          const want = record(w, i);
          if (p.value === null || p.value.value !== want.value || p.value.count !== want.count || p.value.derivative !== want.derivative || p.value.counter !== want.counter) {
            if (wrong.length < 5) wrong.push(`m${w}[${i}]: got ${JSON.stringify(p.value)}`);
          }
        });
      }
      // And the last sweep did its job: what was acknowledged before it and lies before its time is gone.
      let gone = 0;
      for (let w = 0; w < WRITERS; w++) {
        const res = await client.readRollup(
          { uuid: UUID, metric: `load.m${w}`, startMs: T0 * 1000, endMs: last * 1000, spanMs: 60_000, type: 'count', engine: 'nnt' },
          { limit: 'none' },
        );
        res.points.forEach((p, i) => {
          if (!ackedBeforeLastSweep![w]![i]) return;
          if (p.value !== null) wrong.push(`m${w}[${i}] survived the sweep: ${p.value}`);
          else gone += 1;
        });
      }
      expect(gone).toBeGreaterThan(0);
      // The figures for the README.
      console.log(
        `load: ${WRITERS * PER_WRITER} records by ${WRITERS} writers, ${reads} reads, 3 sweeps in ${loadMs} ms; verified ${checked} kept records, ${gone} swept records gone`,
      );
      expect(wrong).toEqual([]);
      expect(checked).toBe(WRITERS * (PER_WRITER - firstKept));
      expect(reads).toBeGreaterThan(0);
    } finally {
      await dispatcher.close();
    }
  }, 90_000);
});

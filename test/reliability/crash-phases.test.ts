import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Agent, request } from 'undici';
import { BIN } from '../helpers/cli.js';

// SIGKILLs that land where the plain crash test cannot reach: inside a flush (the node traces its
// flushes, and paces them one series per slice so a flush lasts long enough to be killed in),
// inside the replay of the log at start-up, and inside a sweep. After the last restart every
// acknowledged record must be there (except what a sweep deleted, all of a series or none), and
// every larger span must equal the merge of the 60 s records it holds.
const SEED = Number(process.env.TSNODE_CRASH_SEED ?? 1313);
const FLUSH_KILLS = Number(process.env.TSNODE_CRASH_FLUSH_KILLS ?? 6);
const REPLAY_KILLS = Number(process.env.TSNODE_CRASH_REPLAY_KILLS ?? 3);
const SWEEP_KILLS = Number(process.env.TSNODE_CRASH_SWEEP_KILLS ?? 3);
const SERIES = 40;
const BATCH = 200;
const WRITERS = 4;
const ROLLUPS = [60, 300, 1800, 10800];
const UUID = 'c4a5b111-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const T0 = 1_650_000_000 - (1_650_000_000 % 10800);

const dir = mkdtempSync(join(tmpdir(), 'tsnode-crashphases-'));
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface Node {
  url: string;
  child: ChildProcess;
  /** Flush events the node traced so far, and notices. */
  events: Array<{ event: string; generation?: number; records?: number }>;
  stderr: string[];
  kill(): Promise<void>;
}

async function startNode(args: string[]): Promise<Node> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dir, '--rollups', ROLLUPS.join(','), '--trace-flush', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FORCE_COLOR: '0' },
  });
  children.add(child);
  const node: Node = {
    url: '',
    child,
    events: [],
    stderr: [],
    kill: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          resolve();
          return;
        }
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
  createInterface({ input: child.stderr }).on('line', (line) => {
    node.stderr.push(line);
    const m = / flush (\{.*\})$/.exec(line);
    if (m) node.events.push(JSON.parse(m[1]!));
  });
  node.url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`node exited with ${code}: ${node.stderr.join('\n')}`)));
  });
  child.once('exit', () => children.delete(child));
  return node;
}

/** Waits for `cond`, looking every 2 ms: a kill is timed from the moment a phase starts. */
const until = (what: string, cond: () => boolean): Promise<void> =>
  vi.waitFor(
    () => {
      if (!cond()) throw new Error(`timed out waiting for ${what}`);
    },
    { timeout: 15_000, interval: 2 },
  );

/** Record i: series i % SERIES, one per 60 s per series, value i + 0.5. */
const seriesOf = (i: number) => i % SERIES;
const tsOf = (i: number) => T0 + Math.floor(i / SERIES) * 60;
const record = (i: number) => ({ metric: `cp.s${seriesOf(i)}`, id: UUID, offset: tsOf(i), count: 1 + (i % 3), value: i + 0.5 });

describe('kills inside a flush, a replay and a sweep', () => {
  it(`${FLUSH_KILLS} kills in flushes, ${REPLAY_KILLS} in start-up replays, ${SWEEP_KILLS} in sweeps: nothing acknowledged lost, larger spans equal their 60 s records`, async () => {
    const delays = fc.sample(fc.integer({ min: 0, max: 60 }), { seed: SEED, numRuns: FLUSH_KILLS + REPLAY_KILLS + SWEEP_KILLS });
    const acked = new Set<number>();
    let next = 0;
    let kills = 0;
    let inFlush = 0;
    let inReplay = 0;
    let inSweep = 0;
    /** Per sweep: its delete time (records before it, in a series it reached, may be gone). */
    const sweptBefore: number[] = [];

    /** Writers streaming batches until `alive()` turns false or the node dies under them. */
    const write = (node: Node, alive: () => boolean) => {
      const dispatcher = new Agent({ connections: WRITERS + 1 });
      return {
        done: Promise.all(
          Array.from({ length: WRITERS }, async () => {
            while (alive()) {
              const from = next;
              next += BATCH;
              try {
                const res = await request(`${node.url}/write/nnt`, { method: 'POST', dispatcher, body: JSON.stringify(Array.from({ length: BATCH }, (_, k) => record(from + k))) });
                const text = await res.body.text();
                if (res.statusCode === 200 && (JSON.parse(text) as { records?: number }).records === BATCH) for (let k = 0; k < BATCH; k++) acked.add(from + k);
              } catch {
                return; // the node died: never acknowledged
              }
            }
          }).concat(
            // A reader of a hot series: reads apply its waiting records early (then sweeps and replays meet them).
            (async () => {
              while (alive()) {
                try {
                  const res = await request(`${node.url}/rollup/${UUID}/cp.s0?start_ts=${T0}.000&end_ts=${tsOf(next) + 60}.000&rollup_span=300s`, { dispatcher });
                  await res.body.dump();
                } catch {
                  return;
                }
              }
            })(),
          ),
        ).finally(() => dispatcher.destroy()),
      };
    };
    const pace = ['--flush-records', '3000', '--flush-pause', '3'];
    let d = 0;

    // Kills inside a flush: after a traced start, before its done.
    for (let k = 0; k < FLUSH_KILLS; k++) {
      const node = await startNode(pace);
      let alive = true;
      const w = write(node, () => alive);
      const seen = node.events.length;
      await until('a flush to start', () => node.events.slice(seen).some((e) => e.event === 'start' && (e.records ?? 0) >= 1000));
      const start = node.events.slice(seen).find((e) => e.event === 'start' && (e.records ?? 0) >= 1000)!;
      await new Promise((r) => setTimeout(r, delays[d++]));
      const done = node.events.some((e) => e.event === 'done' && e.generation === start.generation);
      await node.kill();
      alive = false;
      await w.done;
      kills++;
      if (!done) inFlush++;

      // Kills inside the replay of that backlog at the next start.
      if (k < REPLAY_KILLS) {
        const again = await startNode(pace);
        await until('the replay to start', () => again.events.some((e) => e.event === 'start'));
        await new Promise((r) => setTimeout(r, delays[d++]));
        const replayDone = again.events.some((e) => e.event === 'done');
        await again.kill();
        kills++;
        if (!replayDone) inReplay++;
      }
    }

    // Kills inside a sweep (writers going on meanwhile, above the delete time).
    for (let k = 0; k < SWEEP_KILLS; k++) {
      const node = await startNode(['--sweep-pace', '5']);
      let alive = true;
      const w = write(node, () => alive);
      await until('some writes', () => acked.size > 0 && next > 4 * BATCH * WRITERS);
      const before = tsOf(Math.floor(Math.min(...[...acked].slice(-1), next) / 2));
      sweptBefore.push(before);
      const res = await request(`${node.url}/sweep_delete`, { method: 'DELETE', headers: { 'X-Service-Delete-Time': String(before) } });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
      // Running, some series done: then the kill.
      await new Promise((r) => setTimeout(r, 20 + delays[d++]!));
      const st = await request(`${node.url}/sweep_delete`);
      const running = ((await st.body.json()) as { nnt: { running: string } }).nnt.running === 'true';
      await node.kill();
      alive = false;
      await w.done;
      kills++;
      if (running) inSweep++;
    }

    // Verify on a node that runs as usual.
    const node = await startNode([]);
    const lastSweep = sweptBefore.length ? Math.max(...sweptBefore) : 0;
    let lost = 0;
    let checked = 0;
    let sweptSeries = 0;
    let spanMismatches = 0;
    const mismatches: string[] = [];
    const end = tsOf(next) + 10800;
    const read = async (s: number, span: number, engine: string) => {
      const res = await request(`${node.url}/rollup/${UUID}/cp.s${s}?start_ts=${T0}.000&end_ts=${end}.000&rollup_span=${span}s&type=all&get_engine=${engine}`, {
        headers: { 'x-snowth-advisory-limit': 'none' },
      });
      expect(res.statusCode).toBe(200);
      return (await res.body.json()) as Array<[number, { count: number; value: number } | null]>;
    };
    for (let s = 0; s < SERIES; s++) {
      const rows = await read(s, 60, 'nnt');
      const byTs = new Map(rows.map(([ts, v]) => [ts, v]));
      let goneBefore = 0;
      let lastGone = -Infinity;
      let firstKept = Infinity;
      for (const i of acked) {
        if (seriesOf(i) !== s) continue;
        const v = byTs.get(tsOf(i));
        const want = record(i);
        if (tsOf(i) < lastSweep && (v === null || v === undefined)) {
          // Before a delete time and gone: a sweep reached the series (checked below).
          goneBefore++;
          lastGone = Math.max(lastGone, tsOf(i));
          continue;
        }
        if (tsOf(i) < lastSweep) firstKept = Math.min(firstKept, tsOf(i));
        else checked++;
        if (!v || v.value !== want.value || v.count !== want.count) {
          lost++;
          if (mismatches.length < 5) mismatches.push(`cp.s${s} @${tsOf(i)}: ${JSON.stringify(v)} != ${want.value}`);
        }
      }
      // What a series lost to sweeps is everything before one of their delete times, nothing more.
      if (goneBefore > 0 && !sweptBefore.some((t) => lastGone < t && t <= firstKept)) {
        lost++;
        mismatches.push(`cp.s${s}: records gone up to ${lastGone}, kept from ${firstKept}: no sweep time between them (${sweptBefore.join(', ')})`);
      }
      if (goneBefore > 0) sweptSeries++;
      // Every larger span equals the merge of the raw records it holds.
      for (const span of ROLLUPS.slice(1)) {
        const [nnt, recalc] = await Promise.all([read(s, span, 'nnt'), read(s, span, 'recalc')]);
        nnt.forEach(([ts, a], j) => {
          const b = recalc[j]![1];
          const same = a === null ? b === null : b !== null && a.count === b.count && Math.abs(a.value - b.value) <= 1e-9 * Math.max(1, Math.abs(b.value));
          if (!same) {
            spanMismatches++;
            if (mismatches.length < 10) mismatches.push(`cp.s${s} ${span}s @${ts}: nnt ${JSON.stringify(a)} vs raw ${JSON.stringify(b)}`);
          }
        });
      }
    }
    await node.kill();
    console.log(
      `crash-phases: ${kills} SIGKILLs (${inFlush} inside a flush, ${inReplay} inside a start-up replay, ${inSweep} inside a running sweep); ` +
        `${acked.size} acknowledged records, ${checked} checked after the last delete time, ${lost} lost; ${sweptSeries}/${SERIES} series reached by a sweep; ` +
        `${spanMismatches} larger-span buckets differing from their 60 s records`,
    );
    expect(mismatches).toEqual([]);
    expect(lost).toBe(0);
    expect(spanMismatches).toBe(0);
    expect(inFlush).toBe(FLUSH_KILLS);
    expect(inReplay).toBe(REPLAY_KILLS);
    expect(inSweep).toBe(SWEEP_KILLS);
  }, 120_000);
});

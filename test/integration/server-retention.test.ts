// Node-managed retention on a real in-process node with a data dir and an injected clock: every
// shard lying entirely past its retention goes, nothing newer does, and a restart later goes on
// from there. Plus the /state report and --no-sweep-api.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/client/agent.js';
import { NodeRequestError } from '../../src/client/errors.js';
import { NodeClient } from '../../src/client/node-client.js';
import { parseRetention } from '../../src/server/config.js';
import { startServer, type RunningNode } from '../../src/server/server.js';
import type { ShardSpan } from '../../src/server/shards.js';
import { call, nnt, UUID, write } from './server-helpers.js';

const HOUR = 3600;
const DAY = 86_400;
/** The newest record; the clock starts here. */
const T0 = 1_700_006_400;
const ROLLUPS = [60, 300];
const HIST = [60];
// Small shards so five days hold many: 60 s shards of 7,620 s, 300 s of 38,100 s, raw of 15,240 s.
const SHARDS = { nnt: new Map([[60, 7620]]), histogram: new Map([[60, 6 * HOUR]]), raw: 15_240 };

let dir: string;
let node: RunningNode | undefined;
let nowMs = T0 * 1000;
let notices: string[] = [];

afterEach(async () => {
  await node?.close();
  node = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function start(retention: string, extra: Record<string, unknown> = {}): Promise<RunningNode> {
  return startServer(
    {
      port: 0,
      dataDir: dir,
      rollups: ROLLUPS,
      histogramRollups: HIST,
      diskReserveBytes: 0,
      shards: SHARDS,
      retention: parseRetention(retention, ROLLUPS, HIST),
      retentionIntervalMs: 3_600_000,
      now: () => nowMs,
      ...extra,
    },
    { onNotice: (m) => notices.push(m), onInternalError: (err) => console.error('node internal error', err) },
  );
}

/** Five days of data: a record every 10 minutes, a histogram every hour. */
async function fill(url: string): Promise<void> {
  const recs = [];
  for (let t = T0 - 5 * DAY; t <= T0; t += 600) recs.push(nnt(t, { value: t % 97 }));
  expect((await write(url, recs)).status).toBe(200);
  const hist = [];
  for (let t = T0 - 5 * DAY; t <= T0; t += HOUR) hist.push({ metric: 'lat', id: UUID, offset: t, period: 60, histogram: 'AAEX/QAB' });
  expect((await write(url, hist, '/histogram/write')).status).toBe(200);
}

type Inventory = Record<string, ShardSpan[]>;
async function inventory(url: string): Promise<Inventory> {
  const nntbs = (await call(url, 'GET', '/list_nntbs_shards')).json as Array<{ period: number; shard: Array<{ block_floor: number; 'block:ceiling': number }> }>;
  const out: Inventory = {};
  for (const p of nntbs) out[`nnt:${p.period}`] = p.shard.map((s) => ({ start: s.block_floor, end: s['block:ceiling'] }));
  out.raw = (await call(url, 'GET', '/raw/list_shards')).json;
  out['histogram:60'] = (await call(url, 'GET', '/histogram/60/list_shards')).json;
  return out;
}

/** What a retention keeps of an inventory: the shards that do not lie entirely past it. */
function kept(inv: Inventory, ages: Record<string, number | undefined>, nowSec: number): Inventory {
  return Object.fromEntries(Object.entries(inv).map(([k, shards]) => [k, shards.filter((s) => ages[k] === undefined || s.end > nowSec - ages[k])]));
}

describe('node-managed retention', () => {
  it('removes exactly the shards lying past their retention, nothing newer, and goes on after a restart', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsnode-retention-'));
    notices = [];
    nowMs = T0 * 1000;
    const rules = 'nnt:60=1d,nnt:300=3d,histogram:60=2d';
    node = await start(rules);
    await fill(node.url);
    const before = await inventory(node.url);
    expect(before['nnt:60']!.length).toBeGreaterThan(10);
    expect(before['histogram:60']!.length).toBe(21);
    const ages = { 'nnt:60': DAY, 'nnt:300': 3 * DAY, 'histogram:60': 2 * DAY, raw: DAY };

    const removed = node.retention!.check();
    const after = await inventory(node.url);
    const expected = kept(before, ages, T0);
    expect(after).toEqual(expected);
    // Something went from every rule, and the shard straddling each cut-off stayed.
    for (const k of Object.keys(ages)) expect(after[k]!.length).toBeLessThan(before[k]!.length);
    expect(after['nnt:60']![0]!.start).toBeLessThan(T0 - DAY);
    expect(removed.length).toBe(Object.keys(ages).reduce((n, k) => n + before[k]!.length - after[k]!.length, 0) - (before.raw!.length - after.raw!.length));
    expect(notices.some((m) => /^retention: removed nnt 60 s shard \[\d+, \d+\) .* past its retention of 86400 s/.test(m))).toBe(true);

    // The data of the straddling shard is still there, older than the cut-off included.
    const oldest = after['nnt:60']![0]!.start;
    const read = await call(node.url, 'GET', `/rollup/${UUID}/cpu?start_ts=${oldest}.000&end_ts=${T0 + 60}.000&rollup_span=60s&type=count`);
    const firstRecord = (read.json as Array<[number, number | null]>).find((r) => (r[1] ?? 0) > 0)![0];
    expect(firstRecord).toBe(Math.ceil(oldest / 600) * 600);
    expect(firstRecord).toBeLessThan(T0 - DAY);

    // /state reports the rules in seconds; the raw rows share nnt:60's rule (one copy).
    const state = (await call(node.url, 'GET', '/state')).json;
    expect(state.retention).toEqual({ nnt: { '60': DAY, '300': 3 * DAY }, histogram: { '60': 2 * DAY }, raw: DAY, histogram_raw: 2 * DAY });

    // A day later, after a restart: the check at start removes what has aged past since.
    await node.close();
    nowMs = (T0 + DAY) * 1000;
    notices = [];
    node = await start(rules);
    const later = await inventory(node.url);
    expect(later).toEqual(kept(after, ages, T0 + DAY));
    expect(later['nnt:300']!.length).toBeGreaterThan(0);
    expect(notices.length).toBeGreaterThan(0);
  });

  it('without a raw rule and with no rule for a period, those shards stay', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsnode-retention-'));
    nowMs = T0 * 1000;
    node = await start('histogram:60=1d');
    await fill(node.url);
    const before = await inventory(node.url);
    node.retention!.check();
    const after = await inventory(node.url);
    expect(after).toEqual(kept(before, { 'histogram:60': DAY }, T0));
    expect(after['histogram:60']!.length).toBeLessThan(before['histogram:60']!.length);
    expect((await call(node.url, 'GET', '/state')).json.retention).toEqual({ nnt: {}, histogram: { '60': DAY }, raw: null, histogram_raw: DAY });
  });

  it('--no-sweep-api: /sweep_delete is a 404, which the client reports as no_sweep_api', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsnode-retention-'));
    node = await start('nnt:60=1d', { noSweepApi: true });
    const missing = await call(node.url, 'GET', '/sweep_delete');
    expect(missing.status).toBe(404);
    // Its list of endpoints does not offer what it just refused.
    expect(missing.json.endpoints).toContain('GET /list_nntbs_shards');
    expect(missing.json.endpoints.some((e: string) => e.includes('sweep_delete'))).toBe(false);
    const dispatcher = createAgent();
    try {
      const client = new NodeClient(node.url, { dispatcher });
      const err = await client.sweepDelete({ before: T0 - DAY, types: ['nnt'] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NodeRequestError);
      expect((err as NodeRequestError).code).toBe('no_sweep_api');
    } finally {
      await dispatcher.close();
    }
    // The inventories answer as ever.
    expect((await call(node.url, 'GET', '/list_nntbs_shards')).status).toBe(200);
  });
});

describe('--retention parsing', () => {
  it('names the rule and what was expected', () => {
    expect(() => parseRetention('nnt:61=1d', ROLLUPS, HIST)).toThrow(/nnt period 61, which this node does not keep \(60, 300\)/);
    expect(() => parseRetention('nnt:60=soon', ROLLUPS, HIST)).toThrow(/--retention nnt:60: "soon" is not a time span/);
    expect(() => parseRetention('raw=1w,nnt:60=52w', ROLLUPS, HIST)).toThrow(/one copy.*must agree/);
    expect(parseRetention('raw=1w', ROLLUPS, HIST)).toEqual({ nnt: new Map([[60, 604_800]]), histogram: new Map(), raw: 604_800 });
  });
});

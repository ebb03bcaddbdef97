/**
 * `tsnode sweep` on a real replicating three-node ring (write_copies 2) while one node's
 * replication towards another is paused: refused with the lag named (exit 2, nothing sent); with
 * --allow-lag and the replication still paused at the end, the lagging node ends `late_data`
 * (exit 3) with a catch-up command that, run as printed once the lag is 0, ends `done` with the
 * old data gone on every owner (each read with the no-proxy header).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { NodeClient } from '../../src/client/node-client.js';
import { markLateData } from '../../src/client/sweep-lag.js';
import { runCli, startCli } from '../helpers/cli.js';
import { stopAllNodes } from '../helpers/nodes.js';
import { eventually, getJson, lagRing, putJson, startRing, type TestRing } from '../helpers/ring.js';

let ring: TestRing;
const dir = mkdtempSync(join(tmpdir(), 'tsnode-sweep-lag-'));
const journal = join(dir, 'sweeps.jsonl');
const NOW = Math.floor(Date.now() / 1000);
const T = NOW - (NOW % 60) - 7200;
// Over an hour ago: a --before under 1h needs --allow-short-age (sweep's short-age rule).
const BEFORE = String(NOW - 3900);

beforeAll(async () => {
  ring = await startRing(3, 2);
}, 60_000);
const dispatcher = new Agent();
afterAll(async () => {
  await stopAllNodes();
  await dispatcher.close();
  rmSync(dir, { recursive: true, force: true });
});

const urls = (): string => ring.nodes.map((n) => n.url).join(',');
const { seriesOwnedBy, held, pause } = lagRing(() => ring, T);

describe('sweep on a replicating ring', () => {
  it('refuses while data is in flight to a swept node; --allow-lag ends it late_data; the catch-up ends done', async () => {
    const [a, b] = [0, 1];
    const s = seriesOwnedBy(a, b);
    await pause(a, b, true);
    expect((await putJson(`${ring.nodes[a]!.url}/write/nnt`, [{ id: s.id, metric: s.metric, offset: T, count: 1, value: 5 }])).status).toBe(200);
    expect(await held(a, s)).toBe(true);
    expect(await held(b, s)).toBe(false);

    // 1. Refused: the lagging node named, with the peer that holds its data; nothing sent.
    const refused = await runCli(['sweep', '--nodes', urls(), '--before', BEFORE, '--yes', '--journal', journal]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`${ring.nodes[b]!.url}: replication is behind: `);
    expect(refused.stderr).toContain(`1 record pending at ${ring.nodes[a]!.url} (replication paused)`);
    expect(refused.stderr).toMatch(/refusing to sweep: nothing was sent/);
    expect(refused.stderr).toContain('--allow-lag');
    expect(await held(a, s)).toBe(true);

    // 2. --allow-lag: the sweep runs; the node data is still on its way to ends late_data, exit 3.
    const late = await runCli(['sweep', '--nodes', urls(), '--before', BEFORE, '--yes', '--allow-lag', '1h', '--journal', journal, '-o', 'json']);
    expect(late.code, late.stderr).toBe(3);
    const doc = JSON.parse(late.stdout) as { nodes: Array<{ node: string; state: string; reason: string }>; catch_up: { command: string; nodes: string[] } | null };
    const byNode = new Map(doc.nodes.map((n) => [n.node, n]));
    expect(byNode.get(ring.nodes[b]!.url)).toMatchObject({ state: 'late_data' });
    expect(byNode.get(ring.nodes[b]!.url)!.reason).toContain('a peer still held data for it when its sweep finished');
    expect(byNode.get(ring.nodes[a]!.url)).toMatchObject({ state: 'done' });
    expect(doc.catch_up!.nodes).toEqual([ring.nodes[b]!.url]);
    expect(doc.catch_up!.command).toContain('--yes');
    expect(late.stderr).toContain('late_data node(s)');
    expect(await held(a, s)).toBe(false);

    // 3. status --watch --until-caught-up waits while the lag lasts; replication resumes: the old record lands on b after its sweep.
    const watch = startCli(['status', '--nodes', urls(), '--watch', '200ms', '--until-caught-up']);
    await watch.waitForStderr(/waiting for replication: .*1 record pending at /);
    await pause(a, b, false);
    const watched = await watch.done;
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.stderr).toContain('replication: caught up');
    await eventually('b has the late record', () => held(b, s), 30_000);
    const status = (await getJson(`${ring.nodes[b]!.url}/sweep_delete`)).body as { nnt: Record<string, string> };
    expect(Number(status.nnt.last_late_records)).toBeGreaterThan(0);

    // 4. The printed catch-up, run as printed once the lag is 0: done, the old data gone on every owner.
    const args = doc
      .catch_up!.command.replace(/^tsnode /, '')
      .match(/'[^']*'|\S+/g)!
      .map((x) => x.replace(/^'|'$/g, ''));
    const caught = await runCli(args);
    expect(caught.code, caught.stderr).toBe(0);
    expect(caught.stdout).toMatch(/done/);
    expect(await held(a, s)).toBe(false);
    expect(await held(b, s)).toBe(false);
  }, 120_000);

  it('status --until-caught-up needs --watch (exit 2)', async () => {
    const r = await runCli(['status', '--nodes', urls(), '--until-caught-up']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--until-caught-up waits with --watch');
  });

  it("a node whose own status counts records below the cut-off that arrived after its sweep: late_data (the library's check, on real nodes)", async () => {
    const [a, b] = [2, 0];
    const s = seriesOwnedBy(a, b);
    const first = await runCli(['sweep', '--nodes', ring.nodes[b]!.url, '--allow-partial', '--before', BEFORE, '--yes', '--journal', journal, '-o', 'json']);
    expect(first.code, first.stderr).toBe(0);
    // An old record reaches b after its sweep (written at a, replayed to b): b's status counts it.
    expect((await putJson(`${ring.nodes[a]!.url}/write/nnt`, [{ id: s.id, metric: s.metric, offset: T, count: 1, value: 5 }])).status).toBe(200);
    await eventually('b has the record', () => held(b, s), 30_000);
    await eventually('the replay is delivered', async () =>
      ((await getJson(`${ring.nodes[a]!.url}/replication/json`)).body as { peers: Array<{ pending: number }> }).peers.every((p) => p.pending === 0),
    );
    const clients = ring.nodes.map((n) => new NodeClient(n.url, { dispatcher }));
    const { nodes, report } = await markLateData([{ node: ring.nodes[b]!.url, state: 'done', reason: 'the node reports the sweep completed' }], clients, ['nnt']);
    expect(report.checked).toBe(true);
    expect(nodes[0]).toMatchObject({ state: 'late_data', lateRecords: 1, lag: { lagSeconds: 0, pending: 0 } });
    expect(nodes[0]!.reason).toContain('1 record below the cut-off arrived after the sweep began');
  }, 60_000);

  it("a profile's allow_lag accepts the lag as --allow-lag does (the line says where it came from); --allow-lag on the line wins", async () => {
    const [a, b] = [1, 2];
    const s = seriesOwnedBy(a, b);
    const env = { HOME: dir, XDG_CONFIG_HOME: join(dir, 'config') };
    const set = await runCli(['profile', 'set', 'lagged', '--nodes', urls(), '--allow-lag', '1h'], { env });
    expect(set.code, set.stderr).toBe(0);
    const shown = await runCli(['profile', 'show', 'lagged', '-o', 'json'], { env });
    expect(JSON.parse(shown.stdout)).toMatchObject({ allow_lag: '1h' });
    await pause(a, b, true);
    try {
      expect((await putJson(`${ring.nodes[a]!.url}/write/nnt`, [{ id: s.id, metric: s.metric, offset: T, count: 1, value: 5 }])).status).toBe(200);
      // The flag wins over the profile: 1s is less than the lag once a second has passed.
      await eventually('the lag passes 1 s', async () => {
        const r = await runCli(['sweep', '--profile', 'lagged', '--before', BEFORE, '--yes', '--allow-lag', '1ms', '--journal', journal], { env });
        return r.code === 2 && r.stderr.includes(`${ring.nodes[b]!.url}: replication is behind: `);
      });
      const late = await runCli(['sweep', '--profile', 'lagged', '--before', BEFORE, '--yes', '--journal', journal, '-o', 'json'], { env });
      expect(late.code, late.stderr).toBe(3);
      expect(late.stderr).toMatch(/\(going ahead: allow_lag from profiles\.lagged\.allow_lag \(.*config\.yaml:\d+\) 1h\)/);
      const doc = JSON.parse(late.stdout) as { nodes: Array<{ node: string; state: string }> };
      expect(doc.nodes.find((n) => n.node === ring.nodes[b]!.url)).toMatchObject({ state: 'late_data' });
    } finally {
      await pause(a, b, false);
    }
    await eventually('b has the late record', () => held(b, s), 30_000);
  }, 60_000);
});

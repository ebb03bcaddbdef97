/**
 * `tsnode retention apply` on a real replicating three-node ring (write_copies 2) while one
 * node's replication towards another is paused: refused with the lag named (exit 2, nothing
 * sent); with --allow-lag and the replication still paused after the steps, the lagging node's
 * last step ends `late_data` (exit 3) with a catch-up that, run as printed once the lag is 0,
 * ends `done` with the old data gone on every owner (each read with the no-proxy header).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { stopAllNodes } from '../helpers/nodes.js';
import { eventually, lagRing, putJson, startRing, type TestRing } from '../helpers/ring.js';

let ring: TestRing;
const dir = mkdtempSync(join(tmpdir(), 'tsnode-retention-lag-'));
const journal = join(dir, 'sweeps.jsonl');
const env = { XDG_STATE_HOME: dir, HOME: dir };
const NOW = Math.floor(Date.now() / 1000);
/** Two hours ago: older than the rule's 1h. */
const T = NOW - (NOW % 60) - 7200;
const FAST = ['--poll-interval', '100ms', '--retries', '0'];

beforeAll(async () => {
  ring = await startRing(3, 2);
}, 60_000);
afterAll(async () => {
  await stopAllNodes();
  rmSync(dir, { recursive: true, force: true });
});

const urls = (): string => ring.nodes.map((n) => n.url).join(',');
const { seriesOwnedBy, held, pause } = lagRing(() => ring, T);

/** The printed command's arguments (shell-quoted words unquoted), without `tsnode`. */
const argsOf = (command: string): string[] =>
  command
    .replace(/^tsnode /, '')
    .match(/'[^']*'|\S+/g)!
    .map((x) => x.replace(/^'|'$/g, ''));

interface ApplyJson {
  exit_code: number;
  nodes: Array<{ node: string; finished: boolean; stopped_at: { state: string; reason: string } | null; lag_seconds: number | null; late_records: number | null }>;
  catch_up: { command: string; nodes: string[] } | null;
}

describe('retention apply on a replicating ring', () => {
  it('refuses while data is in flight to a node; --allow-lag ends it late_data; the catch-up ends done', async () => {
    const [a, b] = [0, 1];
    const s = seriesOwnedBy(a, b);
    await pause(a, b, true);
    expect((await putJson(`${ring.nodes[a]!.url}/write/nnt`, [{ id: s.id, metric: s.metric, offset: T, count: 1, value: 5 }])).status).toBe(200);
    expect(await held(a, s)).toBe(true);
    expect(await held(b, s)).toBe(false);
    const apply = ['retention', 'apply', '--rule', 'nnt:*=1h', '--nodes', urls(), '--yes', '--journal', journal, ...FAST];

    // 1. Refused: the lagging node named, with the peer that holds its data; nothing sent.
    const refused = await runCli(apply, { env });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`${ring.nodes[b]!.url}: replication is behind: `);
    expect(refused.stderr).toContain(`1 record pending at ${ring.nodes[a]!.url} (replication paused)`);
    expect(refused.stderr).toContain('nothing was sent');
    expect(refused.stderr).toContain('--allow-lag');
    expect(await held(a, s)).toBe(true);

    // The plan shows the lag apply would refuse (sends nothing).
    const plan = await runCli(['retention', 'plan', '--rule', 'nnt:*=1h', '--nodes', urls(), '-o', 'json'], { env });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stderr).toContain(`${ring.nodes[b]!.url}: replication `);
    expect(plan.stderr).toContain('retention apply refuses this without --allow-lag');
    const planned = new Map((JSON.parse(plan.stdout) as { nodes: Array<{ node: string; lag_seconds: number | null }> }).nodes.map((n) => [n.node, n.lag_seconds]));
    expect(planned.get(ring.nodes[b]!.url)).toBeGreaterThan(0);
    expect(planned.get(ring.nodes[a]!.url)).toBe(0);

    // 2. --allow-lag: the steps run; the node data is still on its way to ends late_data, exit 3.
    const late = await runCli([...apply, '--allow-lag', '1h', '-o', 'json'], { env });
    expect(late.code, late.stderr).toBe(3);
    expect(late.stderr).toContain(`${ring.nodes[b]!.url}: replication `);
    const doc = JSON.parse(late.stdout) as ApplyJson;
    expect(doc.exit_code).toBe(3);
    const byNode = new Map(doc.nodes.map((n) => [n.node, n]));
    expect(byNode.get(ring.nodes[b]!.url)).toMatchObject({ finished: false, stopped_at: { state: 'late_data' }, late_records: 0 });
    expect(byNode.get(ring.nodes[b]!.url)!.lag_seconds).toBeGreaterThan(0);
    expect(byNode.get(ring.nodes[b]!.url)!.stopped_at!.reason).toContain('a peer still held data for it when its sweep finished');
    expect(byNode.get(ring.nodes[a]!.url)).toMatchObject({ finished: true, stopped_at: null, lag_seconds: 0 });
    expect(doc.catch_up!.nodes).toEqual([ring.nodes[b]!.url]);
    expect(doc.catch_up!.command).toContain('--yes');
    expect(await held(a, s)).toBe(false);
    // The journal says why.
    const steps = readFileSync(journal, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; node?: string; state?: string; reason?: string });
    expect(steps.some((e) => e.kind === 'retention.step' && e.node === ring.nodes[b]!.url && e.state === 'late_data' && e.reason!.includes('a peer still held data'))).toBe(true);

    // 3. Replication resumes: the old record lands on b after its step; the lag drains.
    await pause(a, b, false);
    await eventually('b has the late record', () => held(b, s), 30_000);
    // Waited for as the docs say: status --watch --until-caught-up returns once every lag is 0.
    const watched = await runCli(['status', '--nodes', urls(), '--watch', '200ms', '--until-caught-up'], { env, timeoutMs: 60_000 });
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.stderr).toContain('replication: caught up');

    // 4. The printed catch-up, run as printed once the lag is 0: done, the old data gone on every owner.
    const caught = await runCli([...argsOf(doc.catch_up!.command), ...FAST], { env });
    expect(caught.code, caught.stderr).toBe(0);
    expect(await held(a, s)).toBe(false);
    expect(await held(b, s)).toBe(false);
  }, 120_000);

  it('a late_data node catches up on every step, not only its last (a record only an earlier step deletes is gone)', async () => {
    const [a, b] = [0, 1];
    const s = seriesOwnedBy(a, b);
    await pause(a, b, true);
    expect((await putJson(`${ring.nodes[a]!.url}/write/nnt`, [{ id: s.id, metric: s.metric, offset: T, count: 1, value: 5 }])).status).toBe(200);
    // Step 1 (newest cut-off) deletes numeric data older than 1 h: the record, 2 h old. Step 2 deletes
    // text older than 3 h: not the record. A catch-up of the last step alone would keep it.
    const apply = ['retention', 'apply', '--rule', 'nnt:*=1h', '--rule', 'text=3h', '--nodes', urls(), '--yes', '--journal', journal, '--allow-lag', '1h', ...FAST];
    const late = await runCli([...apply, '-o', 'json'], { env });
    expect(late.code, late.stderr).toBe(3);
    const doc = JSON.parse(late.stdout) as ApplyJson;
    expect(doc.catch_up!.nodes).toEqual([ring.nodes[b]!.url]);
    expect(await held(a, s)).toBe(false);

    await pause(a, b, false);
    await eventually('b has the late record', () => held(b, s), 30_000);
    const watched = await runCli(['status', '--nodes', urls(), '--watch', '200ms', '--until-caught-up'], { env, timeoutMs: 60_000 });
    expect(watched.code, watched.stderr).toBe(0);

    const caught = await runCli([...argsOf(doc.catch_up!.command), '-o', 'json', ...FAST], { env });
    expect(caught.code, caught.stderr).toBe(0);
    const after = JSON.parse(caught.stdout) as ApplyJson;
    expect(after.nodes.every((n) => n.finished)).toBe(true);
    expect(await held(b, s)).toBe(false);
    expect(await held(a, s)).toBe(false);
  }, 120_000);
});

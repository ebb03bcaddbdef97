/**
 * applyRetention against real reference nodes (in-process servers, each behind a recording proxy):
 * the run state is persisted with the step in flight before every DELETE, a failed persist sends
 * nothing, a step found still running on resume is watched rather than sent again, a step the
 * node's record shows completed is done without a DELETE, a busy node is refused at preflight,
 * and nodes proceed independently (a slow node does not hold the others back).
 */
import { Agent } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import { SweepRefusedError } from '../../src/client/sweep-preflight.js';
import type { NntRecord } from '../../src/protocol/index.js';
import {
  applyRetention,
  markOutcome,
  markSending,
  markStarted,
  newRun,
  parsePolicyFile,
  planRetention,
  resumeRun,
  type RetentionEvent,
  type RunState,
} from '../../src/retention/index.js';
import { startServer, type RunningNode } from '../../src/server/server.js';
import { startRecordingProxy, type RecordingProxy } from '../helpers/recording-proxy.js';

const agent = new Agent();
const client = (url: string): NodeClient => new NodeClient(url, { dispatcher: agent, retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0 } });
const DAY = 86_400;
const NOW = Date.now();
const uuid = (i: number): string => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const POLICY = parsePolicyFile('nnt:\n  60: 30d\n  "*": 1y\ntext: 90d\n', 'p.yaml');

let servers: RunningNode[] = [];
let proxies: RecordingProxy[] = [];

async function cluster(paces: number[], series = 5): Promise<{ urls: string[] }> {
  servers = await Promise.all(paces.map((sweepPaceMs) => startServer({ sweepPaceMs })));
  proxies = await Promise.all(servers.map((s) => startRecordingProxy(s.url)));
  const at = Math.floor((NOW / 1000 - 400 * DAY) / DAY) * DAY;
  for (const p of proxies) {
    const recs: NntRecord[] = Array.from({ length: series }, (_, i) => ({
      metric: 'cpu',
      id: uuid(i),
      offset: at,
      count: 1,
      value: 1,
      derivative: 0,
      counter: 0,
      stddev: 0,
      derivative_stddev: 0,
      counter_stddev: 0,
    }));
    await client(p.url).writeNnt(recs);
    await client(p.url).writeText(Array.from({ length: series }, (_, i) => ({ metric: 'v', id: uuid(i), offset: at, value: 'x' })));
  }
  return { urls: proxies.map((p) => p.url) };
}

const planFor = (urls: string[]) =>
  planRetention(
    POLICY,
    NOW,
    urls.map((node) => ({ node, nnt: [60, 300, 1800, 10800, 86400], histogram: [60, 300, 1800, 10800, 86400] })),
  );
const deletes = (p: RecordingProxy) => p.exchanges.filter((e) => e.method === 'DELETE');

afterEach(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
  proxies = [];
});
afterAll(() => agent.close());

describe('applyRetention', () => {
  it('persists the step as in flight before every DELETE, and every step of every node ends done', async () => {
    const { urls } = await cluster([0, 0]);
    const plan = planFor(urls);
    const seenAtPersist: string[] = [];
    const persisted: RunState[] = [];
    const result = await applyRetention(urls.map(client), plan, {
      runId: 'r-test-1',
      intervalMs: 50,
      persist: async (s) => {
        persisted.push(s);
        for (const [i, n] of s.nodes.entries()) {
          const flying = n.steps.filter((x) => x.state === 'in_flight');
          // At the moment a step is written in flight, its DELETE has not reached the node yet.
          for (const f of flying) seenAtPersist.push(`${i}:${f.step}:${deletes(proxies[i]!).length}`);
        }
      },
    });
    expect(result.outcome).toBe('complete');
    expect(result.state.nodes.map((n) => n.steps.map((s) => s.state))).toEqual([
      ['done', 'done', 'done'],
      ['done', 'done', 'done'],
    ]);
    // for node i, step k was persisted in flight while the node had seen k-1 DELETEs
    for (const i of [0, 1]) for (const k of [1, 2, 3]) expect(seenAtPersist).toContain(`${i}:${k}:${k - 1}`);
    for (const p of proxies) expect(deletes(p)).toHaveLength(3);
    expect(persisted.at(-1)!.nodes.every((n) => n.steps.every((s) => s.state === 'done'))).toBe(true);
  });

  it('a run state that cannot be saved before a DELETE sends nothing: the step is skipped', async () => {
    const { urls } = await cluster([0]);
    const events: RetentionEvent[] = [];
    const result = await applyRetention(urls.map(client), planFor(urls), {
      runId: 'r-test-2',
      persist: async (s) => {
        if (s.nodes.some((n) => n.steps.some((x) => x.state === 'in_flight'))) throw new Error('disk full');
      },
      onEvent: (e) => events.push(e),
    });
    expect(deletes(proxies[0]!)).toEqual([]);
    expect(result.outcome).toBe('failed');
    expect(result.state.nodes[0]!.steps[0]).toMatchObject({ state: 'skipped', reason: 'not sent: the run state could not be saved before the DELETE (disk full)' });
    expect(events.filter((e) => e.kind === 'step_end')).toHaveLength(1);
  });

  it('on resume, a step found still running is watched to its end, not sent again', async () => {
    const { urls } = await cluster([20], 40);
    const plan = planFor(urls);
    // An earlier attempt sent step 1 and died while it ran: reproduce that on the node and in the state.
    let s = newRun(plan, { runId: 'r-test-3', at: NOW });
    const sentAt = Date.now();
    s = markSending(s, urls[0]!, 1, sentAt);
    await client(urls[0]!).sweepDelete(plan.nodes[0]!.steps[0]!.request!);
    s = markStarted(s, urls[0]!, 1, sentAt + 5);
    proxies[0]!.exchanges.length = 0;
    const resumed = resumeRun(s);
    const result = await applyRetention(urls.map(client), resumed.plan, { state: resumed, intervalMs: 50 });
    expect(result.outcome).toBe('complete');
    const steps = result.state.nodes[0]!.steps;
    expect(steps[0]).toMatchObject({ state: 'done', attempt: 2, sentAt });
    expect(steps[0]!.reason).toMatch(/found still running on resume/);
    // only steps 2 and 3 were sent in this attempt
    expect(deletes(proxies[0]!).map((e) => e.headers['x-service-delete-time'])).toEqual([String(plan.steps[1]!.cutoff), String(plan.steps[2]!.cutoff)]);
  });

  it("on resume, a step the node's record shows completed after it was sent is done without a DELETE", async () => {
    const { urls } = await cluster([0]);
    const plan = planFor(urls);
    let s = newRun(plan, { runId: 'r-test-4', at: NOW });
    const sentAt = Date.now() - 1000;
    s = markSending(s, urls[0]!, 1, sentAt);
    await client(urls[0]!).sweepDelete(plan.nodes[0]!.steps[0]!.request!);
    // (the tsnode that sent it died before it saw the end; the node finished it)
    await expect.poll(async () => (await client(urls[0]!).sweepStatus()).nnt.running, { timeout: 10_000, interval: 20 }).toBe(false);
    s = markOutcome(s, urls[0]!, 1, 'interrupted', 'stopped watching', sentAt + 10);
    proxies[0]!.exchanges.length = 0;
    const resumed = resumeRun(s);
    const result = await applyRetention(urls.map(client), resumed.plan, { state: resumed, intervalMs: 50 });
    expect(result.state.nodes[0]!.steps[0]).toMatchObject({ state: 'done', sentAt });
    expect(result.state.nodes[0]!.steps[0]!.reason).toMatch(/^the node's record says this sweep completed after it was sent/);
    expect(deletes(proxies[0]!)).toHaveLength(2);
  });

  it('a busy node is refused at preflight: SweepRefusedError, nothing sent anywhere', async () => {
    const { urls } = await cluster([0, 30], 40);
    await client(urls[1]!).sweepDelete({ before: 1_000_000_000, types: ['nnt'] });
    proxies.forEach((p) => (p.exchanges.length = 0));
    await expect(applyRetention(urls.map(client), planFor(urls), { runId: 'r-test-5' })).rejects.toBeInstanceOf(SweepRefusedError);
    for (const p of proxies) expect(deletes(p)).toEqual([]);
    await client(urls[1]!).cancelSweep();
  });

  it('nodes are independent: a fast node finishes every step while a slow one is still at its first', async () => {
    const { urls } = await cluster([0, 30], 60);
    const ends: Array<{ node: string; step: number; at: number }> = [];
    const result = await applyRetention(urls.map(client), planFor(urls), {
      runId: 'r-test-6',
      intervalMs: 50,
      onEvent: (e) => {
        if (e.kind === 'step_end') ends.push({ node: e.node, step: e.step, at: e.finishedAt });
      },
    });
    expect(result.outcome).toBe('complete');
    const fastLast = ends.find((e) => e.node === urls[0] && e.step === 3)!;
    const slowFirst = ends.find((e) => e.node === urls[1] && e.step === 1)!;
    expect(fastLast.at).toBeLessThan(slowFirst.at);
  });
});

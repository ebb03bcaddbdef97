import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import type { Clock } from '../../src/client/clock.js';
import { SweepNotConfirmedError } from '../../src/client/sweep.js';
import { runClusterSweep } from '../../src/run/sweep.js';
import { pollUntilIdle } from '../../src/client/sweep-poll.js';
import { SweepRefusedError } from '../../src/client/sweep-preflight.js';
import type { SweepEvent } from '../../src/client/sweep-states.js';

/** A clock that only moves when the code under test sleeps: no wall-clock luck. */
function fakeClock(start = 1_700_000_000_000): Clock & { t: number } {
  const c = {
    t: start,
    now: () => c.t,
    sleep: async (ms: number) => {
      c.t += ms;
      await Promise.resolve();
    },
  };
  return c;
}

const idle = { nnt: { running: 'false' }, text: { running: 'false' }, histogram: { running: 'false' } };
const running = {
  nnt: { running: 'true', timestamp: '1690000000', current_uuid: '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', rollups: 'all' },
  text: { running: 'false' },
  histogram: { running: 'false' },
};

let agents: MockAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.map((a) => a.close()));
  agents = [];
});

function setup(nodes: string[]): { agent: MockAgent; clients: NodeClient[] } {
  const agent = new MockAgent();
  agent.disableNetConnect();
  agents.push(agent);
  const clients = nodes.map((n) => new NodeClient(n, { dispatcher: agent, retry: { retries: 2, baseDelayMs: 1, maxDelayMs: 1 } }));
  return { agent, clients };
}

function status(agent: MockAgent, node: string, body: unknown, times = 1): void {
  agent.get(node).intercept({ path: '/sweep_delete', method: 'GET' }).reply(200, JSON.stringify(body)).times(times);
}

describe('pollUntilIdle', () => {
  it('polls until every requested type is idle, reporting running once', async () => {
    const { agent, clients } = setup(['http://n1:8112']);
    status(agent, 'http://n1:8112', running, 2);
    status(agent, 'http://n1:8112', idle);
    const events: SweepEvent[] = [];
    const clock = fakeClock();
    const r = await pollUntilIdle(clients[0]!, { types: ['nnt'], intervalMs: 1000, clock, onEvent: (e) => events.push(e) });
    expect(r.state).toBe('idle');
    expect(r.polls).toBe(3);
    expect(clock.t - 1_700_000_000_000).toBe(2000);
    const states = events.filter((e) => e.kind === 'state').map((e) => (e.kind === 'state' ? e.state : ''));
    expect(states).toEqual(['running', 'idle']);
    expect(events.filter((e) => e.kind === 'status')).toHaveLength(3);
  });

  it('only waits for the requested types', async () => {
    const { agent, clients } = setup(['http://n1:8112']);
    status(agent, 'http://n1:8112', running);
    const r = await pollUntilIdle(clients[0]!, { types: ['text', 'histogram'], clock: fakeClock() });
    expect(r.state).toBe('idle');
  });

  it('tolerates a silence shorter than the grace period', async () => {
    const { agent, clients } = setup(['http://n1:8112']);
    const pool = agent.get('http://n1:8112');
    pool.intercept({ path: '/sweep_delete', method: 'GET' }).replyWithError(new Error('socket hang up')).times(2);
    status(agent, 'http://n1:8112', idle);
    const events: SweepEvent[] = [];
    const r = await pollUntilIdle(clients[0]!, { intervalMs: 1000, lostAfterMs: 5000, clock: fakeClock(), onEvent: (e) => events.push(e) });
    expect(r.state).toBe('idle');
    expect(r.polls).toBe(3);
    expect(events.filter((e) => e.kind === 'state' && e.state === 'no_answer')).toHaveLength(1);
  });

  it('declares a node lost after the grace period, with the last error', async () => {
    const { agent, clients } = setup(['http://n1:8112']);
    status(agent, 'http://n1:8112', running);
    agent.get('http://n1:8112').intercept({ path: '/sweep_delete', method: 'GET' }).replyWithError(new Error('boom')).persist();
    const r = await pollUntilIdle(clients[0]!, { intervalMs: 1000, lostAfterMs: 3000, clock: fakeClock() });
    expect(r.state).toBe('lost');
    expect(r.reason).toMatch(/no answer for 3s: .*boom/);
    expect(r.error).toMatch(/boom/);
    // 1 answer, then errors at +1s, +2s, +3s (lost)
    expect(r.polls).toBe(4);
    expect(r.status?.nnt.running).toBe(true);
  });

  it('stops at the deadline with timed_out', async () => {
    const { agent, clients } = setup(['http://n1:8112']);
    status(agent, 'http://n1:8112', running, 100);
    const clock = fakeClock();
    const r = await pollUntilIdle(clients[0]!, { intervalMs: 2000, deadline: clock.t + 5000, clock });
    expect(r.state).toBe('timed_out');
    expect(clock.t - 1_700_000_000_000).toBe(5000);
  });

  it('stops when the run is aborted, without another request', async () => {
    const { agent, clients } = setup(['http://n1:8112']);
    status(agent, 'http://n1:8112', running, 100);
    const ac = new AbortController();
    const clock = fakeClock();
    const r = await pollUntilIdle(clients[0]!, {
      clock,
      onEvent: (e) => {
        if (e.kind === 'status') ac.abort();
      },
      signal: ac.signal,
    });
    expect(r.state).toBe('interrupted');
    expect(r.polls).toBe(1);
  });
});

describe('runClusterSweep', () => {
  const req = { before: 1_690_000_000, types: ['nnt' as const] };

  it('refuses a node that is already sweeping, naming it and what it runs, and sends no DELETE', async () => {
    const { agent, clients } = setup(['http://a:1', 'http://b:1']);
    status(agent, 'http://a:1', idle);
    status(agent, 'http://b:1', running);
    agent.get('http://a:1').intercept({ path: '/sweep_delete', method: 'DELETE' }).reply(200, '[]');
    const err = await runClusterSweep(clients, req, { clock: fakeClock() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SweepRefusedError);
    expect((err as Error).message).toMatch(/http:\/\/b:1 \(nnt before 2023-07-22T04:26:40Z \(1690000000\) rollups all\)/);
    expect(agent.pendingInterceptors().some((i) => i.method === 'DELETE')).toBe(true);
  });

  it('with force replaces the running sweep and waits for it', async () => {
    const { agent, clients } = setup(['http://b:1']);
    status(agent, 'http://b:1', running);
    agent.get('http://b:1').intercept({ path: '/sweep_delete', method: 'DELETE' }).reply(200, '[]');
    status(agent, 'http://b:1', running);
    status(agent, 'http://b:1', idle);
    const r = await runClusterSweep(clients, req, { force: true, intervalMs: 10, clock: fakeClock() });
    expect(r.nodes.map((n) => n.state)).toEqual(['done']);
    expect(agent.pendingInterceptors()).toEqual([]);
  });

  it('refuses unreachable nodes unless skipUnreachable, then reports them as skipped', async () => {
    const { agent, clients } = setup(['http://a:1', 'http://dead:1']);
    agent.get('http://dead:1').intercept({ path: '/sweep_delete', method: 'GET' }).replyWithError(new Error('ECONNREFUSED')).persist();
    status(agent, 'http://a:1', idle, 3);
    await expect(runClusterSweep(clients, req, { clock: fakeClock() })).rejects.toThrow(/1 node\(s\) without a status: http:\/\/dead:1 \(unreachable: /);
    agent.get('http://a:1').intercept({ path: '/sweep_delete', method: 'DELETE' }).reply(200, '[]');
    const r = await runClusterSweep(clients, req, { skipUnreachable: true, clock: fakeClock() });
    expect(r.nodes.map((n) => [n.node, n.state])).toEqual([
      ['http://a:1', 'done'],
      ['http://dead:1', 'skipped'],
    ]);
    expect(r.summary).toMatchObject({ done: 1, skipped: 1, failed: 0 });
  });

  it('reports a node error answer as failed with the node message, and never retries a DELETE', async () => {
    const { agent, clients } = setup(['http://a:1', 'http://b:1']);
    status(agent, 'http://a:1', idle);
    status(agent, 'http://b:1', idle);
    agent
      .get('http://a:1')
      .intercept({ path: '/sweep_delete', method: 'DELETE' })
      .reply(400, JSON.stringify({ error: 'X-Service-NNT-Delete-Rollups: 61 is not a configured span (60, 300)', code: 'invalid_header' }));
    agent
      .get('http://b:1')
      .intercept({ path: '/sweep_delete', method: 'DELETE' })
      .reply(503, JSON.stringify({ error: 'busy', code: 'internal' }));
    agent.get('http://b:1').intercept({ path: '/sweep_delete', method: 'DELETE' }).reply(200, '[]');
    const r = await runClusterSweep(clients, { ...req, nntRollups: [61] }, { clock: fakeClock() });
    expect(r.nodes[0]).toMatchObject({ state: 'failed', error: expect.stringMatching(/61 is not a configured span/) });
    expect(r.nodes[1]).toMatchObject({ state: 'failed', error: expect.stringMatching(/HTTP 503/) });
    // the 200 DELETE for b is still waiting: the 503 was not retried
    expect(agent.pendingInterceptors().filter((i) => i.method === 'DELETE')).toHaveLength(1);
  });

  it('sends nothing when the confirmation is declined', async () => {
    const { agent, clients } = setup(['http://a:1']);
    status(agent, 'http://a:1', idle);
    agent.get('http://a:1').intercept({ path: '/sweep_delete', method: 'DELETE' }).reply(200, '[]');
    await expect(runClusterSweep(clients, req, { confirm: () => false, clock: fakeClock() })).rejects.toBeInstanceOf(SweepNotConfirmedError);
    expect(agent.pendingInterceptors().filter((i) => i.method === 'DELETE')).toHaveLength(1);
  });

  it('leaves nodes as started without wait, and sends the headers of the request', async () => {
    const { agent, clients } = setup(['http://a:1']);
    status(agent, 'http://a:1', idle);
    agent
      .get('http://a:1')
      .intercept({
        path: '/sweep_delete',
        method: 'DELETE',
        headers: { 'X-Service-Delete-Time': '1690000000', 'X-Service-Delete-Data-Types': 'nnt,histogram', 'X-Service-Histogram-Delete-Rollups': '60' },
      })
      .reply(200, '[]');
    const r = await runClusterSweep(clients, { before: 1_690_000_000, types: ['nnt', 'histogram'], histogramRollups: [60] }, { wait: false, clock: fakeClock() });
    expect(r.nodes[0]).toMatchObject({ state: 'started', seconds: 0 });
    expect(r.summary.started).toBe(1);
  });
});

describe('runClusterSweep decides from evidence (injected clock)', () => {
  const req = { before: 1_690_000_000, types: ['nnt' as const] };
  const del = (agent: MockAgent, node: string, status: number, body: string): void => {
    agent.get(node).intercept({ path: '/sweep_delete', method: 'DELETE' }).reply(status, body);
  };
  const refIdle = (instance: string, nnt: Record<string, string> = {}) => ({
    nnt: { running: 'false', instance, ...nnt },
    text: { running: 'false', instance },
    histogram: { running: 'false', instance },
  });

  it('a production node seen idle at the first poll, with no gap, is done and says why', async () => {
    const { agent, clients } = setup(['http://a:1']);
    status(agent, 'http://a:1', idle);
    del(agent, 'http://a:1', 200, '[]');
    status(agent, 'http://a:1', idle);
    const r = await runClusterSweep(clients, req, { clock: fakeClock() });
    expect(r.nodes[0]).toMatchObject({ state: 'done', reason: expect.stringMatching(/idle at the first poll/) });
  });

  it('a production node idle after an unanswered poll is unconfirmed, not done', async () => {
    const { agent, clients } = setup(['http://a:1']);
    status(agent, 'http://a:1', idle);
    del(agent, 'http://a:1', 200, '[]');
    status(agent, 'http://a:1', running);
    agent
      .get('http://a:1')
      .intercept({ path: '/sweep_delete', method: 'GET' })
      .replyWithError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    status(agent, 'http://a:1', idle);
    const events: SweepEvent[] = [];
    const r = await runClusterSweep(clients, req, { clock: fakeClock(), intervalMs: 1000, onEvent: (e) => events.push(e) });
    expect(r.nodes[0]).toMatchObject({ state: 'unconfirmed', reason: expect.stringMatching(/^idle after 1 poll\(s\) got no answer .*ECONNREFUSED.*may have restarted/) });
    expect(r.summary.unconfirmed).toBe(1);
    const last = events.filter((e) => e.kind === 'state').at(-1);
    expect(last).toMatchObject({ state: 'unconfirmed', error: expect.stringMatching(/may have restarted/) });
  });

  it('a poll showing another sweep ends the wait as replaced, naming the other sweep', async () => {
    const { agent, clients } = setup(['http://a:1']);
    status(agent, 'http://a:1', idle);
    del(agent, 'http://a:1', 200, '[]');
    status(agent, 'http://a:1', { ...running, nnt: { ...running.nnt, timestamp: '1690000000' } });
    status(agent, 'http://a:1', { ...running, nnt: { ...running.nnt, timestamp: '1700000000' } });
    const r = await runClusterSweep(clients, req, { clock: fakeClock(), intervalMs: 1000 });
    expect(r.nodes[0]).toMatchObject({ state: 'replaced', other: expect.stringMatching(/^nnt before 2023-11-14T22:13:20Z \(1700000000\), nnt spans all$/) });
    expect(agent.pendingInterceptors()).toEqual([]);
  });

  it('a reference node whose sweep ended before the first poll is done by its record; a restart is unconfirmed', async () => {
    const { agent, clients } = setup(['http://a:1', 'http://b:1']);
    status(agent, 'http://a:1', refIdle('i1'));
    status(agent, 'http://b:1', refIdle('j1'));
    del(agent, 'http://a:1', 200, '[]');
    del(agent, 'http://b:1', 200, '[]');
    status(agent, 'http://a:1', refIdle('i1', { last_timestamp: '1690000000', last_rollups: 'all', last_result: 'completed', last_finished: '1700000000.000' }));
    // b restarted between the DELETE and the first poll: a new instance, no record, and no gap seen
    status(agent, 'http://b:1', refIdle('j2'));
    const r = await runClusterSweep(clients, req, { clock: fakeClock() });
    // (this node records no request id, and reports no lag: the reason says what could not be checked)
    expect(r.nodes[0]).toMatchObject({
      node: 'http://a:1',
      state: 'done',
      reason: expect.stringMatching(
        /^the node's record says our sweep completed; the node records no request id, so whether it was ours or an identical sweep another client started could not be checked; replication could not be checked \(the nodes report no lag\)$/,
      ),
    });
    expect(r.nodes[1]).toMatchObject({ node: 'http://b:1', state: 'unconfirmed', reason: expect.stringMatching(/restarted \(instance j1 -> j2\)/) });
  });

  it('a DELETE answered 200 with an HTML page (or any body but []) is failed and never polled', async () => {
    const { agent, clients } = setup(['http://a:1', 'http://b:1']);
    status(agent, 'http://a:1', idle);
    status(agent, 'http://b:1', idle);
    del(agent, 'http://a:1', 200, '<html><body>Welcome to nginx</body></html>');
    del(agent, 'http://b:1', 200, '{"error":"maintenance"}');
    const r = await runClusterSweep(clients, req, { clock: fakeClock() });
    expect(r.nodes[0]).toMatchObject({
      state: 'failed',
      reason: expect.stringMatching(/answered with something other than \[\] .*not JSON.*nginx.*whether a sweep started is unknown/),
    });
    expect(r.nodes[1]).toMatchObject({ state: 'failed', reason: expect.stringMatching(/other than \[\] .*maintenance/) });
    expect(agent.pendingInterceptors()).toEqual([]);
  });

  it('a DELETE whose answer never came is unconfirmed (it may have started), one refused at connect is failed', async () => {
    const { agent, clients } = setup(['http://a:1', 'http://b:1']);
    status(agent, 'http://a:1', idle);
    status(agent, 'http://b:1', idle);
    agent
      .get('http://a:1')
      .intercept({ path: '/sweep_delete', method: 'DELETE' })
      .replyWithError(Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' }));
    agent
      .get('http://b:1')
      .intercept({ path: '/sweep_delete', method: 'DELETE' })
      .replyWithError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    const r = await runClusterSweep(clients, req, { clock: fakeClock() });
    expect(r.nodes[0]).toMatchObject({ state: 'unconfirmed', reason: expect.stringMatching(/no answer to the DELETE .*may have started/) });
    expect(r.nodes[1]).toMatchObject({ state: 'failed', reason: expect.stringMatching(/did not reach the node/) });
  });

  it('a preflight check that finds a problem refuses the sweep before anything is sent', async () => {
    const { agent, clients } = setup(['http://a:1']);
    status(agent, 'http://a:1', idle);
    del(agent, 'http://a:1', 200, '[]');
    const err = await runClusterSweep(clients, req, { clock: fakeClock(), checks: [() => [{ node: 'http://a:1', message: 'owns ring slots of a node not listed' }]] }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SweepRefusedError);
    expect((err as SweepRefusedError).problems).toEqual([{ node: 'http://a:1', message: 'owns ring slots of a node not listed' }]);
    expect(agent.pendingInterceptors().filter((i) => i.method === 'DELETE')).toHaveLength(1);
  });
});

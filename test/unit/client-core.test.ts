import { describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import { NodeClient } from '../../src/client/node-client.js';
import { fanOut } from '../../src/client/fan-out.js';
import { NodeHttpError, NodeRequestError } from '../../src/client/errors.js';
import { backoffDelay, withRetry } from '../../src/client/retry.js';

const policy = { retries: 3, baseDelayMs: 1, maxDelayMs: 4 };

describe('retry policy', () => {
  it('backs off exponentially within the cap, with jitter', () => {
    const p = { retries: 5, baseDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelay(p, 0, undefined, () => 0)).toBe(50);
    expect(backoffDelay(p, 0, undefined, () => 1)).toBe(100);
    expect(backoffDelay(p, 3, undefined, () => 1)).toBe(800);
    expect(backoffDelay(p, 9, undefined, () => 1)).toBe(1000);
  });

  it('honours a longer Retry-After', () => {
    const err = new NodeHttpError('http://n:1', 503, 'busy', { retryAfterMs: 2000 });
    expect(backoffDelay(policy, 0, err, () => 0)).toBe(2000);
  });

  it('retries retryable failures and gives up after the budget', async () => {
    let calls = 0;
    const flaky = new NodeRequestError('http://n:1', 'unreachable', 'refused', { retryable: true });
    await expect(
      withRetry(async () => {
        calls++;
        throw flaky;
      }, policy),
    ).rejects.toBe(flaky);
    expect(calls).toBe(4);
  });

  it('never retries a 4xx', async () => {
    let calls = 0;
    const bad = new NodeHttpError('http://n:1', 400, 'bad', {});
    await expect(
      withRetry(async () => {
        calls++;
        throw bad;
      }, policy),
    ).rejects.toBe(bad);
    expect(calls).toBe(1);
  });

  it('a probe (retryTimeouts false) asks a silent node once, and still retries a refused connection', async () => {
    const probe = { ...policy, retryTimeouts: false };
    let calls = 0;
    const silent = new NodeRequestError('http://n:1', 'timeout', 'no answer within 10s', { retryable: true });
    await expect(
      withRetry(async () => {
        calls++;
        throw silent;
      }, probe),
    ).rejects.toBe(silent);
    expect(calls).toBe(1);
    calls = 0;
    const refused = new NodeRequestError('http://n:1', 'unreachable', 'refused', { retryable: true });
    await expect(
      withRetry(async () => {
        calls++;
        throw refused;
      }, probe),
    ).rejects.toBe(refused);
    expect(calls).toBe(4);
  });
});

describe('fanOut', () => {
  it('keeps one outcome per node in order and bounds concurrency', async () => {
    const agent = new MockAgent();
    const clients = Array.from({ length: 10 }, (_, i) => new NodeClient(`http://n${i}:8112`, { dispatcher: agent }));
    let inFlight = 0;
    let peak = 0;
    const outcomes = await fanOut(
      clients,
      async (c, i) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setImmediate(r));
        inFlight--;
        if (i === 3) throw new NodeRequestError(c.url, 'unreachable', 'down', { retryable: true });
        return i;
      },
      { concurrency: 3 },
    );
    expect(peak).toBe(3);
    expect(outcomes.map((o) => o.node)).toEqual(clients.map((c) => c.url));
    expect(outcomes.filter((o) => !o.ok).map((o) => o.node)).toEqual(['http://n3:8112']);
    await agent.close();
  });
});

describe('NodeClient against a mocked node', () => {
  it('normalises string booleans and quotes the node error', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    const pool = agent.get('http://n:8112');
    pool
      .intercept({ path: '/sweep_delete', method: 'GET' })
      .reply(200, { nnt: { running: 'true', timestamp: '1700000000', rollups: 'all', current_uuid: 'x' }, text: { running: 'false' }, histogram: { running: 'false' } });
    pool.intercept({ path: '/sweep_delete', method: 'DELETE' }).reply(400, { error: 'X-Service-Delete-Time is in the future', code: 'invalid_header' });
    const client = new NodeClient('http://n:8112', { dispatcher: agent, retry: policy });
    const status = await client.sweepStatus();
    expect(status.nnt).toEqual({ running: true, timestamp: 1700000000, rollups: 'all', current_uuid: 'x' });
    expect(status.text.running).toBe(false);
    const err = await client.sweepDelete({ before: 1, types: ['nnt'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NodeHttpError);
    expect((err as NodeHttpError).status).toBe(400);
    expect((err as NodeHttpError).message).toContain('is in the future');
    await agent.close();
  });
});

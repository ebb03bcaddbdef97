import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/client/agent.js';
import { NodeHttpError, NodeRequestError } from '../../src/client/errors.js';
import { NodeClient, type NodeClientOptions } from '../../src/client/node-client.js';
import type { NntRecord } from '../../src/protocol/index.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { deadAddress } from '../helpers/nodes.js';
import { startStubNode, type StubNode } from '../helpers/stub-node.js';
import { testContext } from '../helpers/context.js';
import { openNetworkFromArgs } from '../helpers/network.js';

// Client-level faults: a node behind a fault-injecting TCP proxy. Every call must end within its
// timeouts with the right error code, and retry exactly when the policy says so.
const TIMEOUTS = { headersMs: 400, bodyMs: 400, totalMs: 900 };
const FAST_RETRY = { retries: 3, baseDelayMs: 5, maxDelayMs: 20 };
const UUID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const QUERY = { uuid: UUID, metric: 'cpu', startMs: 1_700_000_000_000, endMs: 1_700_012_000_000, spanMs: 60_000 };
const RECORDS: NntRecord[] = [
  { metric: 'cpu', id: UUID, offset: 1_700_000_040, count: 1, value: 1, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 },
];

let node: StubNode;
let proxy: FaultProxy;
const agents: Array<{ close(): Promise<void> }> = [];

function client(url: string, opts: Partial<NodeClientOptions> = {}): NodeClient {
  const dispatcher = createAgent({ connectTimeoutMs: 400 });
  agents.push(dispatcher);
  return new NodeClient(url, { dispatcher, timeouts: TIMEOUTS, retry: { ...FAST_RETRY, retries: 0 }, ...opts });
}

/** Runs `fn`, returns the error it threw and how long it took. */
async function failure(fn: () => Promise<unknown>): Promise<{ err: NodeRequestError; ms: number }> {
  const started = Date.now();
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(NodeRequestError);
    return { err: err as NodeRequestError, ms: Date.now() - started };
  }
  throw new Error('expected the call to fail');
}

beforeAll(async () => {
  node = await startStubNode({ rollupRows: 200 }); // ~4.4 KB body: long enough to trickle past the total timeout
  proxy = await startFaultProxy(node.url);
});
afterEach(async () => {
  proxy.setMode({ kind: 'pass' });
  await Promise.all(agents.splice(0).map((a) => a.close()));
});
afterAll(async () => {
  await proxy.close();
  await node.close();
});

describe('calls end within their timeouts with the right code', () => {
  it('a node that accepts and never answers: timeout, for status, read and write', async () => {
    proxy.setMode({ kind: 'half-open' });
    const c = client(proxy.url);
    for (const call of [() => c.sweepStatus(), () => c.readRollup(QUERY), () => c.writeNnt(RECORDS)]) {
      const { err, ms } = await failure(call);
      expect(err.code).toBe('timeout');
      expect(ms).toBeGreaterThanOrEqual(TIMEOUTS.headersMs - 50);
      expect(ms).toBeLessThan(TIMEOUTS.totalMs + 400);
    }
  });

  it('headers trickled one byte at a time are cut off by the headers timeout', async () => {
    proxy.setMode({ kind: 'trickle', intervalMs: 10 }); // ~130 header bytes: 1.3 s > 400 ms
    const { err, ms } = await failure(() => client(proxy.url).sweepStatus());
    expect(err.code).toBe('timeout');
    expect(err.message).toMatch(/no answer within 0.4s \(--headers-timeout\)|no complete answer/);
    expect(ms).toBeLessThan(TIMEOUTS.totalMs + 400);
  });

  it('a body trickled one byte at a time is cut off by the total timeout (the body timeout never fires)', async () => {
    proxy.setMode({ kind: 'trickle', intervalMs: 2 });
    const c = client(proxy.url, { timeouts: { ...TIMEOUTS, headersMs: 850 } });
    const { err, ms } = await failure(() => c.readRollup(QUERY));
    expect(err.code).toBe('timeout');
    expect(err.message).toMatch(/no complete answer within 0.9s/);
    expect(ms).toBeGreaterThanOrEqual(TIMEOUTS.totalMs - 50);
    expect(ms).toBeLessThan(TIMEOUTS.totalMs + 400);
  });

  it('a response that stops half way (blackhole) times out', async () => {
    proxy.setMode({ kind: 'blackhole', afterBytes: 60 });
    const c = client(proxy.url);
    for (const call of [() => c.sweepStatus(), () => c.readRollup(QUERY)]) {
      const { err, ms } = await failure(call);
      expect(err.code).toBe('timeout');
      expect(ms).toBeLessThan(TIMEOUTS.totalMs + 400);
    }
  });

  it('a reset on connect and nothing listening are "unreachable"', async () => {
    proxy.setMode({ kind: 'reset' });
    const c = client(proxy.url);
    const reset = await failure(() => c.sweepStatus());
    expect(reset.err.code).toBe('unreachable');
    expect(reset.err.retryable).toBe(true);
    const deadUrl = await deadAddress();
    const dead = await failure(() => client(deadUrl).writeNnt(RECORDS));
    expect(dead.err.code).toBe('unreachable');
    expect(dead.err.message).toMatch(/connection refused/);
    expect(dead.ms).toBeLessThan(1000);
  });

  it('a delay shorter than the timeouts is just slow', async () => {
    proxy.setMode({ kind: 'delay', ms: 50 });
    const status = await client(proxy.url).sweepStatus();
    expect(status.nnt.running).toBe(false);
  });

  it('an overall deadline on the client bounds retries too, and says it was the deadline', async () => {
    proxy.setMode({ kind: 'half-open' });
    const c = client(proxy.url, { retry: { ...FAST_RETRY, retries: 10 }, signal: AbortSignal.timeout(600) });
    const { err, ms } = await failure(() => c.sweepStatus());
    expect(err.code).toBe('timeout');
    expect(err.message).toMatch(/overall deadline/);
    expect(err.retryable).toBe(false);
    expect(ms).toBeLessThan(1200);
  });
});

describe('openNetwork wires the flags every command gets', () => {
  it('--deadline bounds a command whose retries would outlast it; --request-timeout bounds each attempt', async () => {
    proxy.setMode({ kind: 'half-open' });
    const t = testContext({ verbose: true });
    const net = openNetworkFromArgs(['--nodes', proxy.url, '--connect-timeout', '1s', '--request-timeout', '300ms', '--retries', '20', '--deadline', '900ms'], t.ctx, {
      retry: { baseDelayMs: 5, maxDelayMs: 20 },
    });
    try {
      const { err, ms } = await failure(() => net.client(proxy.url).sweepStatus());
      expect(err.code).toBe('timeout');
      expect(err.message).toMatch(/overall deadline/);
      expect(ms).toBeGreaterThanOrEqual(850);
      expect(ms).toBeLessThan(1600);
      expect(t.err()).toMatch(/debug: retry 1 after \d+ ms: .*no complete answer within 0.3s/);
      expect(net.signal.aborted).toBe(true);
    } finally {
      await net.close();
    }
  });
});

describe('retries', () => {
  it('resets (on connect and mid-response) are retried until the node answers', async () => {
    const retried: string[] = [];
    const c = client(proxy.url, { retry: FAST_RETRY, onRetry: (err) => retried.push(err.code) });
    const before = proxy.connections;
    proxy.queue({ kind: 'reset' }, { kind: 'reset', afterBytes: 40 });
    const status = await c.sweepStatus();
    expect(status.text.running).toBe(false);
    expect(retried).toEqual(['unreachable', 'unreachable']);
    expect(proxy.connections - before).toBe(3);
  });

  it('a write answered 503 is retried and succeeds; the node saw it twice', async () => {
    const c = client(proxy.url, { retry: FAST_RETRY });
    const before = node.requests.length;
    node.failNext(503);
    expect(await c.writeNnt(RECORDS)).toEqual({ records: 1 });
    expect(node.requests.length - before).toBe(2);
  });

  it('a 400 is not retried', async () => {
    const c = client(proxy.url, { retry: FAST_RETRY });
    const before = node.requests.length;
    node.failNext(400);
    const { err } = await failure(() => c.writeNnt(RECORDS));
    expect(err).toBeInstanceOf(NodeHttpError);
    expect((err as NodeHttpError).status).toBe(400);
    expect(err.code).toBe('http');
    expect(err.message).toMatch(/stub says 400/);
    expect(node.requests.length - before).toBe(1);
  });

  it('503s beyond the retry budget fail with the last answer', async () => {
    const c = client(proxy.url, { retry: { ...FAST_RETRY, retries: 2 } });
    const before = node.requests.length;
    node.failNext(503, 503, 503);
    const { err } = await failure(() => c.sweepStatus());
    expect((err as NodeHttpError).status).toBe(503);
    expect(node.requests.length - before).toBe(3);
  });

  it('sweepDelete is never retried, even on a reset', async () => {
    proxy.setMode({ kind: 'reset' });
    const before = proxy.connections;
    const c = client(proxy.url, { retry: FAST_RETRY });
    const { err } = await failure(() => c.sweepDelete({ before: 1_700_000_000, types: ['nnt'] }));
    expect(err.code).toBe('unreachable');
    expect(proxy.connections - before).toBe(1);
  });
});

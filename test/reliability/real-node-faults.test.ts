import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/client/agent.js';
import { NodeHttpError, NodeRequestError } from '../../src/client/errors.js';
import type { RequestLogEntry } from '../../src/client/http.js';
import { NodeClient, type NodeClientOptions } from '../../src/client/node-client.js';
import type { NntRecord } from '../../src/protocol/index.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';

// The real reference node (tsnode serve) behind the fault proxy.
const TIMEOUTS = { headersMs: 500, bodyMs: 500, totalMs: 1000 };
const RETRY = { retries: 3, baseDelayMs: 5, maxDelayMs: 20 };
const UUID = '0a1b2c3d-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const T0 = 1_700_000_040; // aligned to 60 s

function rec(i: number, value: number): NntRecord {
  return { metric: 'faults', id: UUID, offset: T0 + i * 60, count: 1, value, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 };
}

let node: TestNode;
let proxy: FaultProxy;
const agents: Array<{ close(): Promise<void> }> = [];

function client(opts: Partial<NodeClientOptions> = {}): { c: NodeClient; log: RequestLogEntry[] } {
  const dispatcher = createAgent({ connectTimeoutMs: 500 });
  agents.push(dispatcher);
  const log: RequestLogEntry[] = [];
  return { c: new NodeClient(proxy.url, { dispatcher, timeouts: TIMEOUTS, retry: RETRY, onRequest: (e) => log.push(e), ...opts }), log };
}

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
  node = await startNode({ memory: true });
  proxy = await startFaultProxy(node.url);
});
afterEach(async () => {
  proxy.setMode({ kind: 'pass' });
  await Promise.all(agents.splice(0).map((a) => a.close()));
});
afterAll(async () => {
  await proxy.close();
  await stopAllNodes();
});

describe('a real node behind faults', () => {
  it('writes survive resets (on connect and mid-answer) through retries, exactly once', async () => {
    const { c, log } = client();
    proxy.queue({ kind: 'reset' }, { kind: 'reset', afterBytes: 30 });
    const records = Array.from({ length: 50 }, (_, i) => rec(i, i * 1.5));
    expect(await c.writeNnt(records)).toEqual({ records: 50, updated: 50, misdirected: 0, errors: 0 });
    expect(log.filter((e) => e.error === 'unreachable')).toHaveLength(2);
    const read = await client().c.readRollup({ uuid: UUID, metric: 'faults', startMs: T0 * 1000, endMs: (T0 + 50 * 60) * 1000, spanMs: 60_000, type: 'count' });
    expect(read.points.map((p) => p.value)).toEqual(Array.from({ length: 50 }, () => 1)); // replaced, not doubled
  });

  it('half-open: status, read and write all end as timeouts within the total timeout', async () => {
    proxy.setMode({ kind: 'half-open' });
    const { c } = client({ retry: { ...RETRY, retries: 0 } });
    const q = { uuid: UUID, metric: 'faults', startMs: T0 * 1000, endMs: (T0 + 600) * 1000, spanMs: 60_000 };
    for (const call of [() => c.sweepStatus(), () => c.readRollup(q), () => c.writeNnt([rec(0, 1)])]) {
      const { err, ms } = await failure(call);
      expect(err.code).toBe('timeout');
      expect(ms).toBeLessThan(TIMEOUTS.totalMs + 500);
    }
  });

  it('a rollup answer trickled byte by byte is cut off by the total timeout', async () => {
    proxy.setMode({ kind: 'trickle', intervalMs: 2 });
    const { c } = client({ retry: { ...RETRY, retries: 0 }, timeouts: { ...TIMEOUTS, headersMs: 950 } });
    const q = { uuid: UUID, metric: 'faults', startMs: T0 * 1000, endMs: (T0 + 3000 * 60) * 1000, spanMs: 60_000 }; // 3000 buckets, ~60 KB
    const { err, ms } = await failure(() => c.readRollup(q));
    expect(err.code).toBe('timeout');
    expect(ms).toBeLessThan(TIMEOUTS.totalMs + 500);
  });

  it('a 400 from the node is not retried, and names the bad field', async () => {
    const { c, log } = client();
    const bad = { ...rec(0, 1), offset: T0 + 1 }; // not aligned to 60 s
    const { err } = await failure(() => c.writeNnt([bad]));
    expect(err).toBeInstanceOf(NodeHttpError);
    expect((err as NodeHttpError).status).toBe(400);
    expect(err.message).toMatch(/offset/);
    expect(log).toHaveLength(1);
  });

  it('a slow link (delay) is only slow', async () => {
    proxy.setMode({ kind: 'delay', ms: 30 });
    const { c } = client();
    expect((await c.sweepStatus()).nnt.running).toBe(false);
  });
});

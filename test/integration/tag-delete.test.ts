/** The delete's node steps (client/tag-delete.ts) against real reference nodes: dry run, batched loop, after-look. */
import { Agent } from 'undici';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import { NO_RETRY } from '../../src/client/retry.js';
import { deleteOnNode, deleteOnNodes, lookOnNodes, proveGone, type TagDeleteRequest } from '../../src/client/tag-delete.js';
import type { RunningNode } from '../../src/server/server.js';
import { SweepRefusedError } from '../../src/client/sweep-preflight.js';
import { SweepNotConfirmedError } from '../../src/client/sweep.js';
import { RECEIPT_ROWS_PER_LINE, runDelete, type DeleteConfirmation } from '../../src/run/delete.js';
import { startRecordingNode } from '../helpers/recording-node.js';
import { call, memoryNode, UUID, write } from './server-helpers.js';

const T0 = 1_700_000_040;
const agent = new Agent();
const running: RunningNode[] = [];
let nodes: RunningNode[];
let clients: NodeClient[];

const rec = (metric: string, offset = T0) => ({ metric, id: UUID, offset, count: 1, value: 1 });
const FULL: TagDeleteRequest = { query: 'and(host:web1)', account: 1, scope: { kind: 'full' } };

beforeEach(async () => {
  nodes = await Promise.all([memoryNode(), memoryNode(), memoryNode()]);
  running.push(...nodes);
  clients = nodes.map((n) => new NodeClient(n.url, { dispatcher: agent, retry: NO_RETRY }));
  // Five web1 metrics on the first two nodes, one web2 metric everywhere.
  const web1 = [1, 2, 3, 4, 5].map((i) => rec(`m${i}|ST[host:web1]`));
  await write(nodes[0]!.url, [...web1, rec('cpu|ST[host:web2]')]);
  await write(nodes[1]!.url, [...web1, rec('cpu|ST[host:web2]')]);
  await write(nodes[2]!.url, [rec('cpu|ST[host:web2]')]);
});
afterAll(async () => {
  await Promise.all(running.map((n) => n.close()));
  await agent.close();
});

const countOn = async (n: RunningNode, query: string): Promise<number> => (await call(n.url, 'GET', `/find/1/tags?query=${encodeURIComponent(query)}&count_only=1`)).json.count;

describe('tag delete node steps', () => {
  it('the dry run reports per node and deletes nothing', async () => {
    const looks = await lookOnNodes(clients, FULL, { limit: 100 });
    expect(looks.map((l) => l.metrics.length)).toEqual([5, 5, 0]);
    expect(looks[0]!.metrics[0]).toMatchObject({ uuid: UUID, metric: 'm1|ST[host:web1]', status: 'found' });
    expect(await countOn(nodes[0]!, 'and(host:web1)')).toBe(5);
  });

  it('loops in batches until the node says nothing remains; the after-look proves every metric gone', async () => {
    const progress: number[] = [];
    const done = await deleteOnNodes(clients, FULL, { batch: 2, maxRounds: 100, onProgress: (p) => p.node === nodes[0]!.url && progress.push(p.deleted) });
    expect(done.map((d) => [d.deleted.length, d.rounds, d.end])).toEqual([
      [5, 3, 'complete'],
      [5, 3, 'complete'],
      [0, 1, 'complete'],
    ]);
    expect(progress).toEqual([2, 4, 5]);
    const after = await lookOnNodes(clients, FULL, { limit: 100 });
    const proofs = done.map((d, i) => proveGone(d, after[i]!));
    expect(proofs.map((p) => [p.gone, p.reappeared.length, p.remaining.length, p.unconfirmed])).toEqual([
      [5, 0, 0, undefined],
      [5, 0, 0, undefined],
      [0, 0, 0, undefined],
    ]);
    for (const n of nodes) expect(await countOn(n, 'and(host:web2)')).toBe(1);
  });

  it('a metric written again after its delete (a late replay) is reported as reappeared', async () => {
    const [d] = await deleteOnNodes([clients[0]!], FULL, { batch: 10, maxRounds: 10 });
    await write(nodes[0]!.url, [rec('m3|ST[host:web1]', T0 - 60)]);
    const [after] = await lookOnNodes([clients[0]!], FULL, { limit: 100 });
    const proof = proveGone(d!, after!);
    expect(proof.reappeared).toEqual([{ uuid: UUID, metric: 'm3|ST[host:web1]' }]);
    expect(proof.gone).toBe(4);
  });

  it('a time-bounded delete leaves the metrics listed as no content, which proves them gone', async () => {
    await write(nodes[0]!.url, [rec('m1|ST[host:web1]', T0 + 600)]);
    const req: TagDeleteRequest = { ...FULL, scope: { kind: 'before', type: 'nnt', before: T0 + 60 } };
    const [d] = await deleteOnNodes([clients[0]!], req, { batch: 2, maxRounds: 10 });
    expect(d!.deleted.length).toBe(5);
    const [after] = await lookOnNodes([clients[0]!], req, { limit: 100 });
    expect(after!.metrics.every((m) => m.status === 'no content')).toBe(true);
    expect(proveGone(d!, after!)).toMatchObject({ gone: 5, reappeared: [], remaining: [] });
    expect(await countOn(nodes[0]!, 'and(host:web1)')).toBe(5);
  });

  it('stops at the round limit, and on a node that fails', async () => {
    const [d] = await deleteOnNodes([clients[0]!], FULL, { batch: 1, maxRounds: 2 });
    expect([d!.deleted.length, d!.end]).toEqual([2, 'round_limit']);
    const after = await lookOnNodes([clients[0]!], FULL, { limit: 100 });
    expect(proveGone(d!, after[0]!).remaining.length).toBe(3);
    await nodes[2]!.close();
    const [down] = await deleteOnNodes([clients[2]!], FULL, { batch: 1, maxRounds: 2 });
    expect(down!.end).toBe('failed');
    expect(down!.error).toBeDefined();
  });

  it('a node that keeps saying more remain without deleting anything new is stalled, not looped on', async () => {
    const stuck = await startRecordingNode({
      headers: { 'x-snowth-incomplete-results': 'true' },
      body: JSON.stringify([{ metric_name: 'x', delete_result: 'deleted', payload: UUID }]),
    });
    try {
      const d = await deleteOnNode(new NodeClient(stuck.url, { dispatcher: agent, retry: NO_RETRY }), FULL, { batch: 1, maxRounds: 50 });
      expect([d.rounds, d.end, d.deleted.length]).toEqual([2, 'stalled', 1]);
      expect(stuck.requests.length).toBe(2);
      expect(stuck.requests[0]!.headers['x-snowth-confirm-delete']).toBe('1');
      expect(stuck.requests[0]!.rawUrl).toBe(`/full/tags?query=${encodeURIComponent('and(host:web1)')}`);
    } finally {
      await stuck.close();
    }
  });
});

describe('runDelete: the library run a script gets (the same as tsnode delete)', () => {
  const spec = { requests: [FULL], metric: null, query: FULL.query, account: 1, batch: 2, maxRounds: 100, listLimit: 1000, concurrency: 8 };

  it('asks the confirm hook with the counts, looks again, journals start, rounds and end, and proves every metric gone', async () => {
    const journal: Array<{ kind: string; [k: string]: unknown }> = [];
    const stages: string[] = [];
    let asked: DeleteConfirmation | undefined;
    const run = await runDelete(clients, spec, {
      journal: { append: (e) => journal.push(e) > 0 },
      confirm: (c) => ((asked = c), true),
      onStage: (s) => stages.push(s.kind === 'looked' ? `looked${s.again ? ' again' : ''}` : s.kind),
    });
    expect(asked?.totals).toEqual({ metrics: 5, copies: 10, targets: 2, nodes: 3, skipped: 0, truncated: false });
    expect(stages).toEqual(['checked', 'looked', 'looked again', 'deleting', 'looking-after']);
    expect(run.exitCode).toBe(0);
    expect(run.outcomes.map((o) => [o.state, o.deleted, o.rounds])).toEqual([
      ['deleted', 5, 3],
      ['deleted', 5, 3],
      ['nothing', 0, 0],
    ]);
    // The receipt's rows go in their own lines (a node with nothing to delete has none); the end line keeps counts.
    expect(journal.map((e) => e.kind)).toEqual(['delete.start', ...Array<string>(6).fill('delete.round'), 'delete.receipt', 'delete.receipt', 'delete.end']);
    expect((journal.at(-1)!.nodes as Array<{ receipt: number }>).map((n) => n.receipt)).toEqual([5, 5, 0]);
    expect(journal.filter((e) => e.kind === 'delete.round').reduce((n, e) => n + (e.deleted as unknown[]).length, 0)).toBe(10);
    expect(await countOn(nodes[0]!, 'and(host:web1)')).toBe(0);
  });

  it('a no from the confirm hook deletes nothing and journals nothing', async () => {
    const journal: unknown[] = [];
    await expect(runDelete(clients, spec, { journal: { append: (e) => journal.push(e) > 0 }, confirm: () => false })).rejects.toBeInstanceOf(SweepNotConfirmedError);
    expect(journal).toEqual([]);
    expect(await countOn(nodes[0]!, 'and(host:web1)')).toBe(5);
  });

  it('an unreachable node refuses the run with a run.refused record, unless skipUnreachable', async () => {
    const dead = new NodeClient('http://127.0.0.1:1', { dispatcher: agent, retry: NO_RETRY });
    const journal: Array<{ kind: string; codes?: string[] }> = [];
    await expect(runDelete([...clients, dead], spec, { journal: { append: (e) => journal.push(e) > 0 } })).rejects.toBeInstanceOf(SweepRefusedError);
    expect(journal).toMatchObject([{ kind: 'run.refused', codes: ['unreachable'] }]);
    const run = await runDelete([...clients, dead], spec, { skipUnreachable: true });
    expect(run.exitCode).toBe(3);
    expect(run.outcomes.at(-1)).toMatchObject({ node: 'http://127.0.0.1:1', state: 'skipped' });
    expect(run.catchUp?.command).toBe("tsnode delete 'and(host:web1)' --full --batch 2 --nodes http://127.0.0.1:1");
  });

  it('a big receipt is journaled in lines of RECEIPT_ROWS_PER_LINE rows', async () => {
    const many = Array.from({ length: RECEIPT_ROWS_PER_LINE + 1 }, (_, i) => rec(`x${i}|ST[host:big1]`));
    await write(nodes[2]!.url, many);
    const journal: Array<{ kind: string; node?: string; metrics?: unknown[] }> = [];
    const run = await runDelete(
      [clients[2]!],
      { ...spec, requests: [{ ...FULL, query: 'and(host:big1)' }], query: 'and(host:big1)', batch: 5000, listLimit: 5000 },
      {
        journal: { append: (e) => journal.push(e) > 0 },
      },
    );
    expect(run.exitCode).toBe(0);
    expect(journal.filter((e) => e.kind === 'delete.receipt').map((e) => e.metrics!.length)).toEqual([RECEIPT_ROWS_PER_LINE, 1]);
  });
});

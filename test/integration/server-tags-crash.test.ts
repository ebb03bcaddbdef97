// A full delete of a metric whose writes are still only in the ingest log stays a delete after
// kill -9: the replay at the next start must not bring them back.
import { afterAll, expect, it } from 'vitest';
import { startNode, stopAllNodes } from '../helpers/nodes.js';
import { call, UUID, write } from './server-helpers.js';

afterAll(stopAllNodes);

it('a full delete survives kill -9 with the deleted writes still in the ingest log', async () => {
  // A flush only after 100,000 logged records: the writes below stay in the log.
  const node = await startNode({ args: ['--flush-records', '100000'] });
  const t0 = 1_700_000_040;
  const records = ['gone|ST[host:a]', 'kept|ST[host:b]'].flatMap((metric) => [0, 60].map((o) => ({ metric, id: UUID, offset: t0 + o, count: 1, value: 1 })));
  expect((await write(node.url, records)).status).toBe(200);
  const del = await call(node.url, 'DELETE', `/full/tags?query=${encodeURIComponent('and(host:a)')}`, { headers: { 'x-snowth-account-id': '1', 'x-snowth-confirm-delete': '1' } });
  expect(del.json).toEqual([{ metric_name: 'gone|ST[host:a]', delete_result: 'deleted', payload: UUID }]);
  await node.kill();
  const again = await node.restart();
  const find = await call(again.url, 'GET', `/find/1/tags?query=${encodeURIComponent('and(*:*)')}`);
  expect((find.json as Array<{ metric_name: string }>).map((m) => m.metric_name)).toEqual(['kept|ST[host:b]']);
  const p = new URLSearchParams({ start_ts: `${t0}.000`, end_ts: `${t0 + 120}.000`, rollup_span: '60s', get_engine: 'recalc', type: 'count' });
  // Reads see logged records waiting for a flush: poll until the replayed backlog is visible for the kept metric.
  await expect
    .poll(async () => (await call(again.url, 'GET', `/rollup/${UUID}/${encodeURIComponent('kept|ST[host:b]')}?${p.toString()}`)).json, { timeout: 10_000 })
    .toEqual([
      [t0, 1],
      [t0 + 60, 1],
    ]);
  expect((await call(again.url, 'GET', `/rollup/${UUID}/${encodeURIComponent('gone|ST[host:a]')}?${p.toString()}`)).json).toEqual([
    [t0, null],
    [t0 + 60, null],
  ]);
});

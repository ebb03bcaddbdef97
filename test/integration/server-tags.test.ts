import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningNode } from '../../src/server/server.js';
import { call, memoryNode, UUID, UUID2, write, type Reply } from './server-helpers.js';

const ACCOUNT = { 'x-snowth-account-id': '1' };
const CONFIRM = { ...ACCOUNT, 'x-snowth-confirm-delete': '1' };
const T0 = 1_700_000_040; // aligned to 60 s
const WEB1 = ['cpu|ST[env:prod,host:web1]', 'mem|ST[env:prod,host:web1]'];
const WEB2 = ['cpu|ST[env:prod,host:web2]'];

let node: RunningNode;
const nodes: RunningNode[] = [];

async function seed(n: RunningNode): Promise<void> {
  const metrics = [...WEB1, ...WEB2];
  const nnt = metrics.flatMap((metric) => [0, 60, 120].map((o) => ({ metric, id: UUID, offset: T0 + o, count: 1, value: 1 })));
  expect((await write(n.url, nnt)).status).toBe(200);
  expect(
    (
      await write(
        n.url,
        [
          { metric: WEB1[0], id: UUID, offset: T0, value: 'up' },
          { metric: 'plain', id: UUID2, offset: T0, value: 'x' },
        ],
        '/write/text',
      )
    ).status,
  ).toBe(200);
  expect((await write(n.url, [{ metric: WEB1[0], id: UUID, offset: T0, period: 60, histogram: 'AAEX/QAB' }], '/histogram/write')).status).toBe(200);
}

const q = (query: string): string => `query=${encodeURIComponent(query)}`;
const find = (query: string, headers: Record<string, string> = ACCOUNT, extra = ''): Promise<Reply> => call(node.url, 'GET', `/find/tags?${q(query)}${extra}`, { headers });
const names = (r: Reply): string[] => (r.json as Array<{ metric_name: string }>).map((m) => m.metric_name).sort();

async function rawPoints(metric: string): Promise<number> {
  const p = new URLSearchParams({ start_ts: `${T0}.000`, end_ts: `${T0 + 180}.000`, rollup_span: '60s', get_engine: 'recalc', type: 'count' });
  const r = await call(node.url, 'GET', `/rollup/${UUID}/${encodeURIComponent(metric)}?${p.toString()}`);
  return (r.json as Array<[number, number | null]>).filter(([, v]) => v !== null).length;
}

beforeEach(async () => {
  node = await memoryNode();
  nodes.push(node);
  await seed(node);
});
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.close()));
});

describe('GET /find/tags', () => {
  it('lists the matching metrics with the store fields', async () => {
    const r = await find('and(host:web1)');
    expect(r.status).toBe(200);
    expect(names(r)).toEqual([...WEB1].sort());
    const cpu = (r.json as any[]).find((m) => m.metric_name === WEB1[0]);
    expect(cpu).toEqual({ uuid: UUID, metric_name: WEB1[0], category: 'reconnoiter', type: 'numeric,text,histogram', account_id: 1 });
  });

  it('takes the account from the path, or the header under either prefix; another account matches nothing', async () => {
    expect(names(await call(node.url, 'GET', `/find/1/tags?${q('and(env:prod)')}`)).length).toBe(3);
    expect(names(await find('and(env:prod)', { 'X-Service-Account-Id': '1' })).length).toBe(3);
    expect((await call(node.url, 'GET', `/find/2/tags?${q('and(*:*)')}`)).json).toEqual([]);
    expect((await find('and(*:*)', { 'x-snowth-account-id': '7' })).json).toEqual([]);
  });

  it('count_only=1 answers {count, estimate}', async () => {
    expect((await find('or(host:web1,host:web2)', ACCOUNT, '&count_only=1')).json).toEqual({ count: 3, estimate: false });
    expect((await find('and(__check_uuid:' + UUID2 + ')', ACCOUNT, '&count_only=1')).json).toEqual({ count: 1, estimate: false });
  });

  it('caps the list at the advisory limit and says more remain', async () => {
    const r = await find('and(*:*)', { ...ACCOUNT, 'x-snowth-advisory-limit': '2' });
    expect((r.json as unknown[]).length).toBe(2);
    expect(r.headers['x-snowth-incomplete-results']).toBe('true');
    const all = await find('and(*:*)', { ...ACCOUNT, 'x-snowth-advisory-limit': 'none' });
    expect((all.json as unknown[]).length).toBe(4);
    expect(all.headers['x-snowth-incomplete-results']).toBeUndefined();
  });

  it('refuses a query that does not parse with 400, the error shape and the column', async () => {
    const r = await find('and(host:web1');
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ code: 'invalid_query', field: 'query', column: 14 });
    expect(r.json.error).toMatch(/column 14/);
  });

  it('requires the account', async () => {
    const r = await find('and(host:web1)', {});
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ code: 'invalid_header', field: 'X-Snowth-Account-Id' });
  });
});

describe('DELETE /full/tags', () => {
  it('without confirmation only reports, and deletes nothing', async () => {
    const r = await call(node.url, 'DELETE', `/full/tags?${q('and(host:web1)')}`, { headers: ACCOUNT });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(WEB1.map((metric_name) => ({ metric_name, delete_result: 'found - resubmit with confirmation to attempt delete', payload: UUID })));
    expect(await rawPoints(WEB1[0]!)).toBe(3);
  });

  it('with confirmation removes every type of data and the index entry of exactly the matches', async () => {
    const r = await call(node.url, 'DELETE', `/full/tags?${q('and(host:web1)')}`, { headers: CONFIRM });
    expect(r.json).toEqual(WEB1.map((metric_name) => ({ metric_name, delete_result: 'deleted', payload: UUID })));
    for (const m of WEB1) expect(await rawPoints(m)).toBe(0);
    expect(await rawPoints(WEB2[0]!)).toBe(3);
    const text = await call(node.url, 'GET', `/read/${T0}/${T0 + 60}/${UUID}/${encodeURIComponent(WEB1[0]!)}`);
    expect(text.json).toEqual([]);
    const hist = await call(node.url, 'GET', `/histogram/${T0}/${T0 + 60}/60/${UUID}/${encodeURIComponent(WEB1[0]!)}`);
    expect(hist.json).toEqual([]);
    expect(names(await find('and(env:prod)'))).toEqual(WEB2);
    // Gone from the index: the same query now matches nothing.
    expect((await call(node.url, 'DELETE', `/full/tags?${q('and(host:web1)')}`, { headers: ACCOUNT })).json).toEqual([]);
  });

  it('a metric written again after a full delete is indexed again, with only the new data', async () => {
    await call(node.url, 'DELETE', `/full/tags?${q('and(host:web1)')}`, { headers: CONFIRM });
    expect((await write(node.url, [{ metric: WEB1[0], id: UUID, offset: T0 + 120, count: 1, value: 5 }])).status).toBe(200);
    expect(names(await find('and(host:web1)'))).toEqual([WEB1[0]]);
    expect(await rawPoints(WEB1[0]!)).toBe(1);
  });

  it('loops in batches of the advisory limit, each call going on where the last stopped', async () => {
    const headers = { ...CONFIRM, 'x-snowth-advisory-limit': '2' };
    const first = await call(node.url, 'DELETE', `/full/tags?${q('and(*:*)')}`, { headers });
    expect((first.json as unknown[]).length).toBe(2);
    expect(first.headers['x-snowth-incomplete-results']).toBe('true');
    const second = await call(node.url, 'DELETE', `/full/tags?${q('and(*:*)')}`, { headers });
    expect((second.json as unknown[]).length).toBe(2);
    expect(second.headers['x-snowth-incomplete-results']).toBeUndefined();
    expect(new Set([...names(first), ...names(second)]).size).toBe(4);
  });

  it('another account deletes nothing; a bad query is a 400', async () => {
    expect((await call(node.url, 'DELETE', `/full/tags?${q('and(*:*)')}`, { headers: { ...CONFIRM, 'x-snowth-account-id': '9' } })).json).toEqual([]);
    expect(await rawPoints(WEB1[0]!)).toBe(3);
    const bad = await call(node.url, 'DELETE', `/full/tags?${q('or(host:/(/)')}`, { headers: CONFIRM });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: 'invalid_query', column: 9 });
  });
});

describe('time-bounded deletes', () => {
  it('/nnt/tags keeps the data at and after the delete time', async () => {
    const headers = { ...CONFIRM, 'x-snowth-delete-time': String(T0 + 120) };
    const r = await call(node.url, 'DELETE', `/nnt/tags?${q('and(host:web1)')}`, { headers });
    expect(r.json).toEqual(WEB1.map((metric_name) => ({ metric_name, delete_result: 'deleted', payload: UUID })));
    for (const m of WEB1) expect(await rawPoints(m)).toBe(1);
    expect(await rawPoints(WEB2[0]!)).toBe(3);
    // Nothing left before the time: the dry run says so, a confirmed call lists nothing.
    expect((await call(node.url, 'DELETE', `/nnt/tags?${q('and(host:web1)')}`, { headers: { ...ACCOUNT, 'x-snowth-delete-time': String(T0 + 120) } })).json).toEqual(
      WEB1.map((metric_name) => ({ metric_name, delete_result: 'no content', payload: UUID })),
    );
    expect((await call(node.url, 'DELETE', `/nnt/tags?${q('and(host:web1)')}`, { headers })).json).toEqual([]);
    // Still indexed: only data went.
    expect(names(await find('and(host:web1)'))).toEqual([...WEB1].sort());
  });

  it('/text/tags and /histogram/tags delete only their type', async () => {
    const headers = { ...CONFIRM, 'x-snowth-delete-time': String(T0 + 60) };
    expect((await call(node.url, 'DELETE', `/text/tags?${q('and(host:web1)')}`, { headers })).json).toEqual([{ metric_name: WEB1[0], delete_result: 'deleted', payload: UUID }]);
    expect((await call(node.url, 'DELETE', `/histogram/tags?${q('and(host:web1)')}`, { headers })).json).toEqual([
      { metric_name: WEB1[0], delete_result: 'deleted', payload: UUID },
    ]);
    expect((await call(node.url, 'GET', `/read/${T0}/${T0 + 60}/${UUID}/${encodeURIComponent(WEB1[0]!)}`)).json).toEqual([]);
    expect(await rawPoints(WEB1[0]!)).toBe(3);
  });

  it('requires the delete time', async () => {
    const r = await call(node.url, 'DELETE', `/nnt/tags?${q('and(host:web1)')}`, { headers: CONFIRM });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ code: 'invalid_header', field: 'X-Snowth-Delete-Time' });
  });
});

describe('DELETE /full/canonical/<uuid>/<metric>', () => {
  it('deletes one exact metric, then 404s', async () => {
    const path = `/full/canonical/${UUID}/${encodeURIComponent(WEB1[0]!)}`;
    const r = await call(node.url, 'DELETE', path, { headers: ACCOUNT });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 'succeeded' });
    expect(names(await find('and(host:web1)'))).toEqual([WEB1[1]]);
    expect(await rawPoints(WEB1[0]!)).toBe(0);
    const again = await call(node.url, 'DELETE', path, { headers: ACCOUNT });
    expect(again.status).toBe(404);
    expect(again.json.code).toBe('not_found');
  });
});

/**
 * The production Go client's way with a ring (gosnowth `nnt.go`, `client.go`): it writes each
 * record once, to the metric's primary owner, and relies on the ring to replicate; a later read may
 * go to any node. Replayed here with gosnowth's request shapes against a real replicating ring of
 * three nodes (write_copies 2): the record is read back from its second owner and from a non-owner.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAllNodes } from '../helpers/nodes.js';
import { eventually, startRing, type TestRing } from '../helpers/ring.js';
import { GOSNOWTH_HEADERS, nntBody, rollupPath, textBody } from './fixtures/gosnowth.js';
import { rawRequest } from './http.js';

const ID = 'fc85e0ab-f568-45e6-86ee-d7443be8277d';
const T = 1529509020; // a multiple of 60

let ring: TestRing;
beforeAll(async () => {
  ring = await startRing(3, 2, { memory: true, args: ['--lenient-timestamps'] });
}, 60_000);
afterAll(() => stopAllNodes());

/** A metric of ID, its primary and second owner, and the node that does not own it (two copies on three nodes). */
function placed(metric: string): { metric: string; primary: number; second: number; other: number } {
  const owners = ring.ring.ownersOf(ID, metric).map((n) => ring.indexOf(n.id));
  return { metric, primary: owners[0]!, second: owners[1]!, other: [0, 1, 2].find((i) => !owners.includes(i))! };
}

const send = (node: number, method: string, target: string, body?: string, headers: Record<string, string> = {}) =>
  rawRequest(ring.nodes[node]!.url, method, target, { headers: { ...GOSNOWTH_HEADERS, ...headers }, ...(body === undefined ? {} : { body }) });

describe('gosnowth on a replicating ring', () => {
  it('WriteNNT once to the primary; FetchNNTValues from the second owner and from a non-owner', async () => {
    const p = placed('gs.online');
    const records = [0, 1, 2].map((i) => ({ metric: p.metric, id: ID, offset: T + i * 60, count: 1, value: 10 + i }));
    const w = await send(p.primary, 'POST', '/write/nnt', nntBody(records));
    expect(w.status, w.text).toBe(200);
    expect(w.json).toEqual({ records: 3, updated: 3, misdirected: 0, errors: 0 });
    const path = rollupPath(ID, p.metric, 60, T, T + 120, 'average');
    const expected = [
      [T, 10],
      [T + 60, 11],
      [T + 120, 12],
    ];
    // The second owner's own copy (the store's do-not-proxy header: no forwarding).
    await eventually(
      'the second owner has its copy',
      async () => JSON.stringify((await send(p.second, 'GET', path, undefined, { 'X-Snowth-Proxied': '1' })).json) === JSON.stringify(expected),
    );
    const fromOther = await send(p.other, 'GET', path);
    expect(fromOther.status).toBe(200);
    expect(fromOther.json).toEqual(expected);
    expect([ring.ids[p.primary], ring.ids[p.second]]).toContain(fromOther.headers['x-service-answered-by']);
    // The non-owner keeps no copy of its own.
    const own = (await send(p.other, 'GET', path, undefined, { 'X-Snowth-Proxied': '1' })).json as Array<[number, number | null]>;
    expect(own.map((r) => r[1])).toEqual([null, null, null]);
  });

  it('WriteText once to the primary (string offsets); ReadText from the second owner and a non-owner', async () => {
    const p = placed('gs.log');
    const w = await send(p.primary, 'POST', '/write/text', textBody([{ metric: p.metric, id: ID, offset: T, value: 'hello' }]));
    expect(w.status, w.text).toBe(200);
    const path = `/read/${T}/${T + 60}/${ID}/${p.metric}`;
    await eventually('the second owner has the text', async () =>
      JSON.stringify((await send(p.second, 'GET', path, undefined, { 'X-Snowth-Proxied': '1' })).json).includes('hello'),
    );
    const fromOther = await send(p.other, 'GET', path);
    expect(fromOther.status).toBe(200);
    expect(JSON.stringify(fromOther.json)).toContain('hello');
  });
});

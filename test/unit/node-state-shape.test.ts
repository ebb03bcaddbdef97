/**
 * The hand check of `GET /state` (isWireNodeState: every command that finds its nodes asks each
 * for /state, and must not load zod for it) accepts exactly what nodeStateSchema accepts, and a
 * refused answer still gets the schema's words.
 */
import { describe, expect, it } from 'vitest';
import { parseAnswer } from '../../src/client/answers.js';
import { isWireNodeState } from '../../src/protocol/cluster.js';
import { nodeStateSchema } from '../../src/protocol/schemas.js';

const good = {
  identity: '2f3c8c6e-1111-4c55-9a0e-1d2b3c4d5e6f',
  current: 'abc',
  next: '-',
  base_rollup: 60,
  rollups: [60, 300],
  nnt: { rollups: [60, 300], extra: true },
  histogram: { rollups: [60] },
  features: { 'text:store': '1' },
  version: '1.2.3',
  application: 'tsnode',
  max_peer_lag: 0,
};

const variants: Array<[string, unknown]> = [
  ['valid', good],
  ['identity only', { identity: 'n1' }],
  ['identity empty', { ...good, identity: '' }],
  ['identity missing', { current: 'abc' }],
  ['identity a number', { ...good, identity: 7 }],
  ['current null', { ...good, current: null }],
  ['next a number', { ...good, next: 1 }],
  ['version a number', { ...good, version: 1 }],
  ['application null', { ...good, application: null }],
  ['base_rollup zero', { ...good, base_rollup: 0 }],
  ['base_rollup a fraction', { ...good, base_rollup: 1.5 }],
  ['base_rollup a string', { ...good, base_rollup: '60' }],
  ['rollups with a negative', { ...good, rollups: [60, -300] }],
  ['rollups with a fraction', { ...good, rollups: [60.5] }],
  ['rollups not a list', { ...good, rollups: '60,300' }],
  ['rollups empty', { ...good, rollups: [] }],
  ['nnt an array', { ...good, nnt: [60] }],
  ['nnt null', { ...good, nnt: null }],
  ['nnt rollups bad', { ...good, nnt: { rollups: ['60'] } }],
  ['histogram without rollups', { ...good, histogram: {} }],
  ['histogram rollups zero', { ...good, histogram: { rollups: [0] } }],
  ['features an array', { ...good, features: [] }],
  ['features null', { ...good, features: null }],
  ['an array', [good]],
  ['null', null],
  ['a string', 'ok'],
];

describe('isWireNodeState', () => {
  it.each(variants)('agrees with the schema: %s', (_what, json) => {
    expect(isWireNodeState(json)).toBe(nodeStateSchema.safeParse(json).success);
  });

  it('agrees on a huge span (JSON reads 1e400 as Infinity)', () => {
    const json = JSON.parse('{"identity":"n","base_rollup":1e400}') as unknown;
    expect(isWireNodeState(json)).toBe(nodeStateSchema.safeParse(json).success);
  });

  it('the fast path gives what the schema gives; a refused answer still names the field', async () => {
    const fast = await parseAnswer('http://n', JSON.stringify(good), (s) => s.nodeStateSchema, 'node state', 'x', { matches: isWireNodeState });
    expect(fast).toEqual(nodeStateSchema.parse(good));
    const bad = JSON.stringify({ ...good, nnt: { rollups: [60, 'x'] } });
    await expect(parseAnswer('http://n', bad, (s) => s.nodeStateSchema, 'node state', 'x', { matches: isWireNodeState })).rejects.toThrow(/nnt\.rollups/);
  });
});

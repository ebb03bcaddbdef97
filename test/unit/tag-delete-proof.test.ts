import { describe, expect, it } from 'vitest';
import { proveGone, type NodeLook } from '../../src/client/tag-delete.js';

const U = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const look = (metrics: Array<[string, 'found' | 'no content']>, extra: Partial<NodeLook> = {}): NodeLook => ({
  node: 'http://n1',
  metrics: metrics.map(([metric, status]) => ({ uuid: U, metric, status, result: status })),
  incomplete: false,
  ...extra,
});

describe('proveGone', () => {
  it('counts what the dry run found and the after-look no longer shows, even when the answer that deleted it was lost', () => {
    const before = look([
      ['a', 'found'],
      ['b', 'found'],
    ]);
    // The node said it deleted only a; b's answer was lost; the after-look shows neither.
    expect(proveGone({ node: 'http://n1', deleted: [{ uuid: U, metric: 'a' }] }, look([]), before)).toEqual({ node: 'http://n1', gone: 2, reappeared: [], remaining: [] });
  });

  it('a deleted metric listed again with data reappeared; one never deleted remains', () => {
    const p = proveGone(
      { node: 'http://n1', deleted: [{ uuid: U, metric: 'a' }] },
      look([
        ['a', 'found'],
        ['c', 'found'],
        ['d', 'no content'],
      ]),
      look([
        ['a', 'found'],
        ['c', 'found'],
      ]),
    );
    expect(p.reappeared).toEqual([{ uuid: U, metric: 'a' }]);
    expect(p.remaining).toEqual([{ uuid: U, metric: 'c' }]);
    expect(p.gone).toBe(0);
  });

  it('proves nothing when the after-look failed or was cut short', () => {
    expect(proveGone({ node: 'http://n1', deleted: [] }, look([], { error: 'timeout' })).unconfirmed).toMatch(/failed: timeout/);
    expect(proveGone({ node: 'http://n1', deleted: [] }, look([], { incomplete: true })).unconfirmed).toMatch(/only part/);
  });
});

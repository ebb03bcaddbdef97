/**
 * rollupFsOf reads `/state` `nntbs.rollup_<period>.fs` by hand (protocol/shards.ts no longer loads
 * zod): it keeps exactly the entries the former schema `{id?: string, totalMB >= 0, freeMB >= 0}` kept.
 */
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { rollupFsOf } from '../../src/protocol/shards.js';

const schema = z.looseObject({ id: z.string().optional(), totalMB: z.number().nonnegative(), freeMB: z.number().nonnegative() });

const variants: Array<[string, unknown]> = [
  ['plain', { id: 'disk0', totalMB: 100, freeMB: 40.5 }],
  ['no id', { totalMB: 100, freeMB: 0 }],
  ['extra members', { totalMB: 1, freeMB: 1, mount: '/data' }],
  ['negative zero', { totalMB: -0, freeMB: 0 }],
  ['id null', { id: null, totalMB: 1, freeMB: 1 }],
  ['id a number', { id: 7, totalMB: 1, freeMB: 1 }],
  ['negative free', { totalMB: 1, freeMB: -1 }],
  ['infinite total', { totalMB: Infinity, freeMB: 1 }],
  ['NaN free', { totalMB: 1, freeMB: NaN }],
  ['total a string', { totalMB: '1', freeMB: 1 }],
  ['free missing', { totalMB: 1 }],
  ['an array', [1, 2]],
  ['null', null],
  ['missing', undefined],
];

describe('rollupFsOf', () => {
  it.each(variants)('keeps what the schema kept: %s', (_what, fs) => {
    const got = rollupFsOf({ rollup_60: { fs }, other: { fs } });
    const parsed = schema.safeParse(fs);
    expect(got).toEqual(parsed.success ? new Map([[60, { id: parsed.data.id ?? null, totalMB: parsed.data.totalMB, freeMB: parsed.data.freeMB }]]) : new Map());
  });
});

/**
 * The hand check of `GET /sweep_delete` (isWireSweepStatus: `read` asks for the status beside every
 * rollup and must not load zod for it) accepts exactly what wireSweepStatusSchema accepts, and a
 * refused answer still gets the schema's words.
 */
import { describe, expect, it } from 'vitest';
import { parseAnswer } from '../../src/client/answers.js';
import { isWireSweepStatus } from '../../src/protocol/status.js';
import { wireSweepStatusSchema } from '../../src/protocol/schemas.js';

const idle = { running: 'false', instance: 'n1' };
const good = { nnt: { ...idle, swept_before: '60:1795067853' }, text: idle, histogram: { running: 'true', timestamp: '1700000000' }, extra: 1 };

const variants: Array<[string, unknown]> = [
  ['valid', good],
  ['only running', { nnt: { running: 'true' }, text: { running: 'false' }, histogram: { running: 'false' } }],
  ['running a boolean', { ...good, nnt: { running: false } }],
  ['running another word', { ...good, text: { running: 'yes' } }],
  ['running missing', { ...good, histogram: {} }],
  ['an attribute a number', { ...good, nnt: { running: 'false', timestamp: 1700000000 } }],
  ['an attribute null', { ...good, nnt: { running: 'false', current_uuid: null } }],
  ['a type missing', { nnt: idle, text: idle }],
  ['a type an array', { ...good, text: ['running'] }],
  ['a type null', { ...good, histogram: null }],
  ['an array', [good]],
  ['null', null],
  ['a string', 'idle'],
];

describe('isWireSweepStatus', () => {
  it.each(variants)('agrees with the schema: %s', (_what, json) => {
    expect(isWireSweepStatus(json)).toBe(wireSweepStatusSchema.safeParse(json).success);
  });

  it('the fast path gives what the schema gives; a refused answer still names the field', async () => {
    const fast = await parseAnswer('http://n', JSON.stringify(good), (s) => s.wireSweepStatusSchema, 'sweep status', 'x', { matches: isWireSweepStatus });
    expect(fast).toEqual(wireSweepStatusSchema.parse(good));
    const bad = JSON.stringify({ ...good, text: { running: 'false', timestamp: 5 } });
    await expect(parseAnswer('http://n', bad, (s) => s.wireSweepStatusSchema, 'sweep status', 'x', { matches: isWireSweepStatus })).rejects.toThrow(/text\.timestamp/);
  });
});

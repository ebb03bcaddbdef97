/**
 * The hand check of `/replication/json` (isReplicationStatus, read from every node twice per
 * sweep on a replicating ring) accepts exactly what replicationStatusSchema accepts, so the fast
 * path never lets through an answer the schema would refuse, and a refused answer still gets the
 * schema's words.
 */
import { describe, expect, it } from 'vitest';
import { parseAnswer } from '../../src/client/answers.js';
import { isReplicationStatus } from '../../src/protocol/cluster.js';
import { replicationStatusSchema } from '../../src/protocol/schemas.js';

const peer = { id: 'a1', url: 'http://127.0.0.1:1', pending: 3, bytes: 120, oldest_offset: 1700000000, lag_seconds: 1.5, paused: false, last_error: null, dead_letters: 0 };
const good = { peers: [peer, { ...peer, id: 'b2', oldest_offset: null, last_error: 'ECONNREFUSED', extra: 'kept' }], received: { clients: 1, peers: 2 }, more: 1 };

const variants: Array<[string, unknown]> = [
  ['valid', good],
  ['no peers', { peers: [], received: { clients: 0, peers: 0 } }],
  ['peers not a list', { ...good, peers: {} }],
  ['received missing', { peers: [] }],
  ['received.clients a string', { peers: [], received: { clients: '1', peers: 0 } }],
  ['pending negative', { ...good, peers: [{ ...peer, pending: -1 }] }],
  ['pending fractional', { ...good, peers: [{ ...peer, pending: 1.5 }] }],
  ['lag a string', { ...good, peers: [{ ...peer, lag_seconds: '2' }] }],
  ['paused missing', { ...good, peers: [{ ...peer, paused: undefined }] }],
  ['oldest_offset missing', { ...good, peers: [{ ...peer, oldest_offset: undefined }] }],
  ['last_error a number', { ...good, peers: [{ ...peer, last_error: 5 }] }],
  ['dead_letters missing', { ...good, peers: [{ ...peer, dead_letters: undefined }] }],
  ['id a number', { ...good, peers: [{ ...peer, id: 7 }] }],
  ['a peer that is null', { ...good, peers: [null] }],
  ['an array', []],
  ['null', null],
];

describe('isReplicationStatus', () => {
  it.each(variants)('agrees with the schema: %s', (_what, json) => {
    expect(isReplicationStatus(json)).toBe(replicationStatusSchema.safeParse(json).success);
  });

  it('the fast path gives what the schema gives; a refused answer still names the field', async () => {
    const text = JSON.stringify(good);
    const fast = await parseAnswer('http://n', text, (s) => s.replicationStatusSchema, 'replication status', 'x', { matches: isReplicationStatus });
    expect(fast).toEqual(replicationStatusSchema.parse(good));
    const bad = JSON.stringify({ ...good, peers: [{ ...peer, pending: -1 }] });
    await expect(parseAnswer('http://n', bad, (s) => s.replicationStatusSchema, 'replication status', 'x', { matches: isReplicationStatus })).rejects.toThrow(
      /peers\[0\]\.pending/,
    );
  });
});

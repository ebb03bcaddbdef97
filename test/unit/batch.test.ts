import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Batcher, BodyPool, batchTexts, isRejectLine, memberText } from '../../src/records/batch.js';
import { NdjsonSplitter } from '../../src/records/ndjson-splitter.js';
import { LowWater } from '../../src/replay/state.js';
import { rejectedIndex } from '../../src/replay/acknowledge.js';
import { NodeHttpError } from '../../src/client/errors.js';

const ID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const rec = (i: number, extra: Record<string, unknown> = {}): string => JSON.stringify({ metric: 'cpu', id: ID, offset: 60 * i, count: 1, value: i, ...extra });

function feed(lines: string[], opts: { batchSize: number; batchBytes: number }) {
  const s = new NdjsonSplitter('in.ndjson');
  const b = new Batcher({ source: 'in.ndjson', smallestSpan: 60, ...opts });
  const batches = [];
  const rejects = [];
  for (const raw of [...s.push(Buffer.from(lines.join('\n') + '\n')), ...s.end()]) {
    const r = b.add(raw);
    if (r.kind === 'reject') rejects.push(r.reject);
    if (r.full) batches.push(r.full);
  }
  batches.push(b.flush());
  return { batches, rejects };
}

describe('Batcher', () => {
  it('splits by count and carries the input position each batch completes', () => {
    const { batches } = feed(
      [0, 1, 2, 3, 4].map((i) => rec(i)),
      { batchSize: 2, batchBytes: 1 << 20 },
    );
    expect(batches.map((b) => b.records)).toEqual([[1, 2], [3, 4], [5]]);
    expect(batches.map((b) => b.seq)).toEqual([0, 1, 2]);
    expect(batchTexts(batches[0]!.body)).toEqual([rec(0), rec(1)]);
    expect(batches[0]!.end).toEqual({ record: 2, byte: rec(0).length + rec(1).length + 2, line: 3 });
    expect(JSON.parse(batches[1]!.body.toString())).toEqual([JSON.parse(rec(2)), JSON.parse(rec(3))]);
  });

  it('splits by bytes; a record bigger than the limit travels alone', () => {
    const big = rec(1, { metric: 'x'.repeat(300) });
    const { batches } = feed([rec(0), big, rec(2), rec(3)], { batchSize: 100, batchBytes: 200 });
    expect(batches.map((b) => b.records)).toEqual([[1], [2], [3, 4]]);
    for (const b of batches) if (b.records.length > 1) expect(b.body.length).toBeLessThanOrEqual(200);
  });

  it('rejects invalid records with file, record, line, field and reason; the position moves past them', () => {
    const { batches, rejects } = feed([rec(0), '{"metric":"cpu","id":"' + ID + '","offset":61,"count":1,"value":1}', 'not json', rec(3)], { batchSize: 10, batchBytes: 1 << 20 });
    expect(rejects.map((r) => [r.record, r.line, r.error.split(':')[0]])).toEqual([
      [2, 2, 'offset'],
      [3, 3, '(record)'],
    ]);
    expect(rejects[0]!.error).toMatch(/aligned to the smallest span 60s/);
    expect(rejects[1]!.input).toBe('not json');
    expect(batches.map((b) => b.records)).toEqual([[1, 4]]);
  });

  it('replays the input of a rejects-file line', () => {
    const line = JSON.stringify({ file: 'x', record: 9, line: 9, error: 'id: bad', input: JSON.parse(rec(5)) });
    expect(isRejectLine(JSON.parse(line))).toBe(true);
    const { batches } = feed([line], { batchSize: 10, batchBytes: 1 << 20 });
    expect(JSON.parse(batches[0]!.body.toString())).toEqual([JSON.parse(rec(5))]);
  });
});

describe('BodyPool', () => {
  it("never hands out memory it did not allocate (an empty batch body can sit at offset 0 of Node's shared 8 KiB slab)", () => {
    const pool = new BodyPool(4);
    const shared = new ArrayBuffer(8192);
    // What flush() returns for an empty batch, Buffer.from('[]'), when it starts a fresh slab.
    pool.give(Buffer.from(shared, 0, 2));
    expect(pool.take(4098).buffer).not.toBe(shared);
    const own = pool.take(100);
    pool.give(own.subarray(0, 10));
    expect(pool.take(100).buffer).toBe(own.buffer);
  });

  it('makes a new buffer of the room asked for, and hands it out again for any size it holds', () => {
    const pool = new BodyPool(4);
    const first = pool.take(1000, 1250);
    expect(first.length).toBe(1250);
    pool.give(first.subarray(0, 1000));
    expect(pool.take(1200).buffer).toBe(first.buffer);
    // Never less than the size asked for.
    expect(pool.take(3000, 10).length).toBe(3000);
  });
});

describe('memberText', () => {
  it('finds the text of a top-level member, not one nested or inside a string, the last when repeated', () => {
    expect(memberText('{"a":1,"input":{"v":1e400,"input":2},"b":"\\"input\\":3"}', 'input')).toBe('{"v":1e400,"input":2}');
    expect(memberText('{ "input" : [1, {"x":"]}"}] , "z":0}', 'input')).toBe('[1, {"x":"]}"}]');
    expect(memberText('{"input":"a,b}","input": 12345678901234567890 }', 'input')).toBe('12345678901234567890');
    expect(memberText('{"x":"input","y":{"input":1}}', 'input')).toBeUndefined();
  });

  it('agrees with JSON.parse on generated objects', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 })), fc.jsonValue({ maxDepth: 3 }), fc.boolean(), (rest, input, pretty) => {
        const text = JSON.stringify({ ...rest, input }, null, pretty ? 2 : 0);
        expect(JSON.parse(memberText(text, 'input')!)).toEqual(JSON.parse(text).input);
      }),
    );
  });
});

describe('LowWater', () => {
  it('moves only over a contiguous prefix of acknowledged batches, whatever the order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }).chain((n) => fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n })),
        (order) => {
          const w = new LowWater({ record: 0, byte: 0, line: 1 });
          const acked = new Set<number>();
          for (const seq of order) {
            w.ack(seq, { record: seq + 1, byte: (seq + 1) * 10, line: seq + 2 });
            acked.add(seq);
            let prefix = 0;
            while (acked.has(prefix)) prefix++;
            expect(w.position.record).toBe(prefix);
          }
        },
      ),
    );
  });
});

describe('rejectedIndex', () => {
  const err = (body: Record<string, unknown>) => new NodeHttpError('http://n', 400, `HTTP 400: ${String(body.error)}`, { body });
  it('reads the index a node names, from a member or the message', () => {
    expect(rejectedIndex(err({ error: 'bad', index: 3 }), 5)).toBe(3);
    expect(rejectedIndex(err({ error: 'record 2: value: must be a finite number' }), 5)).toBe(2);
    expect(rejectedIndex(err({ error: 'records[4].offset: must be aligned' }), 5)).toBe(4);
    expect(rejectedIndex(err({ error: 'body is not JSON' }), 5)).toBeUndefined();
    expect(rejectedIndex(err({ error: 'x', index: 9 }), 5)).toBeUndefined();
  });
});

describe('Batcher: each kind checked by its own rule', () => {
  const run = (kind: 'nnt' | 'text' | 'histogram', lines: string[], extra: { histogramPeriods?: number[]; smallestSpan?: number } = {}) => {
    const s = new NdjsonSplitter('in.ndjson');
    const b = new Batcher({ source: 'in.ndjson', batchSize: 100, batchBytes: 1 << 20, kind, ...extra });
    const rejects = [];
    const sent: string[] = [];
    for (const raw of [...s.push(Buffer.from(lines.join('\n') + '\n')), ...s.end()]) {
      const r = b.add(raw);
      if (r.kind === 'reject') rejects.push(r.reject);
    }
    sent.push(...batchTexts(b.flush().body));
    return { rejects, sent };
  };
  const text = (extra: Record<string, unknown> = {}): string => JSON.stringify({ metric: 'version', id: ID, offset: '1700000000', value: 'v1.2', ...extra });
  const hist = (extra: Record<string, unknown> = {}): string => JSON.stringify({ metric: 'latency', id: ID, offset: 1700000040, period: 60, histogram: 'AAEC', ...extra });

  it('text: a string value, an offset as a number or a decimal string; no span to sit on', () => {
    const { rejects, sent } = run('text', [text(), text({ offset: 1700000007 }), text({ value: 5 }), text({ offset: '17e8' }), rec(1)], { smallestSpan: 60 });
    // Sent as read, the string offset included.
    expect(sent).toEqual([text(), text({ offset: 1700000007 })]);
    expect(rejects.map((r) => [r.record, r.error])).toEqual([
      [3, 'value: must be a string (got 5)'],
      [4, expect.stringMatching(/^offset: must be a whole number >= 0, or one written as a string/)],
      // A numeric record given as text: its value is no string.
      [5, 'value: must be a string (got 1)'],
    ]);
  });

  it('histogram: a base64 histogram, a period the nodes keep (when they say)', () => {
    const lines = [hist(), hist({ period: 300 }), hist({ histogram: 'not base64!' }), hist({ period: 45 })];
    const checked = run('histogram', lines, { histogramPeriods: [60, 300] });
    expect(checked.sent).toEqual([hist(), hist({ period: 300 })]);
    expect(checked.rejects.map((r) => [r.record, r.error])).toEqual([
      [3, expect.stringMatching(/^histogram: must be a base64 string/)],
      [4, 'period: must be a configured histogram period (60, 300); got 45'],
    ]);
    // Periods unknown: only the shape is checked, the node judges the period.
    expect(run('histogram', lines).rejects.map((r) => r.record)).toEqual([3]);
  });

  it('a rejects-file line replays its input whatever the kind', () => {
    const line = JSON.stringify({ file: 'a', record: 1, error: 'x', input: JSON.parse(text()) });
    expect(run('text', [line]).sent).toEqual([text()]);
  });

  it('nnt stays the default, with its byte-level fast path', () => {
    const b = new Batcher({ source: 'x', batchSize: 10, batchBytes: 1 << 20, smallestSpan: 60 });
    expect(b.add({ text: rec(1), record: 1, line: 1, byteEnd: 10, lineEnd: 2 }).kind).toBe('ok');
    expect(b.add({ text: text(), record: 2, line: 2, byteEnd: 20, lineEnd: 3 }).kind).toBe('reject');
  });
});

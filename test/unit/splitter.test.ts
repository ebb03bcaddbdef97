import { withoutBytes } from '../helpers/raw-records.js';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { JsonArraySplitter } from '../../src/records/json-array-splitter.js';
import { NdjsonSplitter } from '../../src/records/ndjson-splitter.js';
import { RecordSyntaxError, type RawRecord, type Splitter } from '../../src/records/splitter.js';

function run(s: Splitter, text: string | Buffer, cuts: number[] = []): RawRecord[] {
  const buf = typeof text === 'string' ? Buffer.from(text) : text;
  const out: RawRecord[] = [];
  let from = 0;
  for (const c of [...cuts].sort((a, b) => a - b)) {
    out.push(...withoutBytes(s.push(buf.subarray(from, c))));
    from = c;
  }
  out.push(...withoutBytes(s.push(buf.subarray(from))));
  out.push(...s.end());
  return out;
}

function error(fn: () => unknown): RecordSyntaxError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(RecordSyntaxError);
    return err as RecordSyntaxError;
  }
  throw new Error('expected a RecordSyntaxError');
}

describe('JsonArraySplitter', () => {
  it('yields each top-level element with record and line numbers', () => {
    const text = '[\n {"a": 1},\n {"b": [1, {"c": "]"}]}\n,{"d":"\\"}{["}\n]\n';
    const recs = run(new JsonArraySplitter('f.json'), text);
    expect(recs.map((r) => r.text)).toEqual(['{"a": 1}', '{"b": [1, {"c": "]"}]}', '{"d":"\\"}{["}']);
    expect(recs.map((r) => r.record)).toEqual([1, 2, 3]);
    expect(recs.map((r) => r.line)).toEqual([2, 3, 4]);
    for (const r of recs) expect(JSON.parse(r.text)).toBeTruthy();
    // byteEnd points just past each element
    const buf = Buffer.from(text);
    for (const r of recs) expect(buf.subarray(r.byteEnd - r.text.length, r.byteEnd).toString()).toBe(r.text);
  });

  it('handles scalars, strings and nested arrays as elements, and an empty array', () => {
    expect(run(new JsonArraySplitter('f'), '[1, "x,]", [2,3] ,true]').map((r) => r.text)).toEqual(['1', '"x,]"', '[2,3]', 'true']);
    expect(run(new JsonArraySplitter('f'), '  [ ]  ')).toEqual([]);
  });

  it('keeps multi-byte characters split across chunks intact', () => {
    const text = Buffer.from('[{"m":"température ✓"}]');
    for (let cut = 1; cut < text.length; cut++) {
      expect(run(new JsonArraySplitter('f'), text, [cut]).map((r) => r.text)).toEqual(['{"m":"température ✓"}']);
    }
  });

  it('reports truncated input with file, line and byte', () => {
    const e = error(() => run(new JsonArraySplitter('data.json'), '[{"a":1},\n{"b":2'));
    expect(e.message).toMatch(/^data\.json: line 2, byte 16: input ends inside record 2 \(from line 2\)/);
    expect(error(() => run(new JsonArraySplitter('d.json'), '[{"a":1}\n')).message).toMatch(/before the closing "\]"/);
    expect(error(() => run(new JsonArraySplitter('d.json'), '')).message).toMatch(/empty/);
  });

  it('reports malformed structure at its position', () => {
    expect(error(() => run(new JsonArraySplitter('d.json'), '[{"a":1}\n {"b":2}]')).message).toBe('d.json: line 2, byte 10: expected "," or "]" after record 1, found "{"');
    expect(error(() => run(new JsonArraySplitter('d.json'), '[{"a":1},]')).message).toMatch(/trailing ","/);
    expect(error(() => run(new JsonArraySplitter('d.json'), '{"a":1}')).message).toMatch(/expected a JSON array starting with "\["/);
    expect(error(() => run(new JsonArraySplitter('d.json'), '[{"a":"x\ny"}]')).message).toMatch(/line 1.*string runs past/);
    expect(error(() => run(new JsonArraySplitter('d.json'), '[{"a":1}] x')).message).toMatch(/after the closing/);
  });

  it('resumes after an acknowledged record from its byte offset', () => {
    const text = '[\n{"a":1},\n{"b":2},\n{"c":3}\n]';
    const all = run(new JsonArraySplitter('f'), text);
    const at = all[0]!;
    const rest = run(new JsonArraySplitter('f', { record: at.record, byte: at.byteEnd, line: at.lineEnd }), Buffer.from(text).subarray(at.byteEnd));
    expect(rest).toEqual(all.slice(1));
  });
});

describe('NdjsonSplitter', () => {
  it('yields one record per non-blank line with CRLF and a last line without newline', () => {
    const recs = run(new NdjsonSplitter('f'), '{"a":1}\r\n\n  \n{"b":2}\n{"c":3}');
    expect(recs.map((r) => [r.record, r.line, r.text])).toEqual([
      [1, 1, '{"a":1}'],
      [2, 4, '{"b":2}'],
      [3, 5, '{"c":3}'],
    ]);
    expect(recs[2]!.byteEnd).toBe(Buffer.byteLength('{"a":1}\r\n\n  \n{"b":2}\n{"c":3}'));
  });

  it('drops a UTF-8 BOM at the start of the input, however the chunks cut it (and only there)', () => {
    const text = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}\n\ufeff{"b":2}\n')]);
    for (const cuts of [[], [1], [2], [3], [1, 2], [5]]) {
      const recs = run(new NdjsonSplitter('f'), text, cuts);
      expect(recs.map((r) => [r.record, r.line, r.text])).toEqual([
        [1, 1, '{"a":1}'],
        [2, 2, '\ufeff{"b":2}'],
      ]);
      expect(recs[0]!.byteEnd).toBe(11);
    }
    // A BOM on a line of its own, and a single line without a newline.
    expect(run(new NdjsonSplitter('f'), '\ufeff\n{"a":1}\n').map((r) => [r.line, r.text])).toEqual([[2, '{"a":1}']]);
    expect(run(new NdjsonSplitter('f'), '\ufeff{"a":1}').map((r) => [r.line, r.text])).toEqual([[1, '{"a":1}']]);
  });

  it('resumes from a byte offset', () => {
    const text = '{"a":1}\n{"b":2}\n\n{"c":3}\n';
    const all = run(new NdjsonSplitter('f'), text);
    const at = all[1]!;
    expect(run(new NdjsonSplitter('f', { record: at.record, byte: at.byteEnd, line: at.lineEnd }), Buffer.from(text).subarray(at.byteEnd))).toEqual(all.slice(2));
  });
});

// Property: however the bytes are chunked, the splitter yields the same records as JSON.parse sees.
const jsonValue = fc.jsonValue({ maxDepth: 3 });
const arb = fc.array(jsonValue, { maxLength: 12 }).chain((values) => {
  const text = Buffer.from(`[${values.map((v, i) => (i % 2 ? `\n ${JSON.stringify(v, null, i % 3 ? 1 : 0)}` : JSON.stringify(v))).join(' ,')}\n]\n`);
  return fc.record({ values: fc.constant(values), text: fc.constant(text), cuts: fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, text.length - 1) }), { maxLength: 8 }) });
});

describe('splitter properties', () => {
  it('any chunking of a generated array yields the same records, in order, as whole', () => {
    fc.assert(
      fc.property(arb, ({ values, text, cuts }) => {
        const recs = run(new JsonArraySplitter('p'), text, cuts);
        expect(recs.map((r) => JSON.parse(r.text))).toEqual(JSON.parse(text.toString()));
        expect(recs.length).toBe(values.length);
        expect(recs.map((r) => r.record)).toEqual(values.map((_, i) => i + 1));
        const whole = run(new JsonArraySplitter('p'), text);
        expect(recs).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  it('NDJSON: any chunking yields the same lines', () => {
    fc.assert(
      fc.property(fc.array(jsonValue, { maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 4000 }), { maxLength: 8 }), (values, rawCuts) => {
        const text = Buffer.from(values.map((v) => JSON.stringify(v)).join('\n') + '\n');
        const cuts = [...new Set(rawCuts.map((c) => c % Math.max(1, text.length)))].filter((c) => c > 0);
        const recs = run(new NdjsonSplitter('p'), text, cuts);
        expect(recs.map((r) => JSON.parse(r.text))).toEqual(values.map((v) => JSON.parse(JSON.stringify(v))));
      }),
      { numRuns: 300 },
    );
  });
});

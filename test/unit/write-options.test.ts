import { describe, expect, it } from 'vitest';
import { formatFromBytes, formatFromName } from '../../src/records/reader.js';

describe('write options', () => {
  it('detects formats from names and first bytes', () => {
    expect(formatFromName('a.json')).toBe('json');
    expect(formatFromName('a.JSON.gz')).toBe('json');
    expect(formatFromName('a.jsonl')).toBe('ndjson');
    expect(formatFromName('a.ndjson.gz')).toBe('ndjson');
    expect(formatFromName('a.txt')).toBeUndefined();
    expect(formatFromBytes(Buffer.from('  \n [{'))).toBe('json');
    expect(formatFromBytes(Buffer.from('\n{"a":1}'))).toBe('ndjson');
    expect(formatFromBytes(Buffer.from('x'))).toBeUndefined();
  });
});

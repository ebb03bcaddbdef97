import { describe, expect, it } from 'vitest';
import { parseSize } from '../../src/cli/commands/write/action.js';
import { formatFromBytes, formatFromName } from '../../src/records/reader.js';

describe('write options', () => {
  it('parses sizes', () => {
    expect(parseSize('4MiB', '--batch-bytes')).toBe(4 * 1024 * 1024);
    expect(parseSize('512KiB', '--batch-bytes')).toBe(512 * 1024);
    expect(parseSize('1MB', '--batch-bytes')).toBe(1_000_000);
    expect(parseSize('65536', '--batch-bytes')).toBe(65536);
    expect(() => parseSize('4 parsecs', '--batch-bytes')).toThrow(/--batch-bytes: "4 parsecs" is not a size/);
    expect(() => parseSize('0', '--batch-bytes')).toThrow(/not a size/);
  });
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

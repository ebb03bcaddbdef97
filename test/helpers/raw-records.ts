import type { RawRecord } from '../../src/records/splitter.js';

/**
 * A splitter's records from one chunk, checked and without their byte references: where a record
 * says its bytes are in the chunk, they must be its text, followed by the line's CR or LF (the
 * batcher copies them as they are). Call before the chunk is reused.
 */
export function withoutBytes(records: readonly RawRecord[]): RawRecord[] {
  return records.map(({ bytes, from, to, ...rest }) => {
    if (bytes !== undefined) {
      const at = bytes.toString('latin1', from, to);
      if (at !== rest.text) throw new Error(`record ${rest.record}: its bytes ${JSON.stringify(at)} are not its text ${JSON.stringify(rest.text)}`);
      if (bytes[to!] !== 0x0a && bytes[to!] !== 0x0d) throw new Error(`record ${rest.record}: no CR or LF after its bytes`);
    }
    return rest;
  });
}

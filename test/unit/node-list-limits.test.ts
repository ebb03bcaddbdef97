import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_HOST_CHARS, parseNodeEntry, parseNodeList } from '../../src/cli/nodes.js';
import { nodesFor } from '../helpers/network.js';

const dir = mkdtempSync(join(tmpdir(), 'tsnode-node-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('node lists are bounded', () => {
  it('a device or a huge file is refused after 1 MiB, not read for ever', () => {
    const started = Date.now();
    expect(() => nodesFor({ flag: '/dev/zero', env: {}, cwd: dir })).toThrow(/--nodes: \/dev\/zero is larger than 1 MiB: not a node list/);
    expect(Date.now() - started).toBeLessThan(2000);
    const big = join(dir, 'big.txt');
    writeFileSync(big, 'http://127.0.0.1:8112\n'.repeat(60_000));
    expect(() => nodesFor({ flag: big, env: {}, cwd: dir })).toThrow(/is larger than 1 MiB/);
  });

  it('host names are at most 253 characters; a 5 MB one is refused with a short message', () => {
    const ok = 'a'.repeat(63) + '.' + 'b'.repeat(63) + '.' + 'c'.repeat(63) + '.' + 'd'.repeat(61);
    expect(ok).toHaveLength(MAX_HOST_CHARS);
    expect(parseNodeEntry(`${ok}:8112`)).toBe(`http://${ok}:8112`);
    expect(() => parseNodeEntry(`${ok}x:8112`)).toThrow(/the host name is 254 characters long \(at most 253\)/);
    const file = join(dir, 'huge-host.txt');
    writeFileSync(file, `${'h'.repeat(5_000_000)}\n`);
    // Larger than the file cap already; a line just under it is refused by its length.
    expect(() => nodesFor({ flag: file, env: {}, cwd: dir })).toThrow(/larger than 1 MiB/);
    let message = '';
    try {
      parseNodeList(`${'h'.repeat(900_000)}:8112`, 'nodes.txt', { separator: 'lines' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^nodes\.txt:1: "h{77}\.\.\." is longer than 2048 characters: not a node address$/);
  });

  it('an entry with credentials is quoted without them', () => {
    for (const entry of ['http://admin:hunter2@db1:8112', 'admin:hunter2@db1:8112', 'https://admin:p@ss@db1']) {
      let message = '';
      try {
        parseNodeList(entry, '--nodes', { separator: 'commas' });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toContain('put credentials in --header');
      expect(message).not.toContain('hunter2');
      expect(message).not.toContain('ss@');
      expect(message).toContain('[redacted]@');
    }
  });
});

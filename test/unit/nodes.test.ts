import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/errors.js';
import { DEFAULT_NODE, parseNodeEntry, parseNodeList, sameNodeKey } from '../../src/cli/nodes.js';
import { nodesFor } from '../helpers/network.js';

describe('parseNodeEntry: every line form', () => {
  it.each([
    ['http://db1.example:8112', 'http://db1.example:8112'],
    ['https://db1.example:9443', 'https://db1.example:9443'],
    ['https://db1.example', 'https://db1.example:8112'],
    ['http://db1.example:80', 'http://db1.example:80'],
    ['https://db1.example:443/', 'https://db1.example:443'],
    ['http://proxy:8080/cluster/a/', 'http://proxy:8080/cluster/a'],
    ['db1.example:9000', 'http://db1.example:9000'],
    ['db1.example', 'http://db1.example:8112'],
    ['DB1.Example', 'http://db1.example:8112'],
    ['10.0.0.7', 'http://10.0.0.7:8112'],
    ['[::1]:9000', 'http://[::1]:9000'],
    ['[::1]', 'http://[::1]:8112'],
    ['  db1:1  ', 'http://db1:1'],
  ])('%j -> %s', (entry, url) => {
    expect(parseNodeEntry(entry)).toBe(url);
  });

  it.each([
    ['ftp://db1:21', /only http and https/],
    ['http://user:pw@db1:8112', /credentials/],
    ['http://db1:8112/?x=1', /query or fragment/],
    ['db1:99999', /port 99999 is out of range/],
    ['db1:0', /port 0/],
    ['db 1', /not a node address|spaces/],
    ['http://', /not a node address/],
  ])('rejects %j', (entry, why) => {
    expect(() => parseNodeEntry(entry)).toThrow(why);
  });
});

describe('parseNodeList', () => {
  it('ignores comments and blank lines, handles CRLF and a BOM', () => {
    const text = '\uFEFF# production\r\nhttp://a:1\r\n\r\n   # indented comment\nb:2   # trailing comment\nc\n';
    expect(parseNodeList(text, 'nodes.txt', { separator: 'lines' })).toEqual({
      nodes: ['http://a:1', 'http://b:2', 'http://c:8112'],
      source: 'nodes.txt',
      warnings: [],
    });
  });

  it('drops duplicates after normalising, with a warning naming both lines', () => {
    const r = parseNodeList('a:8112\nb\nhttp://A:8112/\na\n', 'nodes.txt', { separator: 'lines' });
    expect(r.nodes).toEqual(['http://a:8112', 'http://b:8112']);
    expect(r.warnings).toEqual([
      'nodes.txt:3: http://a:8112 is listed twice (first at line 1); using it once',
      'nodes.txt:4: http://a:8112 is listed twice (first at line 1); using it once',
    ]);
  });

  it('one node under two spellings is one node: loopback names, host case, default port, scheme, trailing dot', () => {
    const r = parseNodeList('127.0.0.1:8112\nlocalhost\nhttp://[::1]:8112/\nhttps://LOCALHOST.:8112\nlocalhost:8113\n127.0.0.1:8112/other\n', 'nodes.txt', { separator: 'lines' });
    expect(r.nodes).toEqual(['http://127.0.0.1:8112', 'http://localhost:8113', 'http://127.0.0.1:8112/other']);
    expect(r.warnings).toEqual([
      'nodes.txt:2: http://localhost:8112 is the same node as http://127.0.0.1:8112 (line 1) under another spelling; using it once, as http://127.0.0.1:8112',
      'nodes.txt:3: http://[::1]:8112 is the same node as http://127.0.0.1:8112 (line 1) under another spelling; using it once, as http://127.0.0.1:8112',
      'nodes.txt:4: https://localhost.:8112 is the same node as http://127.0.0.1:8112 (line 1) under another spelling; using it once, as http://127.0.0.1:8112',
    ]);
    expect(parseNodeList('db1.example:8112,DB1.EXAMPLE', '--nodes', { separator: 'commas' }).warnings).toEqual([
      '--nodes item 2: http://db1.example:8112 is listed twice (first at item 1); using it once',
    ]);
    // other hosts that happen to be loopback too (127.0.0.2) may be another node: kept
    expect(sameNodeKey('http://127.0.0.2:8112')).not.toBe(sameNodeKey('http://127.0.0.1:8112'));
  });

  it('names file and line of a bad line', () => {
    let err: unknown;
    try {
      parseNodeList('a:1\n# ok\nftp://b:2\n', 'cluster/nodes.txt', { separator: 'lines' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).message).toMatch(/^cluster\/nodes\.txt:3: "ftp:\/\/b:2": only http and https/);
    expect((err as UsageError).hint).toMatch(/host:port/);
  });

  it('parses comma lists, naming the item of a bad one', () => {
    expect(parseNodeList('a:1, b:2,,', '--nodes', { separator: 'commas' }).nodes).toEqual(['http://a:1', 'http://b:2']);
    expect(() => parseNodeList('a:1,b:0', '--nodes', { separator: 'commas' })).toThrow(/--nodes item 2/);
  });

  it('refuses a list without nodes', () => {
    expect(() => parseNodeList('# nothing\n\n', 'nodes.txt', { separator: 'lines' })).toThrow(/nodes\.txt lists no nodes/);
  });
});

describe('the node list a read-only command resolves', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-nodes-'));
  writeFileSync(join(dir, 'cluster.txt'), 'x:1\ny:2\n');
  const withDefaultFile = join(dir, 'cwd');
  mkdirSync(withDefaultFile);
  writeFileSync(join(withDefaultFile, 'nodes.txt'), 'z:3\n');

  it('prefers --nodes (file), then TSNODE_NODES, then ./nodes.txt, then the default', () => {
    const env = { TSNODE_NODES: 'e:9' };
    expect(nodesFor({ flag: 'cluster.txt', env, cwd: dir }).nodes).toEqual(['http://x:1', 'http://y:2']);
    expect(nodesFor({ flag: 'a:1,b:2', env, cwd: dir }).nodes).toEqual(['http://a:1', 'http://b:2']);
    expect(nodesFor({ env, cwd: withDefaultFile }).nodes).toEqual(['http://e:9']);
    expect(nodesFor({ env: {}, cwd: withDefaultFile })).toMatchObject({ nodes: ['http://z:3'], source: './nodes.txt' });
    expect(nodesFor({ env: { TSNODE_NODES: '  ' }, cwd: dir })).toMatchObject({ nodes: [DEFAULT_NODE], source: 'default' });
  });

  it('says so when a node list file does not exist', () => {
    expect(() => nodesFor({ flag: 'missing.txt', env: {}, cwd: dir })).toThrow(/node list file missing\.txt does not exist/);
    expect(() => nodesFor({ flag: 'conf/cluster', env: {}, cwd: dir })).toThrow(/does not exist/);
  });
});

describe('node entry errors say why', () => {
  it('names an out-of-range port', async () => {
    const { parseNodeEntry } = await import('../../src/cli/nodes.js');
    expect(() => parseNodeEntry('http://x:99999')).toThrow(/port 99999 is out of range \(1-65535\)/);
    expect(parseNodeEntry('x:65535')).toBe('http://x:65535');
  });
});

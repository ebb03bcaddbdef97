import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  Ring,
  TopologyError,
  metricKey,
  nodeApiUrl,
  topologyFromJson,
  topologyFromXml,
  topologyHash,
  topologyToNodeArray,
  topologyToXml,
  type Topology,
} from '../../src/ring/index.js';

// Transcribed from circonus-labs/gosnowth topology_test.go (topologyXMLTestData): a sided ring of
// ten nodes, weight 51 each, three copies. gosnowth's TestTopology expects the hash below, and
// location_test.go's TestLocateMetricFindMetric the owners of 1f846f26-...-e577 / "test".
const GOSNOWTH_XML = `<nodes n="3">
<node id="5c32c076-ffeb-cfdd-a541-97e25c028dd6" address="10.128.0.100" port="8112" apiport="8112" weight="51" side="a"/>
<node id="1533fc6b-de08-6eac-eb46-d3920a1a18a3" address="10.128.0.101" port="8112" apiport="8112" weight="51" side="b"/>
<node id="18111a24-5832-42c8-e780-bcbf88f47215" address="10.128.0.102" port="8112" apiport="8112" weight="51" side="a"/>
<node id="4ec7bd67-f279-6f9a-fbe7-be9a0dee4c39" address="10.128.0.103" port="8112" apiport="8112" weight="51" side="b"/>
<node id="0475df4e-ee2d-c96c-b6d7-e9d1b0239c2c" address="10.128.0.104" port="8112" apiport="8112" weight="51" side="a"/>
<node id="9d1a34cd-b150-4c19-a894-e20280b42b62" address="10.128.0.105" port="8112" apiport="8112" weight="51" side="b"/>
<node id="3d8ae36d-3d4d-4eda-ab53-c58538985062" address="10.128.0.106" port="8112" apiport="8112" weight="51" side="a"/>
<node id="d2b9a8aa-9503-6cb3-dfdd-e407c1a6bee7" address="10.128.0.107" port="8112" apiport="8112" weight="51" side="b"/>
<node id="15e35e06-4069-ecb8-c7a4-93e4c540693d" address="10.128.0.108" port="8112" apiport="8112" weight="51" side="a"/>
<node id="8f0073e1-5d52-67da-bd59-e8017e5b5aa1" address="10.128.0.109" port="8112" apiport="8112" weight="51" side="b"/>
</nodes>`;
const GOSNOWTH_HASH = '6c5f3aefde5c1f32d088b450fb3f0d9f33dedaaf8bed9cf5f77906f13fd65fc8';

// location_test.go's locateTopologyXMLTestData: the same ids, other addresses, one attribute per line.
const GOSNOWTH_LOCATE_XML = `<nodes n="3">
${[
  ['5c32c076-ffeb-cfdd-a541-97e25c028dd6', 'a'],
  ['1533fc6b-de08-6eac-eb46-d3920a1a18a3', 'b'],
  ['18111a24-5832-42c8-e780-bcbf88f47215', 'a'],
  ['4ec7bd67-f279-6f9a-fbe7-be9a0dee4c39', 'b'],
  ['0475df4e-ee2d-c96c-b6d7-e9d1b0239c2c', 'a'],
  ['9d1a34cd-b150-4c19-a894-e20280b42b62', 'b'],
  ['3d8ae36d-3d4d-4eda-ab53-c58538985062', 'a'],
  ['d2b9a8aa-9503-6cb3-dfdd-e407c1a6bee7', 'b'],
  ['15e35e06-4069-ecb8-c7a4-93e4c540693d', 'a'],
  ['8f0073e1-5d52-67da-bd59-e8017e5b5aa1', 'b'],
]
  .map(([id, side], i) => `\t<node id="${id}"\n\t\taddress="10.0.0.${100 + i}"\n\t\tport="8112"\n\t\tapiport="8112"\n\t\tweight="51"\n\t\tside="${side}"/>`)
  .join('\n')}
</nodes>`;

// gosnowth's locateXMLTestData: two nodes, side="both" (= unsided), two copies.
const GOSNOWTH_BOTH_XML = `<nodes n="2">
\t<node id="fac5f5e4-b9f0-49ca-870d-992c5c2a0c79"
\t\taddress="10.0.0.1"
\t\tport="8112"
\t\tapiport="8112"
\t\tweight="170"
\t\tside="both"/>
\t<node id="97df761e-7c56-40dd-9344-ec064a4ed68d"
\t\taddress="10.0.0.2"
\t\tport="8112"
\t\tapiport="8112"
\t\tweight="170"
\t\tside="both"/>
</nodes>`;

// gosnowth's topologyTestData: the /topology/json array form, four nodes, n = 2.
const GOSNOWTH_JSON = [
  { id: '1f846f26-0cfd-4df5-b4f1-e0930604e577', address: '10.8.20.1', port: 8112, apiport: 8112, weight: 32, n: 2 },
  { id: '765ac4cc-1929-4642-9ef1-d194d08f9538', address: '10.8.20.2', port: 8112, apiport: 8112, weight: 32, n: 2 },
  { id: '8c2fc7b8-c569-402d-a393-db433fb267aa', address: '10.8.20.3', port: 8112, apiport: 8112, weight: 32, n: 2 },
  { id: '07fa2237-5744-4c28-a622-a99cfc1ac87e', address: '10.8.20.4', port: 8112, apiport: 8112, weight: 32, n: 2 },
];

const sha = (...parts: Buffer[]): string => createHash('sha256').update(Buffer.concat(parts)).digest('hex');
const be16 = (n: number): Buffer => Buffer.from([n >> 8, n & 0xff]);

/** The slow, obvious placement: every slot hashed, a linear scan for each copy. */
function naiveOwners(t: Topology, key: string): string[] {
  const sided = t.nodes.some((n) => n.side);
  const slots = t.nodes.flatMap((n) =>
    Array.from({ length: n.weight }, (_, w) => {
      const buf = Buffer.alloc(38);
      buf.write(n.id, 0, 'utf8');
      buf.writeUInt16BE(w, 36);
      const loc = createHash('sha256').update(buf).digest();
      if (n.side === 'a') loc[0]! &= 0x7f;
      if (n.side === 'b') loc[0]! |= 0x80;
      return { loc: loc.toString('hex'), id: n.id };
    }),
  );
  const ordered = [...slots].sort((a, b) => (a.loc < b.loc ? -1 : a.loc > b.loc ? 1 : 0));
  const loc = createHash('sha256').update(key).digest();
  const owners: string[] = [];
  for (let c = 0; c < t.writeCopies; c++) {
    const here = loc.toString('hex');
    const sideBit = loc[0]! & 0x80;
    const fits = (s: { loc: string; id: string }): boolean => !owners.includes(s.id) && (!sided || (parseInt(s.loc.slice(0, 2), 16) & 0x80) === sideBit);
    const hit = ordered.find((s) => s.loc >= here && fits(s)) ?? ordered.find(fits);
    if (!hit) break;
    owners.push(hit.id);
    loc[0]! ^= 0x80;
  }
  return owners;
}

function ringOf(n: number, opts: { weight?: number; copies?: number } = {}): Topology {
  return {
    writeCopies: opts.copies ?? 2,
    nodes: Array.from({ length: n }, (_, i) => ({ id: randomUUID(), address: '127.0.0.1', port: 9000 + i, apiport: 9000 + i, weight: opts.weight ?? 32 })),
  };
}

describe('topology hash and placement: gosnowth vectors', () => {
  it("hashes gosnowth's sided, three-copy test topology to the hash its tests expect", () => {
    const t = topologyFromXml(GOSNOWTH_XML);
    expect(t.nodes).toHaveLength(10);
    expect(t.writeCopies).toBe(3);
    expect(topologyHash(t)).toBe(GOSNOWTH_HASH);
    expect(Ring.compile(t).hash).toBe(GOSNOWTH_HASH);
  });

  it("places 1f846f26-.../test on the three nodes gosnowth's FindMetric test expects, in order", () => {
    const ring = Ring.compile(topologyFromXml(GOSNOWTH_XML));
    const expected = ['9d1a34cd-b150-4c19-a894-e20280b42b62', '3d8ae36d-3d4d-4eda-ab53-c58538985062', '1533fc6b-de08-6eac-eb46-d3920a1a18a3'];
    expect(ring.ownersOf('1f846f26-0cfd-4df5-b4f1-e0930604e577', 'test').map((n) => n.id)).toEqual(expected);
    // The check UUID is lower-cased into the key, as gosnowth does.
    expect(ring.ownersOf('1F846F26-0CFD-4DF5-B4F1-E0930604E577', 'test').map((n) => n.id)).toEqual(expected);
    expect(metricKey('1F846F26-0CFD-4DF5-B4F1-E0930604E577', 'Test')).toBe('1f846f26-0cfd-4df5-b4f1-e0930604e577-Test');
  });

  it("ignores addresses: gosnowth's locate topology (other addresses, one attribute per line) hashes and places the same", () => {
    const t = topologyFromXml(GOSNOWTH_LOCATE_XML);
    expect(t.nodes.map((n) => n.address)).toEqual(Array.from({ length: 10 }, (_, i) => `10.0.0.${100 + i}`));
    expect(topologyHash(t)).toBe(GOSNOWTH_HASH);
    expect(Ring.compile(t).ownersOf('1f846f26-0cfd-4df5-b4f1-e0930604e577', 'test')[0]!.id).toBe('9d1a34cd-b150-4c19-a894-e20280b42b62');
  });

  it('reads side="both" as unsided and gosnowth\'s /topology/json array with n as the copies', () => {
    const both = topologyFromXml(GOSNOWTH_BOTH_XML);
    expect(both.nodes.every((n) => n.side === undefined)).toBe(true);
    expect(both.writeCopies).toBe(2);
    const json = topologyFromJson(GOSNOWTH_JSON);
    expect(json.nodes).toHaveLength(4);
    expect(json.writeCopies).toBe(2);
    expect(topologyToNodeArray(json)).toEqual(GOSNOWTH_JSON);
  });
});

describe('topology hash: hand-computed', () => {
  const id = '07fa2237-5744-4c28-a622-a99cfc1ac87e';
  const node = { id, address: '10.8.20.4', port: 8112, apiport: 8112, weight: 32 };

  it('two copies: id bytes, two zero bytes, the weight as a big-endian uint16 per node, nothing more', () => {
    expect(topologyHash({ writeCopies: 2, nodes: [node] })).toBe(sha(Buffer.from(id), Buffer.from([0, 0]), be16(32)));
    const other = { ...node, id: '1f846f26-0cfd-4df5-b4f1-e0930604e577', weight: 300 };
    expect(topologyHash({ writeCopies: 2, nodes: [node, other] })).toBe(sha(Buffer.from(id), Buffer.from([0, 0]), be16(32), Buffer.from(other.id), Buffer.from([0, 0]), be16(300)));
  });

  it('other copy counts append 38 zero bytes and the copies; order matters', () => {
    expect(topologyHash({ writeCopies: 1, nodes: [node] })).toBe(sha(Buffer.from(id), Buffer.from([0, 0]), be16(32), Buffer.alloc(38), be16(1)));
    const a = { ...node, id: '1f846f26-0cfd-4df5-b4f1-e0930604e577' };
    expect(topologyHash({ writeCopies: 2, nodes: [node, a] })).not.toBe(topologyHash({ writeCopies: 2, nodes: [a, node] }));
  });

  it('a sided ring adds each side (a = 1, b = 2) and two more zero bytes after the copies', () => {
    const t: Topology = {
      writeCopies: 3,
      nodes: [
        { ...node, side: 'a' },
        { ...node, id: '1f846f26-0cfd-4df5-b4f1-e0930604e577', address: 'x', side: 'b' },
      ],
    };
    expect(topologyHash(t)).toBe(
      sha(Buffer.from(id), Buffer.from([0, 0]), be16(32), be16(1), Buffer.from(t.nodes[1]!.id), Buffer.from([0, 0]), be16(32), be16(2), Buffer.alloc(38), be16(3), Buffer.alloc(2)),
    );
  });
});

describe('placement: against a naive implementation', () => {
  it('agrees with the slow obvious placement on unsided rings of several sizes and copy counts', () => {
    for (const [n, copies, weight] of [
      [1, 1, 8],
      [2, 2, 5],
      [5, 2, 32],
      [6, 3, 16],
      [7, 7, 4],
    ] as const) {
      const t = ringOf(n, { copies, weight });
      const ring = Ring.compile(t);
      for (let k = 0; k < 200; k++) {
        const uuid = randomUUID();
        const metric = `m${k}|ST[a:b]`;
        const owners = ring.ownersOf(uuid, metric).map((x) => x.id);
        expect(owners).toEqual(naiveOwners(t, metricKey(uuid, metric)));
        expect(new Set(owners).size).toBe(Math.min(copies, n));
      }
    }
  });

  it("agrees with it on gosnowth's sided ring, where copies alternate sides", () => {
    const t = topologyFromXml(GOSNOWTH_XML);
    const ring = Ring.compile(t);
    const sideOf = new Map(t.nodes.map((n) => [n.id, n.side]));
    for (let k = 0; k < 200; k++) {
      const key = metricKey(randomUUID(), `metric.${k}`);
      const owners = ring.ownersOfKey(key).map((x) => x.id);
      expect(owners).toEqual(naiveOwners(t, key));
      // The second copy's location is the first's with the top bit flipped: the other side.
      expect(sideOf.get(owners[0]!)).not.toBe(sideOf.get(owners[1]!));
    }
  });

  it('gives every node a share of the metrics on an even ring', () => {
    const ring = Ring.compile(ringOf(5, { weight: 64 }));
    const primaries = new Map<string, number>();
    for (let k = 0; k < 5000; k++) {
      const id = ring.ownersOf('3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', `m${k}`)[0]!.id;
      primaries.set(id, (primaries.get(id) ?? 0) + 1);
    }
    expect(primaries.size).toBe(5);
    for (const count of primaries.values()) expect(count).toBeGreaterThan(400);
  });
});

describe('topology files and XML', () => {
  const file = {
    write_copies: 2,
    nodes: [
      { id: '1F846F26-0CFD-4DF5-B4F1-E0930604E577', address: '127.0.0.1', port: 8112, apiport: 8112, weight: 32 },
      { id: '765ac4cc-1929-4642-9ef1-d194d08f9538', address: '::1', port: 8113, apiport: 8113, weight: 16 },
    ],
  };

  it("reads tsnode's file form, lower-casing ids, and round-trips it through the store's XML", () => {
    const t = topologyFromJson(file);
    expect(t.nodes[0]!.id).toBe('1f846f26-0cfd-4df5-b4f1-e0930604e577');
    const xml = topologyToXml(t);
    expect(xml).toMatch(/^<nodes n="2" write_copies="2">\n/);
    const back = topologyFromXml(xml);
    expect(back).toEqual(t);
    expect(topologyHash(back)).toBe(topologyHash(t));
    expect(nodeApiUrl(t.nodes[1]!)).toBe('http://[::1]:8113');
    expect(nodeApiUrl(t.nodes[0]!, 'https')).toBe('https://127.0.0.1:8112');
  });

  it('reads comments, a declaration, entities and <node></node> pairs', () => {
    const t = topologyFromXml(
      `<?xml version="1.0"?>\n<!-- ring -->\n<nodes write_copies='1'><node id="1f846f26-0cfd-4df5-b4f1-e0930604e577" address="h&#45;1.example" port="1" apiport="2" weight="3"></node></nodes>\n`,
    );
    expect(t).toEqual({ writeCopies: 1, nodes: [{ id: '1f846f26-0cfd-4df5-b4f1-e0930604e577', address: 'h-1.example', port: 1, apiport: 2, weight: 3 }] });
  });

  it.each([
    [{ ...file, write_copies: 3 }, /write_copies: 3 copies cannot be kept on 2 nodes/],
    [{ ...file, write_copies: 0 }, /write_copies: 0 is not a number of copies/],
    [{ ...file, nodes: [] }, /lists no nodes/],
    [{ ...file, nodes: [file.nodes[0], file.nodes[0]] }, /nodes\[1\]\.id: .* is listed twice/],
    [{ ...file, nodes: [file.nodes[0], { ...file.nodes[1], address: '127.0.0.1', apiport: 8112 }] }, /nodes\[1\]: API address 127\.0\.0\.1:8112 is also nodes\[0\]'s/],
    [{ ...file, nodes: [{ ...file.nodes[0], weight: 0 }] }, /nodes\[0\]\.weight: 0 is not a weight/],
    [{ ...file, nodes: [{ ...file.nodes[0], weight: 70000 }] }, /nodes\[0\]\.weight/],
    [{ ...file, nodes: [{ ...file.nodes[0], id: 'node-1' }] }, /nodes\[0\]\.id: "node-1" is not a node identity/],
    [{ ...file, nodes: [{ ...file.nodes[0], address: 'a b' }] }, /nodes\[0\]\.address/],
    [{ ...file, nodes: [{ ...file.nodes[0], port: '80x' }] }, /nodes\[0\]\.port: "80x" is not a port/],
    [{ ...file, nodes: [{ ...file.nodes[0], side: 'c' }] }, /nodes\[0\]\.side/],
    [{ write_copies: 2 }, /nodes: missing is not a list of nodes/],
    ['text', /is not a topology/],
  ])('refuses a bad topology, naming the field (%#)', (value, message) => {
    expect(() => topologyFromJson(value)).toThrow(TopologyError);
    expect(() => topologyFromJson(value)).toThrow(message);
  });

  it.each([
    ['<node/>', /root element is <node>/],
    ['<nodes n="2"><node id="1f846f26-0cfd-4df5-b4f1-e0930604e577" address="a" port="1" apiport="1" weight="1"/>', /ends inside <nodes>/],
    ['<nodes><node id="1f846f26-0cfd-4df5-b4f1-e0930604e577" address="a" port="1" apiport="1" weight="1"/></nodes>', /<nodes> n: missing/],
    ['<nodes n="1"><host/></nodes>', /only <node> elements/],
    ['<nodes n="1"></nodes> trailing', /text after <\/nodes>/],
    ['<nodes n="1"><node id="1f846f26-0cfd-4df5-b4f1-e0930604e577" address="a&b" port="1" apiport="1" weight="1"/></nodes>', /not a complete XML reference/],
    ['<!DOCTYPE x><nodes n="1"></nodes>', /DOCTYPE/],
  ])('refuses bad XML with a reason (%s)', (xml, message) => {
    expect(() => topologyFromXml(xml)).toThrow(message);
  });

  it('refuses /topology/json arrays whose nodes disagree on the copies', () => {
    expect(() => topologyFromJson([GOSNOWTH_JSON[0], { ...GOSNOWTH_JSON[1], n: 3 }])).toThrow(/disagree on the number of copies/);
  });
});

/**
 * The store's topology XML (`GET /topology/xml/<hash>`, the production client's first read after
 * `/stats.json`):
 *
 *   <nodes n="2" write_copies="2">
 *     <node id="..." address="10.8.20.1" port="8112" apiport="8112" weight="32"/>
 *   </nodes>
 *
 * A small reader for exactly this shape (attributes, self-closing or empty elements, comments,
 * an XML declaration, the five named entities and numeric references), not a general XML parser.
 */
import { checkNode, checkTopology, TopologyError, type Topology } from './topology.js';

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(text: string, field: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);?/gi, (whole, name: string) => {
    if (!whole.endsWith(';')) throw new TopologyError(field, `${JSON.stringify(whole)} is not a complete XML reference`, '&amp; &lt; &gt; &quot; &apos; or &#NN;');
    if (name.startsWith('#')) {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      if (!Number.isInteger(code) || code <= 0 || code > 0x10ffff) throw new TopologyError(field, `${whole} is not a character`, 'a valid character reference');
      return String.fromCodePoint(code);
    }
    const v = ENTITIES[name];
    if (v === undefined) throw new TopologyError(field, `unknown XML entity ${whole}`, '&amp; &lt; &gt; &quot; or &apos;');
    return v;
  });
}

interface Element {
  name: string;
  attrs: Record<string, string>;
  selfClosing: boolean;
}

const TAG = /<\s*([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.:-]*\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/y;
const ATTR = /([A-Za-z_][\w.:-]*)\s*=\s*("([^"]*)"|'([^']*)')/g;

function readAttrs(text: string, where: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const m of text.matchAll(ATTR)) {
    const name = m[1]!;
    if (name in attrs) throw new TopologyError(where, `attribute ${name} is given twice`, 'each attribute once');
    attrs[name] = decodeEntities(m[3] ?? m[4] ?? '', `${where}.${name}`);
  }
  return attrs;
}

/** Parses topology XML into a validated topology. Node ids are kept byte for byte (the hash covers them). */
export function topologyFromXml(text: string, where = ''): Topology {
  const at = (f: string): string => (where ? `${where} ${f}` : f);
  const fail = (pos: number, why: string): never => {
    const line = text.slice(0, pos).split('\n').length;
    throw new TopologyError(at(`line ${line}`), why, 'the store\'s topology XML: <nodes n="2"><node id="..." address="..." port="8112" apiport="8112" weight="32"/>...</nodes>');
  };
  let i = 0;
  const skip = (): void => {
    for (;;) {
      const ws = /\s*/y;
      ws.lastIndex = i;
      ws.exec(text);
      i = ws.lastIndex;
      if (text.startsWith('<?', i)) {
        const end = text.indexOf('?>', i);
        if (end < 0) fail(i, 'an unterminated <? ... ?> declaration');
        i = end + 2;
      } else if (text.startsWith('<!--', i)) {
        const end = text.indexOf('-->', i);
        if (end < 0) fail(i, 'an unterminated comment');
        i = end + 3;
      } else if (text.startsWith('<!', i)) {
        fail(i, 'DOCTYPE and CDATA are not part of a topology');
      } else {
        return;
      }
    }
  };
  const open = (): Element => {
    TAG.lastIndex = i;
    const m = TAG.exec(text);
    if (!m) return fail(i, `expected an element, found ${JSON.stringify(text.slice(i, i + 30))}`);
    i = TAG.lastIndex;
    return { name: m[1]!, attrs: readAttrs(m[2] ?? '', at(`<${m[1]}>`)), selfClosing: m[3] === '/' };
  };
  const close = (name: string): void => {
    const re = new RegExp(`</\\s*${name}\\s*>`, 'y');
    re.lastIndex = i;
    if (!re.test(text)) fail(i, `expected </${name}>`);
    i = re.lastIndex;
  };

  skip();
  const root = open();
  if (root.name !== 'nodes') fail(0, `the root element is <${root.name}>, not <nodes>`);
  const nodes: unknown[] = [];
  if (!root.selfClosing) {
    for (;;) {
      skip();
      if (text.startsWith('</', i)) {
        close('nodes');
        break;
      }
      if (i >= text.length) fail(i, 'the document ends inside <nodes>');
      const el = open();
      if (el.name !== 'node') fail(i, `<${el.name}> inside <nodes>: only <node> elements belong there`);
      if (!el.selfClosing) {
        skip();
        close('node');
      }
      nodes.push(el.attrs);
    }
  }
  skip();
  if (i < text.length) fail(i, 'text after </nodes>');
  const checked = nodes.map((n, k) => checkNode(n, at(`<node> ${k + 1}`), { lowerCaseIds: false }));
  // Newer stores name the copies write_copies; older ones n (the production client reads either).
  const copiesText = root.attrs.write_copies ?? root.attrs.n;
  if (copiesText === undefined || !/^\d{1,3}$/.test(copiesText.trim())) {
    throw new TopologyError(at('<nodes> n'), `${copiesText === undefined ? 'missing' : JSON.stringify(copiesText)} is not a number of copies`, 'n="2" (or write_copies="2")');
  }
  return checkTopology({ writeCopies: Number(copiesText.trim()), nodes: checked }, where);
}

function escapeAttr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/** The topology as the store's XML (no declaration, as the store sends it), with the copies under both names: older readers know `n`. */
export function topologyToXml(t: Topology): string {
  const lines = t.nodes.map(
    (n) => `  <node id="${escapeAttr(n.id)}" address="${escapeAttr(n.address)}" port="${n.port}" apiport="${n.apiport}" weight="${n.weight}"${n.side ? ` side="${n.side}"` : ''}/>`,
  );
  return `<nodes n="${t.writeCopies}" write_copies="${t.writeCopies}">\n${lines.join('\n')}\n</nodes>\n`;
}

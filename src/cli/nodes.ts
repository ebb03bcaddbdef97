import { closeSync, openSync, readSync } from 'node:fs';
import { DEFAULT_PORT } from '../protocol/index.js';
import { UsageError } from './errors.js';

export interface NodeList {
  /** Normalised base URLs: `http(s)://host:port[/prefix]`, no trailing slash. */
  nodes: string[];
  /** Where the list came from, for messages: `--nodes nodes.txt`, `TSNODE_NODES`, ... */
  source: string;
  warnings: string[];
}

export const NODE_LINE_FORMS = 'http(s)://host:port[/prefix], host:port, or host (port 8112)';

/** Node list files larger than this are refused (a list of 20,000 nodes is under 1 MiB); also stops `--nodes /dev/zero`. */
export const MAX_NODE_LIST_BYTES = 1024 * 1024;
/** One entry longer than this is not a node address (a URL with a path prefix fits many times). */
export const MAX_NODE_ENTRY_CHARS = 2048;
/** DNS: a host name has at most 253 characters. */
export const MAX_HOST_CHARS = 253;

/**
 * Quotes an entry for a message: credentials (`user:password@`, with or without a scheme) hidden,
 * and shortened, since a pasted blob must not flood the terminal.
 */
function show(text: string): string {
  const hidden = text.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^\s/?#]*@/i, (_m, scheme: string | undefined) => `${scheme ?? ''}[redacted]@`);
  return JSON.stringify(hidden.length > 80 ? `${hidden.slice(0, 77)}...` : hidden);
}

/** Parses one node entry into a normalised base URL; throws a plain Error with the reason. */
export function parseNodeEntry(entry: string): string {
  const text = entry.trim();
  if (text.length > MAX_NODE_ENTRY_CHARS) throw new Error(`${show(text)} is longer than ${MAX_NODE_ENTRY_CHARS} characters: not a node address`);
  // The URL parser reads `\` as `/` in http(s) URLs, which would let a port be read out of the path (found by fuzzing).
  if (text.includes('\\')) throw new Error(`${show(text)} contains a backslash`);
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  const portText = /^[a-z]+:\/\/(\[[^\]]+\]|[^/:]+):(\d+)(\/|$)/i.exec(withScheme)?.[2];
  if (portText !== undefined && Number(portText) > 65535) throw new Error(`${show(text)}: port ${portText} is out of range (1-65535)`);
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new Error(`${show(text)} is not a node address`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${show(text)}: only http and https nodes are supported`);
  if (!url.hostname) throw new Error(`${show(text)} has no host`);
  if (url.hostname.length > MAX_HOST_CHARS) throw new Error(`${show(text)}: the host name is ${url.hostname.length} characters long (at most ${MAX_HOST_CHARS})`);
  if (url.username || url.password) throw new Error(`${show(text)}: put credentials in --header, not in the node address`);
  if (url.search || url.hash) throw new Error(`${show(text)}: a node address has no query or fragment`);
  if (/\s/.test(text)) throw new Error(`${show(text)} contains spaces`);
  // An explicit port survives; otherwise the store's port, also for https (where the URL parser would drop it as default).
  const explicitPort = /^[a-z]+:\/\/(\[[^\]]+\]|[^/:]+):(\d+)/i.exec(withScheme)?.[2];
  const port = explicitPort ?? String(DEFAULT_PORT);
  if (Number(port) === 0) throw new Error(`${show(text)}: port 0 is not a node's port`);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.hostname}:${Number(port)}${path}`;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * What makes two node addresses the same node: host case, a trailing dot, the scheme and the
 * loopback spellings (`localhost`, `127.0.0.1`, `::1`) do not count; port and path prefix do.
 * Two DELETEs to one node would cancel each other, so a sweep must see one node once. (Node
 * identities from `GET /state` can refine this later, when nodes offer them.)
 */
export function sameNodeKey(url: string): string {
  const u = new URL(url);
  const host = u.hostname.toLowerCase().replace(/\.$/, '');
  const port = u.port || String(DEFAULT_PORT);
  return `${LOOPBACK.has(host) ? 'loopback' : host}:${port}${u.pathname.replace(/\/+$/, '')}`;
}

/** Parses a node list text (file or comma list), dropping duplicates with a warning. */
export function parseNodeList(text: string, source: string, opts: { separator: 'lines' | 'commas' }): NodeList {
  const nodes: string[] = [];
  const warnings: string[] = [];
  const seen = new Map<string, { at: number; node: string }>();
  // A byte-order mark (files saved by some Windows editors) is not part of the first node's address.
  const body = text.replace(/^\uFEFF/, '');
  const entries = opts.separator === 'lines' ? body.split(/\r?\n/) : body.split(',');
  entries.forEach((raw, i) => {
    const line = opts.separator === 'lines' ? raw.replace(/#.*$/, '').trim() : raw.trim();
    if (!line) return;
    const where = opts.separator === 'lines' ? `${source}:${i + 1}` : `${source} item ${i + 1}`;
    let node: string;
    try {
      node = parseNodeEntry(line);
    } catch (err) {
      throw new UsageError(`${where}: ${(err as Error).message}`, `each node is ${NODE_LINE_FORMS}`);
    }
    const key = sameNodeKey(node);
    const first = seen.get(key);
    if (first !== undefined) {
      const at = opts.separator === 'lines' ? `line ${first.at}` : `item ${first.at}`;
      warnings.push(
        first.node === node
          ? `${where}: ${node} is listed twice (first at ${at}); using it once`
          : `${where}: ${node} is the same node as ${first.node} (${at}) under another spelling; using it once, as ${first.node}`,
      );
      return;
    }
    seen.set(key, { at: i + 1, node });
    nodes.push(node);
  });
  if (nodes.length === 0) throw new UsageError(`${source} lists no nodes`, `list one node per line: ${NODE_LINE_FORMS}`);
  return { nodes, source, warnings };
}

export const DEFAULT_NODE = `http://127.0.0.1:${DEFAULT_PORT}`;

/**
 * A text file read up to `maxBytes`: a device or an endless pipe is refused, not read for ever.
 * Errors are node:fs's (with their `code`), plus `EFBIG` when the file holds more than `maxBytes`.
 */
export function readBoundedText(path: string, maxBytes: number): string {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(maxBytes + 1);
    let size = 0;
    while (size < buf.length) {
      const n = readSync(fd, buf, size, buf.length - size, null);
      if (n === 0) break;
      size += n;
    }
    if (size > maxBytes) throw Object.assign(new Error(`larger than ${maxBytes} bytes`), { code: 'EFBIG' });
    return buf.toString('utf8', 0, size);
  } finally {
    closeSync(fd);
  }
}

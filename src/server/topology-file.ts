/**
 * `tsnode serve --topology <file>`: the ring the node belongs to, as JSON
 * (`{"write_copies": 2, "nodes": [{"id", "address", "port", "apiport", "weight"}, ...]}`) or as
 * the store's topology XML (`<nodes n="2"><node .../>...</nodes>`). Errors name the file and the
 * field, and say what was expected.
 */
import { readFileSync, statSync } from 'node:fs';
import { TopologyError, topologyFromJson, topologyFromXml, type Topology } from '../ring/index.js';
import { ConfigError } from './errors.js';

/** A topology file larger than this is not a topology (a ring of thousands of nodes is a few hundred KiB). */
const MAX_TOPOLOGY_BYTES = 16 * 1024 * 1024;

const EXPECTED =
  'a JSON file {"write_copies": 2, "nodes": [{"id": "<uuid>", "address": "127.0.0.1", "port": 8112, "apiport": 8112, "weight": 32}, ...]} or the store\'s topology XML';

export function loadTopologyFile(path: string, shown: string = path): Topology {
  let text: string;
  try {
    if (statSync(path).size > MAX_TOPOLOGY_BYTES) throw new ConfigError('--topology', shown, EXPECTED, `is larger than ${MAX_TOPOLOGY_BYTES / 1024 / 1024} MiB`);
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? 'cannot be read (permission denied)'
          : code === 'EISDIR'
            ? 'is a directory'
            : `cannot be read (${(err as Error).message})`;
    throw new ConfigError('--topology', shown, EXPECTED, why);
  }
  const body = text.replace(/^\uFEFF/, '').trim();
  try {
    if (body.startsWith('<')) return topologyFromXml(body);
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch (err) {
      throw new ConfigError('--topology', shown, EXPECTED, `is neither JSON nor XML (${(err as Error).message})`);
    }
    return topologyFromJson(json);
  } catch (err) {
    if (err instanceof TopologyError) throw new ConfigError('--topology', shown, err.expected, `is not a valid topology: ${err.message}`);
    throw err;
  }
}

/**
 * Who the node is in a ring: its identity (a UUID, as the store's nodes have), the topology it was
 * started with, and its software version.
 *
 * The identity is kept in the data dir (`node-id`), written once when the dir is first used: a
 * node's data belongs to that node, so a later `--node-id` that names another node is refused
 * rather than silently taking the data over. An in-memory node has no dir: it gets a fresh
 * identity per process unless `--node-id` names one.
 */
import { IdentityError } from './errors.js';
import { randomUUID } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { UUID_RE } from '../protocol/index.js';
import { Ring, topologyHash, type Topology } from '../ring/index.js';

export const NODE_ID_FILE = 'node-id';

/** tsnode's version, reported as the node's `version` / `semver` (from src/ and dist/ alike). */
export const NODE_VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/** How the node came by its identity. */
export type IdentityOrigin = 'flag' | 'data dir' | 'new' | 'memory';

export interface NodeIdentity {
  /** The node's UUID, lower case. */
  id: string;
  origin: IdentityOrigin;
  /** The compiled ring when the node was started with a topology. */
  ring: Ring | null;
  /** The topology hash (`current`), or "-" without a topology. */
  current: string;
}

/** The identity kept in a data dir, or undefined when none was kept yet (or the dir is not a dir). */
export function readStoredNodeId(dataDir: string): string | undefined {
  const file = join(dataDir, NODE_ID_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new IdentityError('bad_identity_file', `cannot read the node identity ${file}: ${(err as Error).message}`);
  }
  const id = text.trim();
  if (!UUID_RE.test(id)) {
    throw new IdentityError(
      'bad_identity_file',
      `${file} does not hold a node identity (a UUID): ${JSON.stringify(id.slice(0, 60))}; restore it, or remove it to give the node a new identity`,
    );
  }
  return id.toLowerCase();
}

function keep(dataDir: string, id: string): void {
  const file = join(dataDir, NODE_ID_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${id}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

/**
 * Settles the node's identity and checks it against the topology. Call once the data dir is
 * locked by this process (the store opened), so two nodes cannot both write the identity.
 */
export function settleIdentity(opts: { nodeId: string | null; dataDir: string | null; topology: Topology | null; topologySource?: string }): NodeIdentity {
  const flag = opts.nodeId?.toLowerCase() ?? null;
  const stored = opts.dataDir === null ? undefined : readStoredNodeId(opts.dataDir);
  if (stored !== undefined && flag !== null && stored !== flag) {
    throw new IdentityError(
      'identity_mismatch',
      `--node-id ${flag}, but the data dir ${opts.dataDir} belongs to node ${stored} (its ${NODE_ID_FILE} file); a data dir keeps the identity it was first used with: pass --node-id ${stored}, or use another --data-dir`,
    );
  }
  const id = stored ?? flag ?? randomUUID();
  const origin: IdentityOrigin = flag !== null ? 'flag' : stored !== undefined ? 'data dir' : opts.dataDir === null ? 'memory' : 'new';
  // Checked before anything is kept: a refused start must not tie the dir to an identity the user never chose.
  if (opts.topology !== null && !opts.topology.nodes.some((n) => n.id.toLowerCase() === id)) {
    const where = opts.topologySource ? ` from ${opts.topologySource}` : '';
    const hint = stored === undefined && flag === null ? " (it has no identity of its own yet: pass the topology entry's id with --node-id)" : '';
    throw new IdentityError('not_in_topology', `this node (${id})${hint} is not in the topology${where}, whose nodes are ${opts.topology.nodes.map((n) => n.id).join(', ')}`);
  }
  if (opts.dataDir !== null && stored === undefined) keep(opts.dataDir, id);
  if (opts.topology === null) return { id, origin, ring: null, current: '-' };
  const ring = Ring.compile(opts.topology);
  return { id, origin, ring, current: topologyHash(opts.topology) };
}

/** A local cluster started as one ring: a topology naming every node, identities kept across restarts. */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { checkTopology, TopologyError, type Topology } from '../../ring/index.js';
import { readStoredNodeId } from '../../server/identity.js';
import { reachableAddress } from './ports.js';
import { ClusterError } from './state.js';

/** Ring slots per node in a local ring: enough for an even spread over a handful of nodes. */
export const LOCAL_RING_WEIGHT = 64;

/** The ring topology of a local cluster: one node per port, identities kept from earlier runs. */
export function localRing(opts: { dir: string; host: string; ports: readonly number[]; writeCopies: number; weight?: number }): Topology {
  const address = reachableAddress(opts.host);
  const nodes = opts.ports.map((port, i) => {
    const dataDir = join(opts.dir, `node-${i + 1}`);
    let id: string | undefined;
    try {
      id = readStoredNodeId(dataDir);
    } catch (err) {
      throw new ClusterError('node_start_failed', `node ${i + 1}: ${(err as Error).message}`);
    }
    return { id: id ?? randomUUID(), address, port, apiport: port, weight: opts.weight ?? LOCAL_RING_WEIGHT };
  });
  try {
    return checkTopology({ writeCopies: opts.writeCopies, nodes });
  } catch (err) {
    // Kept: the local cluster's own code (bad_ring): the ring it was asked to build, not one it read.
    if (err instanceof TopologyError) throw new ClusterError('bad_ring', err.message);
    throw err;
  }
}

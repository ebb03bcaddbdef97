/**
 * tsnode's own replication endpoints (the store has none of these; see docs/node-api.md):
 *
 * - `GET /replication/json`: per peer, what this node's journal still holds for it, and what the
 *   node received from clients and from its peers' replay.
 * - `POST|PUT /replication/pause/<peer id>`, `/replication/resume/<peer id>`: stop and restart
 *   replay towards a peer (the journal keeps growing while paused). The pause is kept in the peer's
 *   journal directory, so a restarted node stays paused until resumed.
 */
import { ProtocolError } from '../../protocol/index.js';
import { decodePathPart, sendJson } from '../http.js';
import { isDiskFull } from '../storage/disk-full.js';
import type { Handler, NodeContext } from './context.js';

function replicationOf(node: NodeContext): NonNullable<NodeContext['replication']> {
  if (!node.replication) {
    throw new ProtocolError(404, 'not_found', 'this node does not replicate: it runs without a topology of several nodes, or with --no-replication', {
      hint: 'start the node with `tsnode serve --topology <file>` (tsnode cluster up does)',
    });
  }
  return node.replication;
}

/** GET /replication/json */
export const replicationJson: Handler = (_req, res, _target, node) => {
  sendJson(res, 200, JSON.stringify(replicationOf(node).status()));
};

function setPaused(paused: boolean): Handler {
  return (_req, res, target, node) => {
    const repl = replicationOf(node);
    const id = decodePathPart(target.segments[2]!, 'peer').toLowerCase();
    let known: boolean;
    try {
      known = repl.setPaused(id, paused);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new ProtocolError(
        isDiskFull(err) ? 507 : 500,
        isDiskFull(err) ? 'disk_full' : 'internal',
        `cannot record the ${paused ? 'pause' : 'resume'} in the journal directory (${why}); replication towards ${id.slice(0, 80)} is unchanged`,
      );
    }
    if (!known) {
      throw new ProtocolError(404, 'not_found', `no peer ${JSON.stringify(id.slice(0, 80))} on this node; its peers are ${[...repl.peers.keys()].join(', ')}`, {
        field: 'peer',
        peers: [...repl.peers.keys()],
      });
    }
    const peer = repl.status().peers.find((p) => p.id === id)!;
    sendJson(res, 200, JSON.stringify(peer));
  };
}

export const replicationPause = setPaused(true);
export const replicationResume = setPaused(false);

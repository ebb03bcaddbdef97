import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerConfig } from '../config.js';
import type { NodeIdentity } from '../identity.js';
import type { Store } from '../store.js';
import type { Sweeper } from '../sweeper.js';
import type { LateData } from '../replication/late-data.js';
import type { Replication } from '../replication/replication.js';
import type { RequestTarget } from '../http.js';

/** What every route handler gets: the node's parts and the parsed request target. */
export interface NodeContext {
  config: ServerConfig;
  store: Store;
  sweeper: Sweeper;
  /** Who the node is in its ring: identity, topology, version. */
  identity: NodeIdentity;
  /** A ring node's replication (journals, replayers, gossip); null on a node without peers or with it turned off. */
  replication: Replication | null;
  /** Records that landed below the last sweep's cut-off since it began (sweep status `last_late_*`). */
  late: LateData;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, target: RequestTarget, node: NodeContext) => void | Promise<void>;

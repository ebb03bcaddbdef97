import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerConfig } from '../config.js';
import type { NodeIdentity } from '../identity.js';
import type { Store } from '../store.js';
import type { Sweeper } from '../sweeper.js';
import type { Target } from '../http.js';

/** What every route handler gets: the node's parts and the parsed request target. */
export interface NodeContext {
  config: ServerConfig;
  store: Store;
  sweeper: Sweeper;
  /** Who the node is in its ring: identity, topology, version. */
  identity: NodeIdentity;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, target: Target, node: NodeContext) => void | Promise<void>;

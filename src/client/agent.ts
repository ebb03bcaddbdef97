import { Agent, type Dispatcher } from 'undici';

export interface AgentOptions {
  /** TCP (and TLS) connect timeout. */
  connectTimeoutMs?: number;
  /** Sockets kept per node; several batches in flight need several. */
  connectionsPerNode?: number;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 3_000;

/** The one dispatcher of a run. The caller owns it and closes it in `finally`. */
export function createAgent(opts: AgentOptions = {}): Dispatcher {
  return new Agent({
    connect: { timeout: opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS },
    connections: opts.connectionsPerNode ?? 16,
    keepAliveTimeout: 10_000,
  });
}

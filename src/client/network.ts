/**
 * One dispatcher for a run and the NodeClients that share it, from settings already resolved (the
 * CLI resolves them from its flags and target in cli/network.ts; the run core opens them when it
 * connects to a target itself). Close it in `finally`.
 */
import type { Dispatcher } from 'undici';
import type { HeaderPrefix } from '../protocol/index.js';
import { createAgent, type ProxySettings, type TlsOptions } from './agent.js';
import { discoverRing, type DiscoveredRing } from './discovery.js';
import { timeLimitSignal, type NodeRequestError } from './errors.js';
import { redactHeaders } from './headers.js';
import type { RequestLogEntry, WaitingNotice } from './http.js';
import { NodeClient } from './node-client.js';
import type { RetryPolicy } from './retry.js';

export interface Network {
  dispatcher: Dispatcher;
  client(url: string): NodeClient;
  close(): Promise<void>;
  /**
   * The run's signal: Ctrl-C, and `--deadline` when given. Every NodeClient made here is bounded
   * by it already; commands may also use it for their own waits (polling).
   */
  signal: AbortSignal;
  /** The extra headers sent with every request, secrets redacted (for --dry-run and JSON summaries). */
  headers: Record<string, string>;
}

/** What a network is opened with: every value resolved, every hook given. */
export interface NetworkSettings {
  connectTimeoutMs: number;
  totalMs: number;
  headersMs: number;
  retry: RetryPolicy;
  /** The run's own signal (Ctrl-C). */
  signal: AbortSignal;
  /** An overall limit from when the network opens, named in its error as `limitName` (`--deadline`). */
  deadline?: { ms: number; limitName: string };
  headers: Record<string, string>;
  redact: string[];
  maxAnswerBytes?: number;
  tls?: TlsOptions;
  proxy?: ProxySettings;
  headerPrefix?: HeaderPrefix;
  connectionsPerNode?: number;
  onRequest?: (e: RequestLogEntry) => void;
  onWaiting?: (w: WaitingNotice) => void;
  onRetry?: (err: NodeRequestError, attempt: number, delayMs: number) => void;
}

/** Opens the run's dispatcher and a factory of NodeClients sharing it. */
export function openNodeNetwork(s: NetworkSettings): Network {
  const signal = s.deadline === undefined ? s.signal : AbortSignal.any([s.signal, timeLimitSignal(s.deadline.ms, 'the overall deadline of the command', s.deadline.limitName)]);
  const dispatcher = createAgent({
    connectTimeoutMs: s.connectTimeoutMs,
    ...(s.connectionsPerNode ? { connectionsPerNode: s.connectionsPerNode } : {}),
    ...(s.tls ? { tls: s.tls } : {}),
    ...(s.proxy ? { proxy: s.proxy } : {}),
  });
  const { headers, redact, maxAnswerBytes, totalMs, headersMs, retry, headerPrefix, onRequest, onWaiting, onRetry } = s;
  return {
    dispatcher,
    signal,
    headers: redactHeaders(headers, redact),
    client: (url) =>
      new NodeClient(url, {
        dispatcher,
        retry,
        signal,
        timeouts: { totalMs, headersMs, bodyMs: Math.min(totalMs, 30_000) },
        ...(maxAnswerBytes !== undefined ? { maxAnswerBytes } : {}),
        ...(Object.keys(headers).length ? { headers } : {}),
        ...(redact.length ? { redact } : {}),
        ...(onRequest ? { onRequest } : {}),
        ...(onWaiting ? { onWaiting } : {}),
        ...(headerPrefix ? { headerPrefix } : {}),
        ...(onRetry ? { onRetry } : {}),
      }),
    close: () => dispatcher.close(),
  };
}

/** Where a run's nodes come from: a list, or a seed whose ring is discovered (GET only). */
export type NodeSource = { kind: 'list'; nodes: readonly string[] } | { kind: 'seed'; seed: string };

/** An open network and the nodes it reaches (with the ring, when they came from a seed). */
export interface Connected {
  network: Network;
  nodes: string[];
  ring: DiscoveredRing | undefined;
}

/**
 * Opens the network and finds the nodes: a list as it is, a seed's ring by discovery. A seed that
 * cannot be read throws (DiscoveryError, or the request's error) with the network closed.
 */
export async function connectNodes(source: NodeSource, settings: NetworkSettings): Promise<Connected> {
  const network = openNodeNetwork(settings);
  if (source.kind === 'list') return { network, nodes: [...source.nodes], ring: undefined };
  try {
    const ring = await discoverRing(network.client(source.seed), { signal: network.signal });
    return { network, nodes: ring.nodes.map((n) => n.url), ring };
  } catch (err) {
    await network.close();
    throw err;
  }
}

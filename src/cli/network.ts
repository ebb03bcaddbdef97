import type { Dispatcher } from 'undici';
import { createAgent } from '../client/agent.js';
import { NodeClient } from '../client/node-client.js';
import { DEFAULT_RETRY, type RetryPolicy } from '../client/retry.js';
import type { HeaderPrefix } from '../protocol/index.js';
import type { CliContext } from './context.js';
import { UsageError } from './errors.js';
import type { NetworkFlags } from './network-options.js';
import { parseDuration } from './time.js';

export interface Network {
  dispatcher: Dispatcher;
  client(url: string): NodeClient;
  close(): Promise<void>;
}

export function parseCount(text: string, field: string, min = 0): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < min) {
    throw new UsageError(`${field}: ${JSON.stringify(text)} is not a whole number >= ${min}`);
  }
  return Number(text);
}

/** One dispatcher for the run and a factory of NodeClients sharing it; close it in `finally`. */
export function openNetwork(
  flags: NetworkFlags,
  ctx: CliContext,
  opts: { headerPrefix?: HeaderPrefix; connectionsPerNode?: number; retry?: Partial<RetryPolicy> } = {},
): Network {
  const connectTimeoutMs = parseDuration(flags.connectTimeout, '--connect-timeout');
  const totalMs = parseDuration(flags.requestTimeout, '--request-timeout');
  const retries = parseCount(flags.retries, '--retries');
  const dispatcher = createAgent({ connectTimeoutMs, ...(opts.connectionsPerNode ? { connectionsPerNode: opts.connectionsPerNode } : {}) });
  const retry: RetryPolicy = { ...DEFAULT_RETRY, ...opts.retry, retries };
  return {
    dispatcher,
    client: (url) =>
      new NodeClient(url, {
        dispatcher,
        retry,
        timeouts: { totalMs, headersMs: Math.min(totalMs, 10_000), bodyMs: Math.min(totalMs, 30_000) },
        ...(opts.headerPrefix ? { headerPrefix: opts.headerPrefix } : {}),
        onRetry: (err, attempt, delay) => ctx.log.debug(`retry ${attempt} after ${delay} ms: ${err.message}`),
      }),
    close: () => dispatcher.close(),
  };
}

import type { NodeClient } from './node-client.js';
import { forEachBounded } from './concurrency.js';
import { NodeRequestError } from './errors.js';

/** What happened on one node: exactly one per node, in node-list order. */
export type Outcome<T> = { node: string; ok: true; value: T; ms: number } | { node: string; ok: false; error: NodeRequestError; ms: number };

/**
 * Runs `fn` on every node with at most `concurrency` in flight. Each node's call goes to that
 * node only; a failure is that node's outcome, never a reason to try another node.
 */
export async function fanOut<T>(
  clients: readonly NodeClient[],
  fn: (client: NodeClient, index: number) => Promise<T>,
  opts: { concurrency?: number; now?: () => number } = {},
): Promise<Outcome<T>[]> {
  const now = opts.now ?? Date.now;
  const outcomes = new Array<Outcome<T>>(clients.length);
  await forEachBounded(clients.length, opts.concurrency ?? 32, async (i) => {
    const client = clients[i]!;
    const started = now();
    try {
      const value = await fn(client, i);
      outcomes[i] = { node: client.url, ok: true, value, ms: now() - started };
    } catch (err) {
      const error =
        err instanceof NodeRequestError ? err : new NodeRequestError(client.url, 'bad_answer', err instanceof Error ? err.message : String(err), { retryable: false, cause: err });
      outcomes[i] = { node: client.url, ok: false, error, ms: now() - started };
    }
  });
  return outcomes;
}

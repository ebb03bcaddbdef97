/**
 * `--seed <url>` for every command that takes nodes, resolved before the command runs: the ring
 * is discovered from the seed and the command gets its nodes as if they had been listed with
 * --nodes. stderr says where the nodes came from. A seed that cannot be read is an error (exit 2
 * when it answers without a ring, 1 when it cannot be reached); never a silent fallback to
 * another node source.
 */
import { discoverRing, DiscoveryError, type DiscoveredRing } from '../client/discovery.js';
import { NodeRequestError } from '../client/errors.js';
import type { CliContext } from './context.js';
import { UsageError } from './errors.js';
import type { NetworkFlags } from './network-options.js';
import { openNetwork } from './network.js';
import { resolveSeed } from './nodes.js';

/**
 * Whether a command's options carry a --seed to resolve: only a command that talks to nodes (it
 * has the network flags) uses one as its node source; `profile set --seed` stores it as text.
 */
export function hasSeed(opts: unknown): opts is NetworkFlags & { seed: string; node?: string } {
  if (typeof opts !== 'object' || opts === null) return false;
  const o = opts as { seed?: unknown; connectTimeout?: unknown };
  return typeof o.seed === 'string' && typeof o.connectTimeout === 'string';
}

/** The ring each command's options were seeded with (see seededRing). */
const seeded = new WeakMap<object, DiscoveredRing>();

/**
 * The ring applySeed discovered for these options, if any: a command that routes by the ring
 * (write and read to a metric's owners) takes it from here rather than asking again.
 */
export function seededRing(opts: object): DiscoveredRing | undefined {
  return seeded.get(opts);
}

/** Discovers the ring from `opts.seed` and puts its nodes in `opts.nodes`; returns the ring (also left for seededRing). */
export async function applySeed(opts: NetworkFlags & { seed: string; node?: string }, ctx: CliContext): Promise<DiscoveredRing> {
  const net = openNetwork(opts, ctx);
  let found;
  try {
    found = await resolveSeed(opts, (url) => discoverRing(net.client(url), { signal: net.signal }));
  } catch (err) {
    if (err instanceof DiscoveryError) throw new UsageError(`--seed: ${err.message}`, err.hint);
    // Say which flag led there: the command has not started, and no other node source is tried.
    if (err instanceof NodeRequestError && err.code !== 'aborted') {
      throw new NodeRequestError(err.node, err.code, `cannot read the ring from this --seed: ${err.detail}`, {
        retryable: false,
        hint: err.hint ?? 'is the seed a running node of the ring?',
        cause: err,
      });
    }
    throw err;
  } finally {
    await net.close();
  }
  const ring = found.ring;
  ctx.log.info(`nodes: ${found.nodes.length} from ${found.source}`);
  if (!ring.verified) {
    ctx.log.warn(`the topology from ${ring.seed.url} hashes to ${ring.computedHash} here, not to the ${ring.hash} it announces: metric owners computed by tsnode may differ from the store's`);
  }
  if (ring.next !== null) ctx.log.warn(`the ring is rebalancing to topology ${ring.next}: data is moving between nodes`);
  opts.nodes = found.nodes.join(',');
  seeded.set(opts, ring);
  return ring;
}

/**
 * Where a command's nodes come from, and the network to reach them: the one call an action makes
 * once its own flags are checked.
 *
 *   const run = await openTarget(opts, ctx, { command: 'tsnode status' });
 *   try { ... run.nodes, run.network.client(url) ... } finally { await run.network.close(); }
 *
 * openTarget reads the config file, resolves the target (config/target.ts: --nodes | --seed >
 * --profile > TSNODE_NODES > TSNODE_PROFILE > current > ./nodes.txt > the local node; settings
 * flag > environment > profile > default), opens the network with the target's headers, TLS and
 * header prefix, discovers the ring when the nodes come from a seed (--seed or a profile's
 * `seed:`), and says on stderr where the nodes came from. Nothing is sent before the action has
 * validated its own flags, because the action calls this after doing so.
 */
import { resolve } from 'node:path';
import { DiscoveryError, type DiscoveredRing } from '../client/discovery.js';
import { connectNodes, type Connected } from '../client/network.js';
import { NodeHttpError, NodeRequestError } from '../client/errors.js';
import { loadConfig } from './config/load.js';
import { realFs, resolveTarget, type ResolvedTarget, type TargetFlags } from './config/target.js';
import type { CliContext } from './context.js';
import { UsageError } from './errors.js';
import type { NetworkValues } from './network-options.js';
import { networkSettings, type Network, type NetworkOptions } from './network.js';
import { NODE_LINE_FORMS, parseNodeEntry } from './nodes.js';

/** The flags a command on the flag tables hands to openTarget: networkFlags() and, where it has them, the span and prefix settings. */
export type TargetValues = NetworkValues & Pick<TargetFlags, 'headerPrefix' | 'smallestSpan' | 'nntRollups' | 'histogramRollups'>;

export interface TargetRun {
  target: ResolvedTarget;
  /** The nodes to act on: the list, or every node of the ring discovered from the seed. */
  nodes: string[];
  /** The ring, when the nodes came from a seed. */
  ring?: DiscoveredRing;
  network: Network;
  /** `nodes: profile prod, 6 nodes`, as printed on stderr: for a confirmation prompt or a journal. */
  described: string;
}

export interface OpenTargetOptions extends NetworkOptions {
  /** For messages: `tsnode sweep`. */
  command: string;
  /** sweep, sweep cancel, retention apply: no ./nodes.txt or default-node fallback (exit 2 instead). */
  destructive?: boolean;
  /**
   * A command's `--node <url>` (write, read): that one node is the node list, named by the flag,
   * ahead of every other source as `--nodes` is; a profile's settings (TLS, headers, prefix) still
   * apply when `--profile`/`TSNODE_PROFILE` names one. With `--nodes` or `--seed` it is a usage error.
   */
  node?: string;
}

/** Resolves the target of a command on the flag tables, opens its network and discovers a seed's ring. */
export async function openTarget(values: TargetValues, ctx: CliContext, opts: OpenTargetOptions): Promise<TargetRun> {
  return connectTarget(resolveCommandTarget(values, ctx, opts), values, ctx, opts);
}

/**
 * The first half of openTarget, which sends nothing: reads the config file and resolves the
 * target (warnings on stderr). A command that must refuse before anything is sent, knowing where
 * its nodes would come from (sweep without --yes off a terminal), calls this, then connectTarget.
 */
export function resolveCommandTarget(values: TargetValues, ctx: CliContext, opts: Pick<OpenTargetOptions, 'command' | 'destructive' | 'node'>): ResolvedTarget {
  const node = opts.node === undefined ? undefined : singleNode(opts.node, values);
  const loaded = loadConfig({ env: ctx.env, cwd: ctx.cwd });
  for (const w of loaded.warnings) ctx.log.warn(w);
  const resolved = resolveTarget({
    flags: {
      profile: ctx.profile,
      // --node is a node list of one, given by a flag: resolved as --nodes would be (so `current`
      // lends it no credentials), then named as itself. The value is a normalised URL, never read as a file.
      nodes: node ?? values.nodes,
      seed: values.seed,
      cacert: values.cacert,
      cert: values.cert,
      key: values.key,
      header: values.header,
      headerPrefix: values.headerPrefix,
      smallestSpan: values.smallestSpan,
      nntRollups: values.nntRollups,
      histogramRollups: values.histogramRollups,
    },
    env: ctx.env,
    config: loaded.config,
    cwd: ctx.cwd,
    home: loaded.home,
    command: opts.command,
    ...(opts.destructive ? { destructive: true } : {}),
    ...(node !== undefined ? { fs: { ...realFs, exists: (p: string) => p !== resolve(ctx.cwd, node) && realFs.exists(p) } } : {}),
  });
  const target: ResolvedTarget = node === undefined ? resolved : { ...resolved, origin: `--node ${node}`, describe: () => `nodes: --node ${node}, 1 node` };
  for (const w of target.warnings) ctx.log.warn(w);
  return target;
}

/** The second half of openTarget: opens the network with the target's settings, discovers a seed's ring, says where the nodes came from. */
export async function connectTarget(target: ResolvedTarget, values: NetworkValues, ctx: CliContext, opts: NetworkOptions = {}): Promise<TargetRun> {
  let connected: Connected;
  try {
    connected = await connectNodes(target.source, networkSettings({ values, target }, ctx, opts));
  } catch (err) {
    throw connectError(err, target);
  }
  const { network, nodes, ring } = connected;
  const described = describeNodes(target, ring);
  ctx.log.info(described);
  if (ring) warnAboutRing(ring, ctx);
  return { target, nodes, ...(ring ? { ring } : {}), network, described };
}

/** `--node <url>` as a normalised URL; usage errors for a bad address or another node source beside it. */
function singleNode(text: string, values: Pick<TargetValues, 'nodes' | 'seed'>): string {
  if (values.nodes !== undefined) throw new UsageError('--node and --nodes both name the nodes', 'use --node for one node or --nodes for a list, not both');
  if (values.seed !== undefined) throw new UsageError('--node and --seed both name the nodes', 'use --node for exactly one node, or --seed to discover the ring from it');
  try {
    return parseNodeEntry(text);
  } catch (err) {
    throw new UsageError(`--node: ${(err as Error).message}`, `a node is ${NODE_LINE_FORMS}`);
  }
}

/** How a seed is named in errors: `--seed`, or `profile lab (seed http://...)`. */
function seedLabel(target: ResolvedTarget): string {
  return target.layer === 'flag' ? '--seed' : target.origin;
}

/** `nodes: profile prod, 6 nodes (topology 699a1e0b7b27, write_copies 2)`: where the nodes came from, as said on stderr. */
export function describeNodes(target: ResolvedTarget, ring: DiscoveredRing | undefined): string {
  return ring ? target.describe(ring.nodes.length, ringDetail(ring)) : target.describe();
}

/** What stopped a seed's ring from being read, as the CLI says it (a seed's own words, or the error as it is). */
export function connectError(err: unknown, target: ResolvedTarget): unknown {
  return target.source.kind === 'seed' ? seedError(err, seedLabel(target)) : err;
}

/** `topology 699a1e0b7b27, write_copies 2`. */
function ringDetail(ring: DiscoveredRing): string {
  return `topology ${ring.hash.slice(0, 12)}, write_copies ${ring.topology.writeCopies}`;
}

export function warnAboutRing(ring: DiscoveredRing, ctx: CliContext): void {
  if (!ring.verified) {
    ctx.log.warn(
      `the topology from ${ring.seed.url} hashes to ${ring.computedHash} here, not to the ${ring.hash} it announces: metric owners computed by tsnode may differ from the store's`,
    );
  }
  if (ring.next !== null) ctx.log.warn(`the ring is rebalancing to topology ${ring.next}: data is moving between nodes`);
}

/** For a 401/403: the token and headers, not "is it running?" (it answered). */
export function authHint(err: NodeRequestError): string | undefined {
  if (!(err instanceof NodeHttpError) || (err.status !== 401 && err.status !== 403)) return undefined;
  return `the node refused the request (HTTP ${err.status}): check the token and headers sent (--header 'Authorization: Bearer \${TOKEN}', or the profile's headers, whose \${VAR} must be set to the right value)`;
}

/**
 * Why a seed's ring could not be read, as a usage error naming where the seed came from (exit 2);
 * so is a seed that cannot be reached or refuses us (nothing was sent yet); never a fallback to
 * another node source. Other errors (an interruption) as they are.
 */
function seedError(err: unknown, label: string): unknown {
  // Kept: only this caller knows where the seed came from (the label), which the message names.
  if (err instanceof DiscoveryError) return new UsageError(`${label}: ${err.message}`, err.hint);
  // Say which setting led there: the command has not started, and no other node source is tried.
  // Nothing was sent to the ring yet: exit 2, as for any other unusable node source.
  if (err instanceof NodeRequestError && err.code !== 'aborted') {
    return new UsageError(`cannot read the ring from this ${label}: ${err.detail} (nothing was sent)`, authHint(err) ?? err.hint ?? 'is the seed a running node of the ring?');
  }
  return err;
}

import { Command } from 'commander';
import { emptyConfig } from '../../src/cli/config/file.js';
import { resolveTarget } from '../../src/cli/config/target.js';
import type { CliContext } from '../../src/cli/context.js';
import { addFlags } from '../../src/cli/flags.js';
import { openNetwork, type Network, type NetworkOptions } from '../../src/cli/network.js';
import { networkFlags, type NetworkValues } from '../../src/cli/network-options.js';
import { resolveCommandTarget } from '../../src/cli/node-source.js';

/** The network flags as a command reads them: `args` parsed by the one flag table (networkFlags()). */
export function parseNetworkArgs(args: readonly string[]): NetworkValues {
  const cmd = addFlags(new Command('test').exitOverride().configureOutput({ writeErr: () => {} }), networkFlags());
  cmd.parse([...args], { from: 'user' });
  return cmd.opts<NetworkValues>();
}

/**
 * Opens the network exactly as a command does: flags through the flag table, the target resolved
 * (profile, TSNODE_HEADERS, TLS files), then openNetwork. `args` needs a node source (`--nodes`).
 */
export function openNetworkFromArgs(args: readonly string[], ctx: CliContext, opts: NetworkOptions = {}): Network {
  const values = parseNetworkArgs(args);
  const target = resolveCommandTarget(values, ctx, { command: 'tsnode test' });
  return openNetwork({ values, target }, ctx, opts);
}

/** The request headers a command would send for these `--header` lines and environment (no profile). */
export function headersFor(headerLines: readonly string[], env: NodeJS.ProcessEnv): Record<string, string> {
  const config = emptyConfig('/nonexistent/config.yaml');
  return resolveTarget({ flags: { nodes: 'http://127.0.0.1:1', header: [...headerLines] }, env, config, cwd: '/', home: '/nonexistent' }).headers;
}

/** The node list a read-only command would use for `--nodes <flag>` (or none) in `cwd`, as the target resolves it. */
export function nodesFor(opts: { flag?: string; env: NodeJS.ProcessEnv; cwd: string }): { nodes: string[]; source: string } {
  const config = emptyConfig('/nonexistent/config.yaml');
  const t = resolveTarget({ flags: opts.flag === undefined ? {} : { nodes: opts.flag }, env: opts.env, config, cwd: opts.cwd, home: '/nonexistent' });
  if (t.source.kind !== 'list') throw new Error('expected a node list');
  return { nodes: t.source.nodes, source: t.origin };
}

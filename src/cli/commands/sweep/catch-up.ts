/**
 * The command that repeats a sweep on the nodes where it is not known to be done: same delete
 * time (the resolved epoch, not the age that was typed), same types, spans and header prefix, and
 * the flags that reach those nodes. Header values are never printed (they may be credentials):
 * the flags that carried them are named instead, for the operator to add back.
 */
import { resolve } from 'node:path';
import { DEFAULT_HEADER_PREFIX, type HeaderPrefix, type SweepRequest } from '../../../protocol/index.js';
import type { NetworkFlags } from '../../network-options.js';

export interface CatchUp {
  /** The nodes to repeat the sweep on. */
  nodes: string[];
  /** The command line, ready to paste. */
  command: string;
  /** Flags given to the run whose values are not shown (to add back by hand). */
  addBack: string[];
}

/** What of a run's own flags a catch-up carries: `carry` goes into the command, `addBack` is only named. */
export interface CarriedFlags {
  carry: string[];
  addBack: string[];
}

/** Quotes one word for a POSIX shell, only when it needs it. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The run's network flags that a catch-up needs to reach the same nodes the same way: TLS files
 * (as absolute paths, so the command works from any directory), --insecure, --redact names.
 * --header values and TSNODE_HEADERS are named, never copied.
 */
export function carriedFlags(flags: NetworkFlags, env: NodeJS.ProcessEnv, cwd: string): CarriedFlags {
  const carry: string[] = [];
  if (flags.cacert !== undefined) carry.push('--cacert', resolve(cwd, flags.cacert));
  if (flags.cert !== undefined) carry.push('--cert', resolve(cwd, flags.cert));
  if (flags.key !== undefined) carry.push('--key', resolve(cwd, flags.key));
  if (flags.insecure) carry.push('--insecure');
  for (const name of flags.redact ?? []) carry.push('--redact', name);
  const addBack: string[] = [];
  const headers = flags.header?.length ?? 0;
  if (headers) addBack.push(`--header (${headers} given; values not shown)`);
  if (env.TSNODE_HEADERS) addBack.push('TSNODE_HEADERS (read from the environment again when set)');
  return { carry, addBack };
}

/** The catch-up for `nodes`, or undefined when there is nothing to catch up. */
export function catchUpFor(
  request: SweepRequest,
  headerPrefix: HeaderPrefix | string,
  nodes: readonly string[],
  flags: CarriedFlags = { carry: [], addBack: [] },
): CatchUp | undefined {
  if (nodes.length === 0) return undefined;
  const args = ['tsnode', 'sweep', '--before', String(request.before), '--types', request.types.join(',')];
  if (request.nntRollups?.length && request.types.includes('nnt')) args.push('--nnt-rollups', request.nntRollups.join(','));
  if (request.histogramRollups?.length && request.types.includes('histogram')) args.push('--histogram-rollups', request.histogramRollups.join(','));
  if (headerPrefix !== DEFAULT_HEADER_PREFIX) args.push('--header-prefix', headerPrefix);
  args.push('--nodes', nodes.join(','), ...flags.carry);
  return { nodes: [...nodes], command: args.map(shellQuote).join(' '), addBack: [...flags.addBack] };
}

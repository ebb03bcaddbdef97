/**
 * The command that repeats a sweep on the nodes where it is not known to be done: same delete
 * time (the resolved epoch, not the age that was typed), same types, spans and header prefix, and
 * the flags that reach those nodes. Header values are never printed (they may be credentials):
 * the flags that carried them are named instead, for the operator to add back.
 */
import { resolve } from 'node:path';
import { DEFAULT_HEADER_PREFIX, type SweepRequest } from '../protocol/index.js';

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

/** The flags of a run that reach its nodes the same way (networkFlags() values, or the older string flags). */
export interface ReachFlags {
  cacert?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
  insecure?: boolean | undefined;
  redact?: readonly string[] | undefined;
  header?: readonly string[] | undefined;
}

/** What else a catch-up needs to land where the run did: the profile its settings came from, its journal. */
export interface CarryContext {
  /** The profile whose settings (headers, TLS, header prefix) the run used: named, so the catch-up uses them too. */
  profile?: string | undefined;
  /** `--journal` as given (made absolute): the catch-up lands in the same journal, so history sees it. */
  journal?: string | undefined;
  /** The run had `--yes`: so does its catch-up, which then runs as printed where the run did (a script, no terminal). */
  yes?: boolean | undefined;
}

/**
 * The run's flags that a catch-up needs to reach the same nodes the same way: `--profile` when the
 * settings came from one (its headers are read again from the config file, never printed), TLS
 * files given as flags (as absolute paths, so the command works from any directory), --insecure,
 * --redact names, --journal. --header values and TSNODE_HEADERS are named, never copied.
 */
export function carriedFlags(flags: ReachFlags, env: NodeJS.ProcessEnv, cwd: string, extra: CarryContext = {}): CarriedFlags {
  const carry: string[] = [];
  if (extra.profile !== undefined) carry.push('--profile', extra.profile);
  if (flags.cacert !== undefined) carry.push('--cacert', resolve(cwd, flags.cacert));
  if (flags.cert !== undefined) carry.push('--cert', resolve(cwd, flags.cert));
  if (flags.key !== undefined) carry.push('--key', resolve(cwd, flags.key));
  if (flags.insecure) carry.push('--insecure');
  for (const name of flags.redact ?? []) carry.push('--redact', name);
  if (extra.journal !== undefined) carry.push('--journal', resolve(cwd, extra.journal));
  if (extra.yes) carry.push('--yes');
  const addBack: string[] = [];
  const headers = flags.header?.length ?? 0;
  if (headers) addBack.push(`--header (${headers} given; values not shown)`);
  if (env.TSNODE_HEADERS) addBack.push('TSNODE_HEADERS (read from the environment again when set)');
  return { carry, addBack };
}

/** What a run's coverage check found, as the result and the journal keep it. */
export interface RunCoverage {
  hash: string | null;
  allowed: boolean;
}

/**
 * Whether the catch-up needs --allow-partial to pass the coverage check: it names only the nodes
 * not done, so on a ring it misses the ones the run swept (and a run that went ahead partial
 * misses more). Not added when the run saw no ring, or the catch-up names every node of the run.
 */
export function catchUpIsPartial(coverage: RunCoverage | null | undefined, catchUpNodes: number, runNodes: number): boolean {
  if (!coverage) return false;
  return coverage.allowed || (coverage.hash !== null && catchUpNodes < runNodes);
}

/** The catch-up for `nodes`, or undefined when there is nothing to catch up. `partial`: see catchUpIsPartial. */
export function catchUpFor(
  request: SweepRequest,
  headerPrefix: string,
  nodes: readonly string[],
  flags: CarriedFlags = { carry: [], addBack: [] },
  partial = false,
): CatchUp | undefined {
  if (nodes.length === 0) return undefined;
  const args = ['tsnode', 'sweep', '--before', String(request.before), '--types', request.types.join(',')];
  if (request.nntRollups?.length && request.types.includes('nnt')) args.push('--nnt-rollups', request.nntRollups.join(','));
  if (request.histogramRollups?.length && request.types.includes('histogram')) args.push('--histogram-rollups', request.histogramRollups.join(','));
  if (headerPrefix !== DEFAULT_HEADER_PREFIX) args.push('--header-prefix', headerPrefix);
  args.push('--nodes', nodes.join(','));
  if (partial) args.push('--allow-partial');
  args.push(...flags.carry);
  return { nodes: [...nodes], command: args.map(shellQuote).join(' '), addBack: [...flags.addBack] };
}

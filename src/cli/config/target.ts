/**
 * Target resolution: from the flags, the environment and the config file, which nodes a command
 * acts on, with which network settings, and a one-line account of where the nodes came from.
 *
 * Nodes (first match wins):
 *   1. --nodes <file|list> or --seed <url>             (both: usage error)
 *   2. --profile <name>: that profile's nodes           (an explicit profile names the whole target)
 *   3. TSNODE_NODES
 *   4. TSNODE_PROFILE: that profile's nodes
 *   5. the config's `current` profile's nodes           (only when nothing above named the nodes)
 *   6. read-only commands: ./nodes.txt, then http://127.0.0.1:8112
 *      destructive commands (sweep, sweep cancel, retention apply): usage error, exit 2
 *
 * Settings (header prefix, TLS files, headers, spans), each on its own: flag > environment >
 * profile > default. The profile whose settings apply is --profile, else TSNODE_PROFILE, else
 * `current` when it was consulted for the nodes: a `current` profile never lends its headers
 * (credentials) to nodes named some other way.
 *
 * Pure over its inputs: the file system is passed in (reading node files), nothing is printed.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildHeaders, splitHeaderList } from '../../client/headers.js';
import { DEFAULT_HEADER_PREFIX, HEADER_PREFIXES, type HeaderPrefix } from '../../protocol/headers.js';
import { CliError, UsageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { DEFAULT_NODE, MAX_NODE_LIST_BYTES, NODE_LINE_FORMS, parseNodeEntry, parseNodeList, readBoundedText } from '../nodes.js';
import { didYouMean } from '../suggest.js';
import { parseChoice } from '../values.js';
import type { ConfigFile, Profile } from './file.js';
import { profileNotFound } from './load.js';
import { resolveConfigRelative, showPath } from './paths.js';
import { expandTemplate } from './secrets.js';
import type { WriteTarget } from '../write-targets.js';

/** The flags that take part in choosing the target (already typed where values.ts types them). */
export interface TargetFlags {
  /** Global `--profile <name>`. */
  profile?: string | undefined;
  /** `--nodes <file|list>`. */
  nodes?: string | undefined;
  /** `--seed <url>`. */
  seed?: string | undefined;
  headerPrefix?: string | undefined;
  cacert?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
  /** `--header "Name: value"`, repeatable. */
  header?: readonly string[] | undefined;
  smallestSpan?: number | undefined;
  nntRollups?: readonly number[] | undefined;
  histogramRollups?: readonly number[] | undefined;
}

/** What resolution reads from disk: node list files. Injected so tests need no files. */
export interface TargetFs {
  exists(path: string): boolean;
  /** Throws with a `code` (ENOENT, EACCES, EISDIR) like node:fs. */
  readText(path: string): string;
}

export const realFs: TargetFs = {
  exists: (p) => existsSync(p),
  // Bounded: `--nodes /dev/zero` (or a huge file by mistake) is refused, not read for ever.
  readText: (p) => readBoundedText(p, MAX_NODE_LIST_BYTES),
};

export interface TargetInputs {
  flags: TargetFlags;
  /** TSNODE_PROFILE, TSNODE_NODES, TSNODE_HEADERS, and the ${VAR}s the profile's headers use. */
  env: NodeJS.ProcessEnv;
  config: ConfigFile;
  cwd: string;
  home: string;
  /** sweep, sweep cancel, retention apply: never fall back to ./nodes.txt or the default node. */
  destructive?: boolean;
  /** For messages: `tsnode sweep`. */
  command?: string;
  fs?: TargetFs;
}

export type NodeSource = { kind: 'list'; nodes: string[] } | { kind: 'seed'; seed: string };

/** Where a setting came from, for messages: `--cacert`, `profiles.prod.cacert (~/.config/tsnode/config.yaml:7)`. */
export interface Sourced<T> {
  value: T;
  from: string;
}

export interface Target {
  source: NodeSource;
  /** Which precedence layer gave the nodes. */
  layer: 'flag' | 'profile' | 'env' | 'fallback' | 'default';
  /** Where the nodes came from, without the count: `--nodes nodes.txt`, `profile prod`, `TSNODE_NODES`. */
  origin: string;
  /**
   * `nodes: profile prod, 6 nodes`; pass the count a seed's discovery found, and what it found
   * (`topology 699a1e0b7b27, write_copies 2`) as `detail`.
   */
  describe(count?: number, detail?: string): string;
  /** The profile whose settings apply, and what selected it. */
  profile?: { name: string; via: '--profile' | 'TSNODE_PROFILE' | 'current' };
  headerPrefix: Sourced<HeaderPrefix>;
  /** Absolute paths; `from` names the flag or config key for errors about the file. */
  tls: { cacert?: Sourced<string>; cert?: Sourced<string>; key?: Sourced<string> };
  /** The extra request headers, `${VAR}`s expanded: profile, then TSNODE_HEADERS, then --header (a later name wins). */
  headers: Record<string, string>;
  /** The spans the target declares (the nodes' own report, when they give one, wins over these). */
  spans: { smallestSpan?: Sourced<number>; nntRollups?: Sourced<number[]>; histogramRollups?: Sourced<number[]> };
  /** The profile's default `--to` for `tsnode write` (`write_to`). */
  writeTo?: Sourced<WriteTarget>;
  /** The profile's replication lag `sweep` and `retention apply` accept (`allow_lag`), in ms. */
  allowLag?: Sourced<number>;
  /** The profile's `skip_unreachable` (sweep and retention apply leave out nodes that do not answer). */
  skipUnreachable?: Sourced<boolean>;
  /** Duplicate nodes dropped and the like, for stderr. */
  warnings: string[];
}

const plural = (n: number): string => `${n} node${n === 1 ? '' : 's'}`;

interface Resolved {
  source: NodeSource;
  layer: Target['layer'];
  origin: string;
  warnings: string[];
}

export function resolveTarget(inputs: TargetInputs): Target {
  const { flags, env, config, cwd, home } = inputs;
  const fs = inputs.fs ?? realFs;
  const command = inputs.command ?? 'this command';
  const at = (p: Profile, key: keyof Profile['lines']): string => `profiles.${p.name}.${key} (${config.shown}:${p.lines[key] ?? p.line})`;

  const lookup = (name: string, via: string): Profile => {
    const p = config.profiles.get(name);
    if (!p) throw profileNotFound(config, name, via, didYouMean(name, [...config.profiles.keys()]));
    return p;
  };

  // Which profiles take part.
  const explicit = nonEmpty(flags.profile);
  const envProfileName = nonEmpty(env.TSNODE_PROFILE);
  const explicitProfile = explicit !== undefined ? lookup(explicit, '--profile') : undefined;
  const envProfile = envProfileName !== undefined && explicitProfile === undefined ? lookup(envProfileName, 'TSNODE_PROFILE') : undefined;

  // Nodes, in precedence order.
  const flagNodes = nonEmpty(flags.nodes);
  const flagSeed = nonEmpty(flags.seed);
  if (flagNodes !== undefined && flagSeed !== undefined) {
    throw new UsageError('--nodes and --seed both name the nodes', 'give one: --nodes <file|list> for a fixed list, --seed <url> to discover the ring');
  }
  const envNodes = nonEmpty(env.TSNODE_NODES);
  let resolved: Resolved | undefined;
  let current: Profile | undefined;
  if (flagNodes !== undefined) resolved = { ...nodesFromValue(flagNodes, '--nodes', cwd, fs), layer: 'flag' };
  else if (flagSeed !== undefined) resolved = { source: { kind: 'seed', seed: seedUrl(flagSeed, '--seed') }, layer: 'flag', origin: `--seed ${flagSeed}`, warnings: [] };
  else if (explicitProfile && hasNodes(explicitProfile)) resolved = nodesFromProfile(explicitProfile, config, home, fs, at);
  else if (envNodes !== undefined) resolved = { ...nodesFromValue(envNodes, 'TSNODE_NODES', cwd, fs), layer: 'env' };
  else if (envProfile && hasNodes(envProfile)) resolved = nodesFromProfile(envProfile, config, home, fs, at);
  else if (!explicitProfile && !envProfile && config.current) {
    current = lookup(config.current.name, `current (${config.shown}:${config.current.line})`);
    if (hasNodes(current)) resolved = nodesFromProfile(current, config, home, fs, at);
  }
  if (!resolved) {
    if (inputs.destructive) throw noTarget(command, cwd, fs, explicitProfile ?? envProfile ?? current);
    resolved = fs.exists(resolve(cwd, 'nodes.txt'))
      ? { ...nodesFromValue('nodes.txt', './nodes.txt', cwd, fs), layer: 'fallback', origin: './nodes.txt' }
      : { source: { kind: 'list', nodes: [DEFAULT_NODE] }, layer: 'default', origin: 'default', warnings: [] };
  }

  const profile = explicitProfile ?? envProfile ?? current;
  const via = explicitProfile ? '--profile' : envProfile ? 'TSNODE_PROFILE' : 'current';

  // Settings: flag > environment > profile > default.
  let headerPrefix: Sourced<HeaderPrefix> = { value: DEFAULT_HEADER_PREFIX, from: 'default' };
  if (profile?.headerPrefix) headerPrefix = { value: profile.headerPrefix, from: at(profile, 'header_prefix') };
  if (flags.headerPrefix !== undefined)
    headerPrefix = { value: parseChoice(flags.headerPrefix, '--header-prefix', HEADER_PREFIXES, { ignoreCase: true }), from: '--header-prefix' };

  const tls: Target['tls'] = {};
  for (const k of ['cacert', 'cert', 'key'] as const) {
    const flagValue = nonEmpty(flags[k]);
    if (flagValue !== undefined) tls[k] = { value: resolve(cwd, flagValue), from: `--${k}` };
    else if (profile?.[k] !== undefined) tls[k] = { value: resolveConfigRelative(profile[k], config.path, home), from: at(profile, k) };
  }
  if ((tls.cert === undefined) !== (tls.key === undefined)) {
    const [given, missing] = tls.cert !== undefined ? [tls.cert.from, 'key'] : [tls.key!.from, 'cert'];
    throw new UsageError(
      `${given} needs a ${missing === 'key' ? 'private key' : 'certificate'} too: mutual TLS takes both`,
      `pass --cert client.pem --key client-key.pem (or set both cert and key in the profile)`,
    );
  }

  const headers = mergeHeaders(profile, config, env, flags.header ?? []);

  const spans: Target['spans'] = {};
  if (flags.smallestSpan !== undefined) spans.smallestSpan = { value: flags.smallestSpan, from: '--smallest-span' };
  else if (profile?.smallestSpan !== undefined) spans.smallestSpan = { value: profile.smallestSpan, from: at(profile, 'smallest_span') };
  if (flags.nntRollups !== undefined) spans.nntRollups = { value: [...flags.nntRollups], from: '--nnt-rollups' };
  else if (profile?.nntRollups !== undefined) spans.nntRollups = { value: profile.nntRollups, from: at(profile, 'nnt_rollups') };
  if (flags.histogramRollups !== undefined) spans.histogramRollups = { value: [...flags.histogramRollups], from: '--histogram-rollups' };
  else if (profile?.histogramRollups !== undefined) spans.histogramRollups = { value: profile.histogramRollups, from: at(profile, 'histogram_rollups') };

  const { source, layer, origin, warnings } = resolved;
  const describe = (count?: number, detail?: string): string => {
    if (source.kind === 'seed') return `nodes: ${origin}, ${count === undefined ? 'ring not discovered yet' : `${plural(count)} discovered`}${detail ? ` (${detail})` : ''}`;
    if (layer === 'default') return `nodes: default ${source.nodes[0]} (no --nodes, --seed, --profile, TSNODE_NODES or profile nodes)`;
    return `nodes: ${origin}, ${plural(count ?? source.nodes.length)}`;
  };
  return {
    source,
    layer,
    origin,
    describe,
    ...(profile ? { profile: { name: profile.name, via } } : {}),
    headerPrefix,
    tls,
    headers,
    spans,
    ...(profile?.writeTo !== undefined ? { writeTo: { value: profile.writeTo, from: at(profile, 'write_to') } } : {}),
    ...(profile?.allowLag !== undefined ? { allowLag: { value: profile.allowLag, from: at(profile, 'allow_lag') } } : {}),
    ...(profile?.skipUnreachable !== undefined ? { skipUnreachable: { value: profile.skipUnreachable, from: at(profile, 'skip_unreachable') } } : {}),
    warnings,
  };
}

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
}

function hasNodes(p: Profile): boolean {
  return p.nodes !== undefined || p.nodesFile !== undefined || p.seed !== undefined;
}

function seedUrl(text: string, field: string): string {
  try {
    return parseNodeEntry(text);
  } catch (err) {
    throw new UsageError(`${field}: ${(err as Error).message}`, `the seed is one node of the ring: ${NODE_LINE_FORMS}`);
  }
}

/** A `--nodes`/TSNODE_NODES value: an existing file, else a comma list (a path-like value that is no file is an error). */
function nodesFromValue(value: string, label: string, cwd: string, fs: TargetFs): Omit<Resolved, 'layer'> {
  const path = resolve(cwd, value);
  if (fs.exists(path)) {
    const list = parseNodeList(readNodesFile(fs, path, value, label), value, { separator: 'lines' });
    return { source: { kind: 'list', nodes: list.nodes }, origin: label === '--nodes' || label === 'TSNODE_NODES' ? `${label} ${value}` : label, warnings: list.warnings };
  }
  if (/\.(txt|list|conf)$/i.test(value) || (value.includes('/') && !value.includes('://') && !value.includes(','))) {
    throw new UsageError(`${label}: node list file ${value} does not exist`, `pass a file, or a comma list: ${NODE_LINE_FORMS}`);
  }
  const list = parseNodeList(value, label, { separator: 'commas' });
  return { source: { kind: 'list', nodes: list.nodes }, origin: label, warnings: list.warnings };
}

function readNodesFile(fs: TargetFs, path: string, shown: string, label: string): string {
  try {
    return fs.readText(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EFBIG')
      throw new UsageError(`${label}: ${shown} is larger than ${MAX_NODE_LIST_BYTES / 1024 / 1024} MiB: not a node list`, `list one node per line: ${NODE_LINE_FORMS}`);
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : (err as Error).message;
    throw new UsageError(`${label}: cannot read ${shown}: ${why}`, `a node list file holds one node per line: ${NODE_LINE_FORMS}`);
  }
}

function nodesFromProfile(p: Profile, config: ConfigFile, home: string, fs: TargetFs, at: (p: Profile, k: keyof Profile['lines']) => string): Resolved {
  const origin = `profile ${p.name}`;
  if (p.nodes) return { source: { kind: 'list', nodes: p.nodes }, layer: 'profile', origin, warnings: [] };
  if (p.seed) return { source: { kind: 'seed', seed: p.seed }, layer: 'profile', origin: `${origin} (seed ${p.seed})`, warnings: [] };
  const path = resolveConfigRelative(p.nodesFile!, config.path, home);
  const shown = showPath(path, home);
  if (!fs.exists(path)) {
    throw new UsageError(
      `${at(p, 'nodes_file')}: node list file ${shown} does not exist`,
      `a relative nodes_file is read from the config file's directory; fix it with: tsnode profile set ${p.name} --nodes-file <path>`,
    );
  }
  const list = parseNodeList(readNodesFile(fs, path, shown, at(p, 'nodes_file')), shown, { separator: 'lines' });
  return { source: { kind: 'list', nodes: list.nodes }, layer: 'profile', origin: `${origin} (${shown})`, warnings: list.warnings };
}

function mergeHeaders(profile: Profile | undefined, config: ConfigFile, env: NodeJS.ProcessEnv, flagLines: readonly string[]): Record<string, string> {
  const fromProfile: string[] = [];
  for (const h of profile?.headers ?? []) {
    const expanded = expandTemplate(h.template, env);
    if (!expanded.ok) {
      throw new CliError('config_variable_unset', `profiles.${profile!.name}.headers.${h.name} (${config.shown}:${h.line}) uses \${${expanded.missing}}, which is not set`, {
        hint: `set it in the environment (export ${expanded.missing}=...), or change the header: tsnode profile set ${profile!.name} --header '${h.name}: ...'`,
        exitCode: EXIT.usage,
      });
    }
    fromProfile.push(`${h.name}: ${expanded.value}`);
  }
  const envText = env.TSNODE_HEADERS;
  return buildHeaders([
    { field: profile ? `profiles.${profile.name}.headers` : 'profile', lines: fromProfile },
    { field: 'TSNODE_HEADERS', lines: envText ? splitHeaderList(envText) : [] },
    { field: '--header', lines: flagLines },
  ]);
}

function noTarget(command: string, cwd: string, fs: TargetFs, profile: Profile | undefined): UsageError {
  const local = fs.exists(resolve(cwd, 'nodes.txt')) ? ' (./nodes.txt exists: pass --nodes nodes.txt to use it)' : '';
  const why = profile ? `profile ${profile.name} names no nodes, and ` : '';
  return new UsageError(
    `${command} acts on every node it is given, and was given none: ${why}no --nodes, --seed, --profile, TSNODE_NODES or current profile names them (nothing was sent)`,
    `pass --nodes <file|list>${local}, --seed <url>, or --profile <name> (create one with: tsnode profile set <name> --nodes <file|list>)`,
    EXIT.usage,
    'no_target',
  );
}

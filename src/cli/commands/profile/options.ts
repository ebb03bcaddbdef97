/** `tsnode profile`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { flag, type FlagValues } from '../../flags.js';
import { WRITE_TARGETS } from '../../write-targets.js';
import { PROFILE_KEYS } from '../../config/keys.js';
import { HEADER_PREFIXES } from '../../../protocol/constants.js';

export const profileListFlags = {
  output: flag.output(['table', 'json'] as const),
  names: flag.boolean('--names', 'print only the names, one per line (for shell completion)', { hidden: true }),
};
export type ProfileListFlags = FlagValues<typeof profileListFlags>;

export const profileShowFlags = {
  output: flag.output(['table', 'json'] as const),
};
export type ProfileShowFlags = FlagValues<typeof profileShowFlags> & { name?: string | undefined };

/** `profile set`: the same flags, spelled the same, as the commands that talk to nodes. */
export const profileSetFlags = {
  nodes: flag.string('--nodes <file|list>', 'the nodes: a comma list, or a node list file (stored as nodes_file)'),
  nodesFile: flag.string('--nodes-file <file>', 'a node list file, one node per line (stored as an absolute path)', { complete: { kind: 'files' } }),
  seed: flag.string('--seed <url>', 'one node of the ring; the others are discovered from it'),
  headerPrefix: flag.choice('--header-prefix <prefix>', 'sweep header prefix: X-Service, or X-Snowth for production nodes', HEADER_PREFIXES, { ignoreCase: true }),
  cacert: flag.string('--cacert <file>', "PEM file of the CA(s) that sign the nodes' certificates", { complete: { kind: 'files' } }),
  cert: flag.string('--cert <file>', 'PEM client certificate for mutual TLS (with --key)', { complete: { kind: 'files' } }),
  key: flag.string('--key <file>', 'PEM private key of --cert', { complete: { kind: 'files' } }),
  header: flag.repeatable('--header <"Name: value">', "extra request header, repeatable; write secrets as '${VAR}' (single quotes), read from the environment when used", {
    complete: { kind: 'none' },
  }),
  smallestSpan: flag.span('--smallest-span <seconds>', "the nodes' smallest rollup span"),
  nntRollups: flag.spanList('--nnt-rollups <spans>', 'the numeric spans the nodes keep, e.g. 60,300,1800,10800 (checks sweeps when nodes do not report them)'),
  histogramRollups: flag.spanList('--histogram-rollups <spans>', 'the histogram spans the nodes keep'),
  writeTo: flag.choice('--write-to <target>', "tsnode write's default --to: primary (the default on a ring), owners, any or all", WRITE_TARGETS),
  allowLag: flag.duration('--allow-lag <duration>', 'the replication lag sweep and retention apply accept without their own --allow-lag (allow_lag)'),
  skipUnreachable: flag.boolean(
    '--skip-unreachable',
    'sweep and retention apply leave out nodes that do not answer, as with their --skip-unreachable (skip_unreachable: true; --unset skip_unreachable removes it)',
  ),
  unset: flag.repeatable('--unset <key>', 'remove a setting: a key such as cacert or smallest_span, or headers.<Name>; repeatable', {
    complete: {
      kind: 'values',
      values: [...PROFILE_KEYS],
    },
  }),
};
export type ProfileSetFlags = FlagValues<typeof profileSetFlags> & { name: string };

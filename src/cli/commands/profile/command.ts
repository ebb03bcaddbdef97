import { Argument, type Command } from 'commander';
import type { Runner } from '../../action.js';
import { completeWith } from '../../completion-hints.js';
import { addFlags, flag, type FlagValues } from '../../flags.js';

const HEADER_PREFIXES = ['X-Service', 'X-Snowth'] as const;

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
  unset: flag.repeatable('--unset <key>', 'remove a setting: a key such as cacert or smallest_span, or headers.<Name>; repeatable', {
    complete: {
      kind: 'values',
      values: ['nodes', 'nodes_file', 'seed', 'header_prefix', 'cacert', 'cert', 'key', 'headers', 'smallest_span', 'nnt_rollups', 'histogram_rollups'],
    },
  }),
};
export type ProfileSetFlags = FlagValues<typeof profileSetFlags> & { name: string };

const nameArgument = (description: string, required: boolean): Argument =>
  completeWith(new Argument(required ? '<name>' : '[name]', description), { kind: 'profiles' });

/** `tsnode profile list|show|use|set|remove`: named targets in the config file. */
export function declareProfile(program: Command, runner: Runner): void {
  const profile = program
    .command('profile')
    .description('named clusters (profiles) in the config file: nodes, TLS, headers and spans under one name')
    .addHelpText(
      'after',
      `
The config file is $TSNODE_CONFIG, else $XDG_CONFIG_HOME/tsnode/config.yaml (~/.config/tsnode/config.yaml).
Any command takes --profile <name> (or TSNODE_PROFILE); without either, the profile named by \`current\`.

Examples:
  $ tsnode profile set prod --nodes https://db1:8443,https://db2:8443 --header-prefix X-Snowth \\
        --cacert /etc/tsnode/prod-ca.pem --header 'Authorization: Bearer \${PROD_TOKEN}'
  $ tsnode profile set lab --nodes tsnode-cluster/nodes.txt
  $ tsnode profile use lab
  $ tsnode profile list
  $ tsnode profile show prod --output json
  $ tsnode status --profile prod`,
    );

  addFlags(profile.command('list').description('the profiles in the config file (* marks the current one)'), profileListFlags).action((flags: ProfileListFlags) =>
    runner(() => import('./action.js').then((m) => m.profileListAction), flags),
  );

  addFlags(
    profile
      .command('show')
      .description('one profile\'s settings (default: the one in use); header values are redacted, ${VAR} references shown as written')
      .addArgument(nameArgument('the profile (default: --profile, TSNODE_PROFILE, else current)', false)),
    profileShowFlags,
  ).action((name: string | undefined, flags: ProfileShowFlags) => runner(() => import('./action.js').then((m) => m.profileShowAction), { ...flags, name }));

  profile
    .command('use')
    .description('make a profile the current one (the default target of every command)')
    .addArgument(nameArgument('the profile', true))
    .action((name: string) => runner(() => import('./action.js').then((m) => m.profileUseAction), { name }));

  addFlags(
    profile
      .command('set')
      .description('create a profile or change some of its settings (the others stay)')
      .addArgument(completeWith(new Argument('<name>', 'the profile'), { kind: 'profiles' }))
      .addHelpText(
        'after',
        `
Relative file paths are stored as absolute paths. Write secrets as \${VAR} in single quotes so the
shell does not expand them: the value is read from the environment each time the profile is used.

Examples:
  $ tsnode profile set prod --seed https://db1.example.net:8443 --header-prefix X-Snowth
  $ tsnode profile set prod --header 'Authorization: Bearer \${PROD_TOKEN}'
  $ tsnode profile set prod --nnt-rollups 60,300,1800,10800 --unset cacert`,
      ),
    profileSetFlags,
  ).action((name: string, flags: ProfileSetFlags) => runner(() => import('./action.js').then((m) => m.profileSetAction), { ...flags, name }));

  profile
    .command('remove')
    .description('delete a profile (and `current`, if it named it)')
    .addArgument(nameArgument('the profile', true))
    .action((name: string) => runner(() => import('./action.js').then((m) => m.profileRemoveAction), { name }));
}

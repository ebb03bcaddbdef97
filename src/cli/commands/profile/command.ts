import { Argument, type Command } from 'commander';
import type { Runner } from '../../action.js';
import { completeWith } from '../../completion-hints.js';
import { addFlags } from '../../flags.js';
import { profileListFlags, type ProfileListFlags, profileShowFlags, type ProfileShowFlags, profileSetFlags, type ProfileSetFlags } from './options.js';

const nameArgument = (description: string, required: boolean): Argument => completeWith(new Argument(required ? '<name>' : '[name]', description), { kind: 'profiles' });

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
      .description("one profile's settings (default: the one in use); header values are redacted, ${VAR} references shown as written")
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

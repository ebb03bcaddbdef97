import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { parseNodeEntry, parseNodeList } from '../../nodes.js';
import { renderJson } from '../../render/table.js';
import type { ConfigFile } from '../../config/file.js';
import { homeOf, loadConfig, profileNotFound, type LoadedConfig } from '../../config/load.js';
import { configPath } from '../../config/paths.js';
import { hasLiteralSecret } from '../../config/secrets.js';
import { removeProfileText, setProfileText, useProfileText, withConfigLock, writeConfigFile, type ProfileChanges } from '../../config/write.js';
import { didYouMean } from '../../suggest.js';
import { parseHeaderLine, HeaderError } from '../../../client/headers.js';
import type { ProfileListFlags, ProfileSetFlags, ProfileShowFlags } from './options.js';
import { printProfile, printProfileList, profileJson } from './render.js';

function load(ctx: CliContext): LoadedConfig {
  const loaded = loadConfig({ env: ctx.env, cwd: ctx.cwd });
  for (const w of loaded.warnings) ctx.log.warn(w);
  return loaded;
}

export async function profileListAction(flags: ProfileListFlags, ctx: CliContext): Promise<ExitCode> {
  const { config, home } = load(ctx);
  const profiles = [...config.profiles.values()];
  if (flags.names) {
    ctx.stdout.write(profiles.map((p) => `${p.name}\n`).join(''));
    return EXIT.ok;
  }
  if (flags.output === 'json') {
    ctx.stdout.write(renderJson({ config_file: config.path, current: config.current?.name ?? null, profiles: profiles.map((p) => profileJson(p, config, home)) }));
    return EXIT.ok;
  }
  if (profiles.length === 0) {
    ctx.log.info(`no profiles in ${config.shown}${config.exists ? '' : ' (the file does not exist yet)'}; create one: tsnode profile set <name> --nodes <file|list>`);
    return EXIT.ok;
  }
  printProfileList(profiles, config, home, ctx);
  ctx.log.info(`config: ${config.shown}`);
  if (config.current && !config.profiles.has(config.current.name)) ctx.log.warn(`current names ${config.current.name}, which is not a profile here`);
  return EXIT.ok;
}

/** The profile `show` describes: the argument, else --profile, TSNODE_PROFILE, current. */
function chosenName(name: string | undefined, ctx: CliContext, config: ConfigFile): { name: string; via: string } {
  if (name !== undefined) return { name, via: 'profile show' };
  if (ctx.profile !== undefined) return { name: ctx.profile, via: '--profile' };
  const env = ctx.env.TSNODE_PROFILE;
  if (env !== undefined && env.trim() !== '') return { name: env.trim(), via: 'TSNODE_PROFILE' };
  if (config.current) return { name: config.current.name, via: `current (${config.shown}:${config.current.line})` };
  throw new UsageError(`no profile to show: none named, and ${config.shown} has no current profile`, 'name one: tsnode profile show <name> (tsnode profile list shows them)');
}

export async function profileShowAction(flags: ProfileShowFlags, ctx: CliContext): Promise<ExitCode> {
  const { config, home } = load(ctx);
  const { name, via } = chosenName(flags.name, ctx, config);
  const p = config.profiles.get(name);
  if (!p) throw profileNotFound(config, name, via, didYouMean(name, [...config.profiles.keys()]));
  const json = profileJson(p, config, home);
  if (flags.output === 'json') {
    ctx.stdout.write(renderJson({ config_file: config.path, ...json }));
    return EXIT.ok;
  }
  printProfile(p, json, home, ctx);
  ctx.log.info(`config: ${config.shown}:${p.line}`);
  return EXIT.ok;
}

/** Read, change and write the config file under its lock (two profile commands at once lose nothing). */
function locked<T>(ctx: CliContext, fn: () => T): T {
  return withConfigLock(configPath({ env: ctx.env, home: homeOf(ctx.env), cwd: ctx.cwd }), fn);
}

export async function profileUseAction(opts: { name: string }, ctx: CliContext): Promise<ExitCode> {
  const shown = locked(ctx, () => {
    const { config } = load(ctx);
    if (!config.profiles.has(opts.name)) throw profileNotFound(config, opts.name, 'profile use', didYouMean(opts.name, [...config.profiles.keys()]));
    writeConfigFile(config.path, useProfileText(config, opts.name));
    return config.shown;
  });
  ctx.log.info(`current profile: ${opts.name} (${shown})`);
  return EXIT.ok;
}

export async function profileRemoveAction(opts: { name: string }, ctx: CliContext): Promise<ExitCode> {
  const { config, wasCurrent } = locked(ctx, () => {
    const { config } = load(ctx);
    if (!config.profiles.has(opts.name)) throw profileNotFound(config, opts.name, 'profile remove', didYouMean(opts.name, [...config.profiles.keys()]));
    const { text, wasCurrent } = removeProfileText(config, opts.name);
    writeConfigFile(config.path, text);
    return { config, wasCurrent };
  });
  ctx.log.info(`removed profile ${opts.name} from ${config.shown}${wasCurrent ? '; it was the current profile, so there is none now (tsnode profile use <name>)' : ''}`);
  return EXIT.ok;
}

/** An absolute path for a file named on the command line (a `~` path is kept as written: it means the same anywhere). */
function absolute(path: string, cwd: string): string {
  return path === '~' || path.startsWith('~/') ? path : resolve(cwd, path);
}

/** What `profile set`'s flags change; validates what can be checked now (nodes, header syntax). */
export function changesFromFlags(flags: ProfileSetFlags, cwd: string): ProfileChanges {
  const changes: ProfileChanges = {};
  if (flags.nodes !== undefined) {
    const value = flags.nodes.trim();
    const path = resolve(cwd, value);
    if (existsSync(path) && statSync(path).isFile()) changes.nodesFile = path;
    else if (/\.(txt|list|conf)$/i.test(value) || (value.includes('/') && !value.includes('://') && !value.includes(','))) {
      throw new UsageError(
        `--nodes: node list file ${value} does not exist`,
        'pass an existing file, or a comma list of nodes (or --nodes-file to name a file that will exist later)',
      );
    } else changes.nodes = parseNodeList(value, '--nodes', { separator: 'commas' }).nodes;
  }
  if (flags.nodesFile !== undefined) changes.nodesFile = absolute(flags.nodesFile.trim(), cwd);
  if (flags.seed !== undefined) {
    try {
      changes.seed = parseNodeEntry(flags.seed);
    } catch (err) {
      throw new UsageError(`--seed: ${(err as Error).message}`, 'the seed is one node of the ring, e.g. https://db1.example.net:8443');
    }
  }
  if (flags.headerPrefix !== undefined) changes.headerPrefix = flags.headerPrefix;
  for (const k of ['cacert', 'cert', 'key'] as const) {
    if (flags[k] === undefined) continue;
    const path = absolute(flags[k].trim(), cwd);
    // Refused now, not at 3 a.m. when the first command of the profile cannot read it.
    if (!path.startsWith('~') && !(existsSync(path) && statSync(path).isFile())) {
      throw new UsageError(`--${k}: ${path} ${existsSync(path) ? 'is not a file' : 'does not exist'}`, `give the PEM file's path (nothing was written)`);
    }
    changes[k] = path;
  }
  if (flags.header.length) {
    changes.headers = flags.header.map((line) => {
      try {
        return parseHeaderLine(line, '--header');
      } catch (err) {
        // Kept: in a profile a header is quoted for tsnode to expand ${TOKEN}, not the shell (cli/errors.ts HINTS).
        if (err instanceof HeaderError) throw new UsageError(err.message, "write a header as 'Name: value', e.g. --header 'Authorization: Bearer ${TOKEN}'");
        throw err;
      }
    });
  }
  if (flags.smallestSpan !== undefined) changes.smallestSpan = flags.smallestSpan;
  if (flags.nntRollups !== undefined) changes.nntRollups = flags.nntRollups;
  if (flags.histogramRollups !== undefined) changes.histogramRollups = flags.histogramRollups;
  if (flags.writeTo !== undefined) changes.writeTo = flags.writeTo;
  if (flags.allowLag !== undefined) changes.allowLag = flags.allowLag;
  if (flags.skipUnreachable) changes.skipUnreachable = true;
  if (flags.unset.length) changes.unset = flags.unset;
  return changes;
}

export async function profileSetAction(flags: ProfileSetFlags, ctx: CliContext): Promise<ExitCode> {
  const changes = changesFromFlags(flags, ctx.cwd);
  const { config, existed } = locked(ctx, () => {
    const { config } = load(ctx);
    const existed = config.profiles.has(flags.name);
    if (!existed && Object.keys(changes).length === 0) {
      throw new UsageError(`profile set ${flags.name}: nothing to set`, 'give at least one setting, e.g. --nodes db1:8112,db2:8112 (tsnode profile set --help lists them)');
    }
    writeConfigFile(config.path, setProfileText(config, flags.name, changes));
    return { config, existed };
  });
  ctx.log.info(`${existed ? 'updated' : 'created'} profile ${flags.name} in ${config.shown}`);
  for (const [name, value] of changes.headers ?? []) {
    if (hasLiteralSecret(value)) ctx.log.warn(`headers.${name} is stored as a literal value (the file is mode 0600); a \${VAR} reference keeps the secret out of the file`);
  }
  if (!existed && !config.current) ctx.log.info(`make it the default target with: tsnode profile use ${flags.name}`);
  return EXIT.ok;
}

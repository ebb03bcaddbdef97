/**
 * Reading the config file from disk. A missing file is an empty config (no profiles); anything
 * else unreadable or invalid is a ConfigFileError (exit 2).
 */
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { emptyConfig, parseConfig, ConfigFileError, type ConfigFile } from './file.js';
import { configPath, showPath } from './paths.js';
import { hasLiteralSecret } from './secrets.js';

export interface ConfigEnv {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Defaults to $HOME, else os.homedir(). */
  home?: string;
}

export interface LoadedConfig {
  config: ConfigFile;
  /** For stderr: a group/world-readable file holding a literal secret. */
  warnings: string[];
  home: string;
}

export function homeOf(env: NodeJS.ProcessEnv): string {
  return env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
}

/** Loads the config file named by the environment (TSNODE_CONFIG, XDG_CONFIG_HOME, ~/.config). */
export function loadConfig(where: ConfigEnv): LoadedConfig {
  const home = where.home ?? homeOf(where.env);
  const path = configPath({ env: where.env, home, cwd: where.cwd });
  return loadConfigFile(path, home);
}

export function loadConfigFile(path: string, home: string): LoadedConfig {
  const shown = showPath(path, home);
  let text: string;
  let mode: number;
  try {
    text = readFileSync(path, 'utf8');
    mode = statSync(path).mode;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { config: emptyConfig(path, shown), warnings: [], home };
    const why = code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : (err as Error).message;
    throw new ConfigFileError(shown, undefined, '(file)', `cannot be read: ${why}`, 'a readable YAML file (or set TSNODE_CONFIG to another one)');
  }
  const config = parseConfig(text, path, shown);
  return { config, warnings: permissionWarnings(config, mode), home };
}

/** Literal secrets in a file others can read: say where, and how to fix it. */
export function permissionWarnings(config: ConfigFile, mode: number): string[] {
  if (process.platform === 'win32' || (mode & 0o044) === 0) return [];
  const literal = [...config.profiles.values()].flatMap((p) =>
    p.headers.filter((h) => hasLiteralSecret(h.template)).map((h) => `profiles.${p.name}.headers.${h.name} (line ${h.line})`),
  );
  if (literal.length === 0) return [];
  const perms = (mode & 0o777).toString(8).padStart(3, '0');
  return [
    `${config.shown} is readable by other users (mode ${perms}) and holds a literal secret in ${literal.join(', ')}; run chmod 600 ${config.shown}, or write the value as \${VAR} and set VAR in the environment`,
  ];
}

/** A profile name that is not in the file: names the file and the profiles there are. */
export function profileNotFound(config: ConfigFile, name: string, via: string, suggestion?: string): CliError {
  const names = [...config.profiles.keys()];
  const where = config.exists ? config.shown : `${config.shown} (which does not exist)`;
  const hint =
    names.length === 0 ? `create it: tsnode profile set ${name} --nodes <file|list>` : `${suggestion ? `${suggestion} ` : ''}profiles in ${config.shown}: ${names.join(', ')}`;
  return new CliError('profile_not_found', `${via}: no profile named ${JSON.stringify(name)} in ${where}`, { hint, exitCode: EXIT.usage });
}

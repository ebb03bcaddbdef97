/**
 * Where the config file is and how paths inside it are read. Pure: the environment and the home
 * directory are passed in.
 */
import { dirname, isAbsolute, join, resolve } from 'node:path';

export interface PathEnv {
  env: NodeJS.ProcessEnv;
  /** The user's home directory ($HOME, else os.homedir()). */
  home: string;
  /** For a relative $TSNODE_CONFIG. */
  cwd: string;
}

/**
 * The config file: `$TSNODE_CONFIG`, else `$XDG_CONFIG_HOME/tsnode/config.yaml`, else
 * `~/.config/tsnode/config.yaml`. A relative XDG_CONFIG_HOME is ignored, as the XDG spec says.
 */
export function configPath({ env, home, cwd }: PathEnv): string {
  const explicit = env.TSNODE_CONFIG;
  if (explicit !== undefined && explicit.trim() !== '') return resolve(cwd, expandHome(explicit.trim(), home));
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && xdg !== '' && isAbsolute(xdg) ? xdg : join(home, '.config');
  return join(base, 'tsnode', 'config.yaml');
}

/** `~` and `~/x` -> the home directory (`~user` is left alone: no lookup of other users). */
export function expandHome(path: string, home: string): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return path;
}

/** A path written in the config file: `~` expanded, a relative path taken from the file's directory. */
export function resolveConfigRelative(path: string, configFile: string, home: string): string {
  return resolve(dirname(configFile), expandHome(path, home));
}

/** The path shortened for messages: the home directory shown as `~`. */
export function showPath(path: string, home: string): string {
  if (home && home !== '/' && (path === home || path.startsWith(`${home}/`))) return `~${path.slice(home.length)}`;
  return path;
}

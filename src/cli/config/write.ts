/**
 * Changing the config file (profile set|use|remove): edits go through the parsed YAML document,
 * so the user's comments and layout survive where the yaml package can keep them; the result is
 * validated again before it is written, and written atomically (temp file + rename) with mode 0600.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { Document, isMap, type YAMLMap } from 'yaml';
import type { HeaderPrefix } from '../../protocol/headers.js';
import { CliError, UsageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { pidState } from '../pid.js';
import { PROFILE_KEYS, PROFILE_NAME_FORMS, PROFILE_NAME_RE, parseConfig, type ConfigFile, type ProfileKey } from './file.js';
import { profileNotFound } from './load.js';
import type { WriteTarget } from '../write-targets.js';
import { formatDuration } from '../values.js';

/** What `profile set` changes; absent fields stay as they are. */
export interface ProfileChanges {
  /** One node source replaces the other two. */
  nodes?: string[];
  nodesFile?: string;
  seed?: string;
  headerPrefix?: HeaderPrefix;
  cacert?: string;
  cert?: string;
  key?: string;
  /** Added or replaced by name (case-insensitive). */
  headers?: ReadonlyArray<readonly [string, string]>;
  smallestSpan?: number;
  nntRollups?: number[];
  histogramRollups?: number[];
  writeTo?: WriteTarget;
  /** Milliseconds; written as a duration (`5m`). */
  allowLag?: number;
  skipUnreachable?: boolean;
  /** Keys to remove: `cacert`, `headers` (all), `headers.Authorization` (one). */
  unset?: readonly string[];
}

export function checkProfileName(name: string): void {
  if (!PROFILE_NAME_RE.test(name)) throw new UsageError(`profile name ${JSON.stringify(name)} is not valid`, `use ${PROFILE_NAME_FORMS}`);
}

function documentOf(config: ConfigFile): Document {
  return config.document ? config.document.clone() : new Document({});
}

/** Validates the edited document the way a later run will read it, and returns its text. */
function finish(config: ConfigFile, doc: Document): string {
  const text = doc.toString({ flowCollectionPadding: false });
  parseConfig(text, config.path, config.shown);
  return text;
}

function profileMap(doc: Document, name: string): YAMLMap | undefined {
  const node = doc.getIn(['profiles', name], true);
  return isMap(node) ? node : undefined;
}

const SOURCE_FIELDS = [
  ['nodes', 'nodes'],
  ['nodesFile', 'nodes_file'],
  ['seed', 'seed'],
] as const;

/** The new text of the config with profile `name` created or changed. */
export function setProfileText(config: ConfigFile, name: string, changes: ProfileChanges): string {
  checkProfileName(name);
  const doc = documentOf(config);
  const path = ['profiles', name];
  if (!isMap(doc.getIn(['profiles'], true))) doc.setIn(['profiles'], doc.createNode({}));
  if (!profileMap(doc, name)) doc.setIn(path, doc.createNode({}));
  const set = (key: ProfileKey, value: unknown, flow = false): void => {
    doc.setIn([...path, key], doc.createNode(value, { flow }));
  };

  for (const key of changes.unset ?? []) {
    const [head, header] = key.split(/\.(.*)/s) as [string, string | undefined];
    if (!(PROFILE_KEYS as readonly string[]).includes(head) || (header !== undefined && head !== 'headers')) {
      throw new UsageError(`--unset: ${JSON.stringify(key)} is not a profile key`, `one of ${PROFILE_KEYS.join(', ')}, or headers.<Name>`);
    }
    if (header === undefined) doc.deleteIn([...path, head]);
    else deleteHeader(doc, path, header);
  }
  const sources = SOURCE_FIELDS.filter(([field]) => changes[field] !== undefined);
  if (sources.length > 1)
    throw new UsageError(`${sources.map(([, k]) => `--${k.replace('_', '-')}`).join(' and ')} both name the nodes`, 'a profile has one of --nodes, --nodes-file, --seed');
  if (sources.length === 1) for (const [, key] of SOURCE_FIELDS) doc.deleteIn([...path, key]);
  if (changes.nodes !== undefined) set('nodes', changes.nodes, true);
  if (changes.nodesFile !== undefined) set('nodes_file', changes.nodesFile);
  if (changes.seed !== undefined) set('seed', changes.seed);
  if (changes.headerPrefix !== undefined) set('header_prefix', changes.headerPrefix);
  if (changes.cacert !== undefined) set('cacert', changes.cacert);
  if (changes.cert !== undefined) set('cert', changes.cert);
  if (changes.key !== undefined) set('key', changes.key);
  for (const [hName, value] of changes.headers ?? []) {
    deleteHeader(doc, path, hName);
    if (!isMap(doc.getIn([...path, 'headers'], true))) doc.setIn([...path, 'headers'], doc.createNode({}));
    doc.setIn([...path, 'headers', hName], value);
  }
  if (changes.smallestSpan !== undefined) set('smallest_span', changes.smallestSpan);
  if (changes.nntRollups !== undefined) set('nnt_rollups', changes.nntRollups, true);
  if (changes.histogramRollups !== undefined) set('histogram_rollups', changes.histogramRollups, true);
  if (changes.writeTo !== undefined) set('write_to', changes.writeTo);
  if (changes.allowLag !== undefined) set('allow_lag', formatDuration(changes.allowLag));
  if (changes.skipUnreachable !== undefined) set('skip_unreachable', changes.skipUnreachable);
  return finish(config, doc);
}

/** Removes a header by name, whatever its letter case; drops an emptied `headers` map. */
function deleteHeader(doc: Document, path: string[], name: string): void {
  const headers = doc.getIn([...path, 'headers'], true);
  if (!isMap(headers)) return;
  headers.items = headers.items.filter((pair) => String((pair.key as { value?: unknown } | null)?.value ?? pair.key).toLowerCase() !== name.toLowerCase());
  if (headers.items.length === 0) doc.deleteIn([...path, 'headers']);
}

/** The new text with `current` naming an existing profile. */
export function useProfileText(config: ConfigFile, name: string): string {
  if (!config.profiles.has(name)) throw profileNotFound(config, name, 'profile use');
  const doc = documentOf(config);
  const root = doc.contents;
  if (isMap(root) && !root.has('current')) {
    // A new `current` goes first, where a reader looks for it; the file's opening comment stays on top.
    const pair = doc.createPair('current', name);
    const first = root.items[0];
    const firstKey = first?.key as { commentBefore?: string | null } | undefined;
    if (firstKey?.commentBefore) {
      (pair.key as { commentBefore?: string | null }).commentBefore = firstKey.commentBefore;
      firstKey.commentBefore = null;
    }
    root.items.unshift(pair);
  } else {
    doc.set('current', name);
  }
  return finish(config, doc);
}

/** The new text without profile `name` (and without `current` if it named it). */
export function removeProfileText(config: ConfigFile, name: string): { text: string; wasCurrent: boolean } {
  if (!config.profiles.has(name)) throw profileNotFound(config, name, 'profile remove');
  const doc = documentOf(config);
  doc.deleteIn(['profiles', name]);
  const wasCurrent = config.current?.name === name;
  if (wasCurrent) deleteTopKey(doc, 'current');
  return { text: finish(config, doc), wasCurrent };
}

/** Deletes a top-level key; a comment above it that opens the file moves to the next key instead of vanishing. */
function deleteTopKey(doc: Document, key: string): void {
  const root = doc.contents;
  if (!isMap(root)) return;
  const index = root.items.findIndex((p) => (p.key as { value?: unknown } | null)?.value === key);
  if (index < 0) return;
  const removed = root.items[index]!.key as { commentBefore?: string | null };
  const next = root.items[index + 1]?.key as { commentBefore?: string | null } | undefined;
  if (index === 0 && removed.commentBefore) {
    if (next) next.commentBefore = next.commentBefore ? `${removed.commentBefore}\n${next.commentBefore}` : removed.commentBefore;
    else doc.commentBefore = removed.commentBefore;
  }
  root.items.splice(index, 1);
}

/**
 * Writes the file atomically with mode 0600: a temp file beside it, fsync, rename. A symlinked
 * config (dotfile managers) is written through to its target. The directory is created 0700.
 */
export function writeConfigFile(path: string, text: string): void {
  let target = path;
  try {
    target = realpathSync(path);
  } catch {
    // Not there yet: write it where it was named.
  }
  const tmp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    chmodSync(tmp, 0o600);
    renameSync(tmp, target);
  } catch (err) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // The temp file was never created (its directory is not one): nothing to clean.
    }
    throw new CliError('config_write_failed', `cannot write ${path}: ${(err as Error).message}`, {
      hint: "check the directory's permissions, or set TSNODE_CONFIG to a writable file",
      exitCode: EXIT.failed,
    });
  }
}

/** How long a `profile` command waits for another one to finish with the config file. */
const CONFIG_LOCK_WAIT_MS = 10_000;

/**
 * Runs `fn` (read the config, change it, write it) holding `<config>.lock`, so two commands that
 * change profiles at once never lose one's change: the second reads the file after the first
 * wrote it. A lock left by a process that no longer runs is taken over.
 */
export function withConfigLock<T>(path: string, fn: () => T): T {
  let target = path;
  try {
    target = realpathSync(path);
  } catch {
    // not there yet
  }
  const lock = `${target}.lock`;
  const cannot = (err: unknown): CliError =>
    new CliError('config_write_failed', `cannot write ${path}: ${(err as Error).message}`, {
      hint: "check the directory's permissions, or set TSNODE_CONFIG to a writable file",
      exitCode: EXIT.failed,
    });
  try {
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  } catch (err) {
    throw cannot(err);
  }
  const deadline = Date.now() + CONFIG_LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(lock, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new CliError('config_write_failed', `cannot lock ${path}: ${(err as Error).message}`, { exitCode: EXIT.failed });
    }
    let holder: number;
    try {
      holder = Number(readFileSync(lock, 'utf8'));
    } catch {
      continue; // released between our open and our read: try again at once
    }
    if (Number.isInteger(holder) && holder > 0 && pidState(holder) === 'gone') {
      rmSync(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new CliError('config_locked', `${path} is being changed by process ${Number.isInteger(holder) ? holder : '?'} (lock ${lock})`, {
        hint: 'try again in a moment; remove the lock file if that process is gone',
        exitCode: EXIT.failed,
      });
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

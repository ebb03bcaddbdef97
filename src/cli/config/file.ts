/**
 * The config file (profiles): parsing with source positions and validating every key, so each
 * error names the file, the line, the key and what was expected. Pure: text in, model out.
 *
 *   current: prod
 *   profiles:
 *     prod:
 *       nodes: [https://db1.example.net:8443, https://db2.example.net:8443]   # or nodes_file, or seed
 *       header_prefix: X-Snowth
 *       cacert: /etc/tsnode/prod-ca.pem
 *       cert: ~/.tsnode/me.pem
 *       key: ~/.tsnode/me.key
 *       headers:
 *         Authorization: "Bearer ${PROD_TOKEN}"
 *       smallest_span: 60
 *       nnt_rollups: [60, 300, 1800, 10800]
 *       histogram_rollups: [60, 300, 1800, 10800]
 *       write_to: primary            # tsnode write's default --to
 *       allow_lag: 5m                # sweep / retention apply: the replication lag accepted (--allow-lag)
 *       skip_unreachable: true       # sweep / retention apply: leave out nodes that do not answer (--skip-unreachable)
 */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { Alias, Document, Node, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml';
import { validateHeader, HeaderError } from '../../client/headers.js';
import { HEADER_PREFIXES, type HeaderPrefix } from '../../protocol/headers.js';
import { InvalidValueError, UsageError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { NODE_LINE_FORMS, parseNodeEntry } from '../nodes.js';
import { didYouMean } from '../suggest.js';
import { DURATION_FORMS, parseDuration, parseSpan, quote, SPAN_FORMS } from '../values.js';
import { templateProblem } from './secrets.js';
import { WRITE_TARGETS, type WriteTarget } from '../write-targets.js';
import { PROFILE_KEYS, TOP_KEYS, type ProfileKey } from './keys.js';

/**
 * The YAML parser, loaded on the first config file read: most runs have no config file (or no
 * profile in use) and a command's start-up should not pay for a parser it never calls.
 */
let yamlLib: typeof Yaml | undefined;
const yaml = (): typeof Yaml => (yamlLib ??= createRequire(import.meta.url)('yaml') as typeof Yaml);
const isAlias = (n: unknown): n is Alias => yaml().isAlias(n);
const isMap = (n: unknown): n is YAMLMap => yaml().isMap(n);
const isScalar = (n: unknown): n is Scalar => yaml().isScalar(n);
const isSeq = (n: unknown): n is YAMLSeq => yaml().isSeq(n);

export { PROFILE_KEYS, TOP_KEYS, type ProfileKey } from './keys.js';

/** The three ways a profile can name its nodes; at most one per profile. */
export const NODE_SOURCE_KEYS = ['nodes', 'nodes_file', 'seed'] as const;

/** Profile names: something a shell completes and a user types without quotes. */
export const PROFILE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const PROFILE_NAME_FORMS = 'letters, digits, ".", "_" and "-", starting with a letter or digit (at most 64)';

export interface HeaderTemplate {
  name: string;
  /** As written: `${VAR}` references are expanded only when the profile is used. */
  template: string;
  line: number;
}

export interface Profile {
  name: string;
  /** Line of the profile's name. */
  line: number;
  /** Normalised node URLs. */
  nodes?: string[];
  /** As written (relative to the config file's directory, `~` allowed). */
  nodesFile?: string;
  /** Normalised URL of the node to discover the ring from. */
  seed?: string;
  headerPrefix?: HeaderPrefix;
  /** As written, like nodesFile. */
  cacert?: string;
  cert?: string;
  key?: string;
  headers: HeaderTemplate[];
  smallestSpan?: number;
  nntRollups?: number[];
  histogramRollups?: number[];
  /** `tsnode write`'s default `--to`. */
  writeTo?: WriteTarget;
  /** The replication lag `sweep` and `retention apply` accept without `--allow-lag`, in ms. */
  allowLag?: number;
  /** `sweep` and `retention apply` leave out nodes that do not answer, as with `--skip-unreachable`. */
  skipUnreachable?: boolean;
  /** Line of each key present, for messages about it later (an unset ${VAR}, a missing file). */
  lines: Partial<Record<ProfileKey, number>>;
}

export interface ConfigFile {
  /** Absolute path. */
  path: string;
  /** How messages show the path (home as ~). */
  shown: string;
  exists: boolean;
  current?: { name: string; line: number };
  /** In file order. */
  profiles: Map<string, Profile>;
  /** The parsed document, comments included, for writes (undefined when the file does not exist). */
  document?: Document;
}

/** An invalid config file: `file:line: key: problem`, hint `expected ...`. Exit 2. */
export class ConfigFileError extends UsageError {
  readonly file: string;
  readonly line: number | undefined;
  readonly key: string;
  constructor(file: string, line: number | undefined, key: string, problem: string, expected: string) {
    super(`${file}${line === undefined ? '' : `:${line}`}: ${key}: ${problem}`, `expected ${expected}`, EXIT.usage, 'config_invalid');
    this.name = 'ConfigFileError';
    this.file = file;
    this.line = line;
    this.key = key;
  }
}

/** An empty config: what a missing file means. */
export function emptyConfig(path: string, shown = path): ConfigFile {
  return { path, shown, exists: false, profiles: new Map() };
}

/** Parses and validates the text of a config file. Throws ConfigFileError on the first problem. */
export function parseConfig(text: string, path: string, shown = path): ConfigFile {
  const lines = new (yaml().LineCounter)();
  const doc = yaml().parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const lineOf = (node: { range?: readonly number[] | null | undefined } | null | undefined): number | undefined => (node?.range ? lines.linePos(node.range[0]!).line : undefined);
  const fail = (line: number | undefined, key: string, problem: string, expected: string): never => {
    throw new ConfigFileError(shown, line, key, problem, expected);
  };
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const message = e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    fail(lines.linePos(e.pos[0]).line, '(yaml)', message, 'valid YAML: a mapping with current and profiles');
  }
  const deref = (node: unknown): Node | null => (isAlias(node) ? ((node.resolve(doc) as Node | undefined) ?? null) : (node as Node | null));
  const config: ConfigFile = { path, shown, exists: true, profiles: new Map(), document: doc };
  const root = deref(doc.contents);
  if (root === null || (isScalar(root) && root.value === null)) return config;
  if (!isMap(root)) return fail(lineOf(root), '(top level)', 'is not a mapping', 'a mapping with the keys current and profiles');

  for (const pair of root.items) {
    const key = keyName(pair, lineOf, fail, '');
    const value = deref(pair.value);
    const line = lineOf(pair.key as Node);
    if (key === 'current') {
      const name = scalarString(value);
      if (name === undefined || !PROFILE_NAME_RE.test(name))
        fail(line, 'current', `${describe(value)} is not a profile name`, `the name of a profile under profiles (${PROFILE_NAME_FORMS})`);
      config.current = { name: name!, line: line ?? 0 };
    } else if (key === 'profiles') {
      if (value === null || (isScalar(value) && value.value === null)) continue;
      if (!isMap(value)) fail(line, 'profiles', `${describe(value)} is not a mapping`, 'a mapping of profile names to profiles');
      for (const p of (value as { items: Pair[] }).items) {
        const name = keyName(p, lineOf, fail, 'profiles.');
        const pLine = lineOf(p.key as Node) ?? 0;
        if (!PROFILE_NAME_RE.test(name)) fail(pLine, `profiles.${name}`, 'is not a valid profile name', PROFILE_NAME_FORMS);
        config.profiles.set(name, parseProfile(name, pLine, deref(p.value), { lineOf, fail, deref }));
      }
    } else {
      fail(line, key, 'is not a config key', `one of ${TOP_KEYS.join(', ')}${hintSuffix(key, TOP_KEYS)}`);
    }
  }
  return config;
}

type LineOf = (node: { range?: readonly number[] | null | undefined } | null | undefined) => number | undefined;
type Fail = (line: number | undefined, key: string, problem: string, expected: string) => never;

function hintSuffix(typed: string, candidates: readonly string[]): string {
  const s = didYouMean(typed, candidates);
  return s ? ` (${s})` : '';
}

function keyName(pair: Pair, lineOf: LineOf, fail: Fail, prefix: string): string {
  const k = pair.key;
  if (!isScalar(k) || (typeof k.value !== 'string' && typeof k.value !== 'number')) {
    return fail(lineOf(k as Node), `${prefix}(key)`, 'is not a plain name', 'a plain key such as nodes or header_prefix');
  }
  return String(k.value);
}

function scalarString(node: Node | null): string | undefined {
  return isScalar(node) && typeof node.value === 'string' ? node.value : undefined;
}

/** How a value is shown in an error: its text, or what kind of thing it is. */
function describe(node: Node | null): string {
  if (node === null) return 'nothing';
  if (isScalar(node)) return node.value === null ? 'an empty value' : quote(String(node.value));
  if (isSeq(node)) return 'a list';
  if (isMap(node)) return 'a mapping';
  return 'this value';
}

function parseProfile(name: string, line: number, node: Node | null, h: Helpers): Profile {
  const { lineOf, fail, deref } = h;
  const profile: Profile = { name, line, headers: [], lines: {} };
  if (node === null || (isScalar(node) && node.value === null)) return profile;
  const at = `profiles.${name}`;
  if (!isMap(node)) return fail(lineOf(node), at, `${describe(node)} is not a mapping`, `the profile's settings: ${PROFILE_KEYS.join(', ')}`);

  for (const pair of node.items) {
    const key = keyName(pair, lineOf, fail, `${at}.`);
    const keyLine = lineOf(pair.key as Node);
    const value = deref(pair.value);
    const field = `${at}.${key}`;
    const vLine = lineOf(value) ?? keyLine;
    if (!(PROFILE_KEYS as readonly string[]).includes(key)) {
      fail(keyLine, field, 'is not a profile key', `one of ${PROFILE_KEYS.join(', ')}${hintSuffix(key, PROFILE_KEYS)}`);
    }
    const k = key as ProfileKey;
    profile.lines[k] = keyLine ?? line;
    const text = (what: string): string => {
      const s = scalarString(value);
      if (s === undefined || s.trim() === '') fail(vLine, field, `${describe(value)} is not ${what}`, what);
      return s!.trim();
    };
    switch (k) {
      case 'nodes':
        profile.nodes = nodesValue(value, field, vLine, h);
        break;
      case 'seed': {
        const s = text('a node URL');
        try {
          profile.seed = parseNodeEntry(s);
        } catch (err) {
          fail(vLine, field, (err as Error).message, `the URL of one node of the ring: ${NODE_LINE_FORMS}`);
        }
        break;
      }
      case 'nodes_file':
        profile.nodesFile = text("a file path (relative to this file's directory, ~ allowed)");
        break;
      case 'cacert':
      case 'cert':
      case 'key':
        profile[k] = text("a PEM file path (relative to this file's directory, ~ allowed)");
        break;
      case 'header_prefix':
        profile.headerPrefix = headerPrefixValue(value, field, vLine, fail);
        break;
      case 'headers':
        addHeaders(profile.headers, value, field, vLine, line, h);
        break;
      case 'smallest_span':
        profile.smallestSpan = spanValue(value, field, vLine, fail);
        break;
      case 'write_to':
        profile.writeTo = writeToValue(value, field, vLine, fail);
        break;
      case 'allow_lag':
        profile.allowLag = durationValue(value, field, vLine, fail);
        break;
      case 'skip_unreachable':
        // A YAML boolean only: `yes` or "true" in quotes is a string here, and refused rather than guessed.
        if (!isScalar(value) || typeof value.value !== 'boolean') fail(vLine, field, `${describe(value)} is not true or false`, 'true or false');
        profile.skipUnreachable = (value as { value: boolean }).value;
        break;
      case 'nnt_rollups':
        profile.nntRollups = spansValue(value, field, vLine, h);
        break;
      case 'histogram_rollups':
        profile.histogramRollups = spansValue(value, field, vLine, h);
        break;
    }
  }
  checkProfile(profile, at, fail);
  return profile;
}

/** What a profile's keys say together: one node source at most, cert and key both or neither. */
function checkProfile(profile: Profile, at: string, fail: Fail): void {
  const sources = NODE_SOURCE_KEYS.filter((s) => profile.lines[s] !== undefined);
  if (sources.length > 1) {
    const second = sources[1]!;
    fail(profile.lines[second], `${at}.${second}`, `is given beside ${sources[0]}`, `one of ${NODE_SOURCE_KEYS.join(', ')} per profile`);
  }
  if ((profile.cert === undefined) !== (profile.key === undefined)) {
    const [given, missing] = profile.cert !== undefined ? ['cert', 'key'] : ['key', 'cert'];
    fail(profile.lines[given as ProfileKey], `${at}.${given}`, `is given without ${missing}`, 'both cert and key: mutual TLS takes a certificate and its private key');
  }
}

/** A profile's duration (`allow_lag`): the one duration grammar of the flags (values.ts), so `allow_lag: 5m` reads as `--allow-lag 5m`. */
function durationValue(value: Node | null, field: string, vLine: number | undefined, fail: Fail): number {
  const raw = isScalar(value) && (typeof value.value === 'string' || typeof value.value === 'number') ? String(value.value) : undefined;
  if (raw === undefined) fail(vLine, field, `${describe(value)} is not a duration`, DURATION_FORMS);
  try {
    return parseDuration(raw, field);
  } catch (err) {
    // Kept: the config file's error names the file and line, which only this reader knows.
    if (err instanceof InvalidValueError) fail(vLine, field, err.message.replace(`${field}: `, ''), DURATION_FORMS);
    throw err;
  }
}

/** A profile's `header_prefix`: one of the store's two, in any case. */
function headerPrefixValue(value: Node | null, field: string, vLine: number | undefined, fail: Fail): NonNullable<Profile['headerPrefix']> {
  const s = scalarString(value);
  const found = HEADER_PREFIXES.find((p) => p.toLowerCase() === s?.trim().toLowerCase());
  if (found === undefined) fail(vLine, field, `${describe(value)} is not a header prefix`, `one of ${HEADER_PREFIXES.join(', ')}`);
  return found;
}

/** A profile's `write_to`: where `tsnode write` sends records by default. */
function writeToValue(value: Node | null, field: string, vLine: number | undefined, fail: Fail): NonNullable<Profile['writeTo']> {
  const s = scalarString(value)?.trim();
  const found = WRITE_TARGETS.find((t) => t === s);
  if (found === undefined) fail(vLine, field, `${describe(value)} is not a write target`, `one of ${WRITE_TARGETS.join(', ')}`);
  return found;
}

type Helpers = { lineOf: LineOf; fail: Fail; deref: (n: unknown) => Node | null };

/** A profile's `nodes`: a list of nodes, or one comma-separated string of them; each checked, duplicates dropped. */
function nodesValue(value: Node | null, field: string, vLine: number | undefined, h: Helpers): string[] {
  const { lineOf, fail, deref } = h;
  const items: Array<{ text: string; line: number | undefined }> = [];
  if (isSeq(value)) {
    for (const item of value.items) {
      const n = deref(item);
      const s = isScalar(n) && (typeof n.value === 'string' || typeof n.value === 'number') ? String(n.value) : undefined;
      if (s === undefined) fail(lineOf(n) ?? vLine, field, `${describe(n)} is not a node address`, NODE_LINE_FORMS);
      items.push({ text: s!, line: lineOf(n) ?? vLine });
    }
  } else {
    const s = scalarString(value);
    if (s === undefined) fail(vLine, field, `${describe(value)} is not a list of nodes`, `a list of nodes: [${NODE_LINE_FORMS}]`);
    for (const part of s!.split(',')) if (part.trim() !== '') items.push({ text: part, line: vLine });
  }
  if (items.length === 0) fail(vLine, field, 'lists no nodes', `at least one node: ${NODE_LINE_FORMS}`);
  const nodes: string[] = [];
  items.forEach((item, i) => {
    let url = '';
    try {
      url = parseNodeEntry(item.text);
    } catch (err) {
      fail(item.line, `${field}[${i}]`, (err as Error).message, NODE_LINE_FORMS);
    }
    if (!nodes.includes(url)) nodes.push(url);
  });
  return nodes;
}

/** A profile's `headers` added to `headers`: a mapping of names to templates (values never echoed: they may be secrets). */
function addHeaders(headers: Profile['headers'], value: Node | null, field: string, vLine: number | undefined, line: number, h: Helpers): void {
  const { lineOf, fail, deref } = h;
  if (value === null || (isScalar(value) && value.value === null)) return;
  if (!isMap(value)) fail(vLine, field, `${describe(value)} is not a mapping`, 'a mapping of header names to values, e.g. Authorization: "Bearer ${TOKEN}"');
  for (const hp of (value as { items: Pair[] }).items) {
    const hName = keyName(hp, lineOf, fail, `${field}.`);
    const hLine = lineOf(hp.key as Node) ?? vLine ?? line;
    const hv = deref(hp.value);
    const hField = `${field}.${hName}`;
    const template = isScalar(hv) && (typeof hv.value === 'string' || typeof hv.value === 'number') ? String(hv.value) : undefined;
    // Never echo the value: it may be a secret.
    if (template === undefined) fail(hLine, hField, 'is not a text value', 'a header value in quotes, e.g. "Bearer ${TOKEN}"');
    try {
      validateHeader(hName, template!.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*\}/g, 'x'), hField);
    } catch (err) {
      // Kept: the config file's error names the file and line, which only this reader knows.
      if (err instanceof HeaderError) fail(hLine, hField, err.message.replace(`${hField}: `, ''), 'a valid header name and a single-line value');
      throw err;
    }
    const problem = templateProblem(template!);
    if (problem) fail(hLine, hField, problem, '${NAME} references to environment variables, e.g. "Bearer ${PROD_TOKEN}"');
    if (headers.some((x) => x.name.toLowerCase() === hName.toLowerCase())) fail(hLine, hField, 'is given twice (header names are case-insensitive)', 'each header once');
    headers.push({ name: hName, template: template!, line: hLine });
  }
}

/** A profile's `nnt_rollups` / `histogram_rollups`: a list of spans or one comma-separated string, sorted, duplicates dropped. */
function spansValue(value: Node | null, field: string, vLine: number | undefined, h: Helpers): number[] {
  const { lineOf, fail, deref } = h;
  let spans: number[] = [];
  if (isSeq(value)) {
    spans = value.items.map((item) => {
      const n = deref(item);
      return spanValue(n, field, lineOf(n) ?? vLine, fail);
    });
  } else if (scalarString(value) !== undefined) {
    spans = scalarString(value)!
      .split(',')
      .map((part) => spanValue(part, field, vLine, fail));
  } else {
    fail(vLine, field, `${describe(value)} is not a list of spans`, `a list of ${SPAN_FORMS}, e.g. [60, 300, 1800]`);
  }
  if (spans.length === 0) fail(vLine, field, 'lists no spans', `a list of ${SPAN_FORMS}, e.g. [60, 300, 1800]`);
  return [...new Set(spans)].sort((a, b) => a - b);
}

function spanValue(node: Node | string | null, field: string, line: number | undefined, fail: Fail): number {
  const raw = typeof node === 'string' ? node : isScalar(node) && (typeof node.value === 'number' || typeof node.value === 'string') ? String(node.value) : undefined;
  if (raw === undefined) return fail(line, field, `${describe(node as Node | null)} is not a span`, SPAN_FORMS);
  try {
    return parseSpan(raw, field);
  } catch {
    return fail(line, field, `${quote(raw.trim())} is not a span`, SPAN_FORMS);
  }
}

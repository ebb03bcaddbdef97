/**
 * Reading a policy file: YAML (`.yaml`, `.yml`) or JSON (`.json`), of exactly this shape:
 *
 *   nnt:            # numeric spans in seconds -> how long to keep them; "*" = every span not listed
 *     60: 30d
 *     300: 1y
 *   histogram:
 *     60: 30d
 *   text: 90d       # text has no spans
 *
 * Both formats go through the `yaml` parser (JSON is YAML 1.2), which gives every key and value
 * its line and column and keeps duplicate keys visible (JSON.parse silently keeps the last one);
 * JSON files are first checked by JSON.parse so YAML-only syntax is not accepted in a .json file.
 * The text is passed in: this module does no I/O.
 */
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Node as YamlNode, type Pair } from 'yaml';
import type { DataType } from '../protocol/index.js';
import { AGE_EXPECTED } from './age.js';
import { PolicyError, type PolicyLocation } from './errors.js';
import { checkSpanKey, PolicyBuilder, SPAN_EXPECTED, type Policy } from './policy.js';

export type PolicyFormat = 'yaml' | 'json';

const TOP_EXPECTED = 'a map with the keys nnt, histogram and text, e.g. nnt: {60: 30d}';
const TYPE_KEYS = ['nnt', 'histogram', 'text'] as const;

/** The format a file name implies, or undefined. */
export function policyFormatOf(file: string): PolicyFormat | undefined {
  const lower = file.toLowerCase();
  if (lower.endsWith('.yaml') || lower.endsWith('.yml')) return 'yaml';
  if (lower.endsWith('.json')) return 'json';
  return undefined;
}

/**
 * Parses a policy file's text. `file` is the name the user gave (it prefixes every error);
 * `format` defaults to what its extension says, and a file with another extension is refused.
 */
export function parsePolicyFile(text: string, file: string, format: PolicyFormat | undefined = policyFormatOf(file)): Policy {
  if (format === undefined) {
    throw new PolicyError({ file }, '', 'is neither YAML nor JSON by its name', 'a file ending in .yaml, .yml or .json');
  }
  const lines = new LineCounter();
  const at = (offset: number | undefined): PolicyLocation => {
    if (offset === undefined) return { file };
    const p = lines.linePos(offset);
    return { file, line: p.line, column: p.col };
  };
  checkNesting(text, file);
  if (format === 'json') checkJsonSyntax(text, file);
  let doc;
  try {
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false, keepSourceTokens: false });
  } catch (err) {
    // Deep block nesting (indentation) that checkNesting cannot see: still a message about the policy.
    if (err instanceof RangeError) throw new PolicyError({ file }, '', 'nested too deeply to be a policy', TOP_EXPECTED);
    throw err;
  }
  const err = doc.errors[0];
  if (err) {
    const where = at(err.pos[0]);
    const lineText = text.split(/\r?\n/)[(where.line ?? 1) - 1] ?? '';
    // `*: 1y` unquoted is a YAML alias, and the parser's message says nothing about that.
    if (/^\s*\*\s*:/.test(lineText)) {
      throw new PolicyError({ file, line: where.line!, column: lineText.indexOf('*') + 1 }, '', 'an unquoted * is YAML alias syntax', 'a quoted "*" key', {
        hint: 'write "*": 1y (with the quotes)',
      });
    }
    // The parser reports its own stack overflow as a syntax error: say what it means.
    if (/call stack/i.test(err.message)) throw new PolicyError(where, '', 'nested too deeply to be a policy', TOP_EXPECTED);
    throw new PolicyError(where, '', `not valid ${format === 'json' ? 'JSON' : 'YAML'}: ${err.message.split('\n')[0]}`, TOP_EXPECTED);
  }
  const top = doc.contents;
  const b = new PolicyBuilder(file);
  if (top === null || (isScalar(top) && top.value === null)) {
    return b.build({ file }, 'the policy file');
  }
  if (!isMap(top)) throw new PolicyError(at(top.range?.[0]), '', `the document is ${describeNode(top)}`, TOP_EXPECTED);

  const seen = new Map<string, PolicyLocation>();
  for (const pair of top.items as Pair<YamlNode | null, YamlNode | null>[]) {
    const key = pair.key;
    const keyAt = at(key?.range?.[0] ?? pair.value?.range?.[0]);
    refuseAlias(key, keyAt, '');
    if (!isScalar(key) || typeof key.value !== 'string') {
      throw new PolicyError(keyAt, '', `${describeKey(key)} is not a key of a policy`, 'nnt, histogram or text');
    }
    const type = key.value;
    if (!(TYPE_KEYS as readonly string[]).includes(type)) {
      const near = TYPE_KEYS.find((k) => k === type.toLowerCase().trim());
      throw new PolicyError(keyAt, type, 'is not a key of a policy', 'nnt, histogram or text', near ? { hint: `keys are lower case: ${near}` } : {});
    }
    const first = seen.get(type);
    if (first) throw new PolicyError(keyAt, type, `is given twice (first at line ${first.line})`, 'each type once', { hint: 'merge the two into one' });
    seen.set(type, keyAt);
    readType(type as DataType, pair.value, keyAt, b, at);
  }
  return b.build({ file }, 'the policy file');
}

function readType(type: DataType, value: YamlNode | null, keyAt: PolicyLocation, b: PolicyBuilder, at: (offset: number | undefined) => PolicyLocation): void {
  // An empty value has a zero-width range after the colon: point at the key instead.
  const valueAt = value?.range && !isEmpty(value) ? at(value.range[0]) : keyAt;
  refuseAlias(value, valueAt, type);
  if (type === 'text') {
    if (isMap(value)) throw new PolicyError(valueAt, type, 'text has no spans', 'an age, e.g. text: 90d', { hint: 'write text: 90d' });
    b.add('text', null, scalarText(value, valueAt, type), keyAt, type, valueAt);
    return;
  }
  if (isEmpty(value)) {
    throw new PolicyError(keyAt, type, 'is empty', `a map of span -> age, e.g. ${type}: {60: 30d}`, { hint: `list spans or remove ${type}` });
  }
  if (!isMap(value)) {
    const hint = isScalar(value) ? { hint: `to keep every ${type} span ${String(value.value)}, write ${type}: {"*": ${String(value.value)}}` } : {};
    throw new PolicyError(valueAt, type, `is ${describeNode(value)}`, `a map of span -> age, e.g. ${type}: {60: 30d}`, hint);
  }
  if (value.items.length === 0) {
    throw new PolicyError(valueAt, type, 'has no spans', `a map of span -> age, e.g. ${type}: {60: 30d}`, { hint: `list spans or remove ${type}` });
  }
  for (const pair of value.items as Pair<YamlNode | null, YamlNode | null>[]) {
    const key = pair.key;
    const spanAt = at(key?.range?.[0] ?? pair.value?.range?.[0]);
    refuseAlias(key, spanAt, type);
    if (!isScalar(key) || key.value === null || typeof key.value === 'object') {
      throw new PolicyError(spanAt, type, `${describeKey(key)} is not a span`, SPAN_EXPECTED);
    }
    // The key as written: 60, "60" and '60' are one span; 0x3C, 60.0 and 6e1 are refused.
    const written = (key as { source?: string }).source ?? String(key.value);
    const span = checkSpanKey(written);
    if (!span.ok) throw new PolicyError(spanAt, `${type}.${written}`, span.problem, SPAN_EXPECTED, { value: written, ...(span.hint ? { hint: span.hint } : {}) });
    const path = `${type}.${span.span}`;
    const ageAt = pair.value?.range && !isEmpty(pair.value) ? at(pair.value.range[0]) : spanAt;
    refuseAlias(pair.value, ageAt, path);
    b.add(type, span.span, scalarText(pair.value, ageAt, path), spanAt, path, ageAt);
  }
}

/** An age's text; anything but a scalar is an error at `where`. */
function scalarText(node: YamlNode | null, where: PolicyLocation, path: string): string {
  if (isEmpty(node)) throw new PolicyError(where, path, 'no age given', AGE_EXPECTED);
  if (!isScalar(node)) throw new PolicyError(where, path, `is ${describeNode(node)}`, AGE_EXPECTED);
  // A bare number (90) arrives as a number: keep its text so the error says "has no unit".
  const v = node.value;
  return typeof v === 'string' ? v : ((node as { source?: string }).source ?? String(v));
}

function isEmpty(node: YamlNode | null): boolean {
  return node === null || (isScalar(node) && node.value === null);
}

function refuseAlias(node: YamlNode | null, where: PolicyLocation, path: string): void {
  if (isAlias(node)) {
    throw new PolicyError(where, path, `the alias *${node.source} is not supported in a policy`, 'plain values', {
      hint: 'write the value out; a key named * must be quoted: "*"',
    });
  }
}

function describeNode(node: YamlNode | null): string {
  if (node === null) return 'empty';
  if (isMap(node)) return 'a map';
  if (isSeq(node)) return 'a list';
  if (isScalar(node)) return node.value === null ? 'empty' : `${typeof node.value === 'string' ? 'the text' : 'the value'} ${JSON.stringify(node.value)}`;
  return 'not a plain value';
}

function describeKey(node: YamlNode | null): string {
  if (node === null) return 'an empty key';
  if (isScalar(node)) return `the key ${JSON.stringify(node.value)}`;
  return `a ${isMap(node) ? 'map' : isSeq(node) ? 'list' : 'complex'} key`;
}

/** A policy is type -> span -> age: nothing deeper is valid, so a deeper file is refused before a parser recurses into it. */
const MAX_NESTING = 16;

/**
 * Refuses brackets or braces nested deeper than MAX_NESTING (outside quoted text), naming where:
 * both parsers recurse per level, and a file of 20,000 `[` would end in "Maximum call stack size
 * exceeded" instead of a message about the policy.
 */
function checkNesting(text: string, file: string): void {
  let depth = 0;
  let quote: string | null = null;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') {
      line++;
      lineStart = i + 1;
    } else if (quote !== null) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '{') {
      if (++depth > MAX_NESTING) {
        throw new PolicyError({ file, line, column: i - lineStart + 1 }, '', `nested more than ${MAX_NESTING} levels deep`, TOP_EXPECTED);
      }
    } else if (c === ']' || c === '}') depth = Math.max(0, depth - 1);
  }
}

/** JSON.parse as the judge of JSON syntax, with its position turned into line and column. */
function checkJsonSyntax(text: string, file: string): void {
  try {
    JSON.parse(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const pos = /position (\d+)/.exec(message);
    let where: PolicyLocation = { file };
    if (pos) {
      const offset = Number(pos[1]);
      const before = text.slice(0, offset).split('\n');
      where = { file, line: before.length, column: before[before.length - 1]!.length + 1 };
    } else if (text.trim() === '') {
      throw new PolicyError({ file }, '', 'the file is empty', TOP_EXPECTED);
    }
    // V8's message quotes the text around the fault (newlines and all): keep only its first clause.
    const reason = message
      .split('\n')[0]!
      .replace(/ in JSON at position \d+.*$/, '')
      .replace(/, ".*$/, '');
    throw new PolicyError(where, '', `not valid JSON: ${reason}`, TOP_EXPECTED);
  }
}

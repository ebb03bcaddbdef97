/**
 * The store's tag-query language (circonus/product-docs `irondb/metric-names-tags-queries.md`):
 *
 *   query   = and(list) | or(list) | not(element)
 *   element = query | category:value | category
 *   side    = literal (a glob when it holds `*`) | "quoted" | b"base64" | /regex/ | b/base64 regex/,
 *             optionally preceded by a match impl `[default]`, `[exact]` or `[re]`
 *
 * Parsing is pure: a query that does not parse throws a TagQueryError carrying the 1-based column
 * where it went wrong, so the client can refuse it before anything is sent and the node can answer
 * 400 with the same words.
 */
import { TsnodeError } from '../tsnode-error.js';
import { parseActivity, type ActivityRange } from './activity.js';
import { compileRegex } from './regex.js';

/** How one side of a tag element matches: a literal, a glob (`*` any run of characters), or a regex. */
export type Pattern = { kind: 'literal'; text: string } | { kind: 'glob'; text: string; re: RegExp } | { kind: 'regex'; source: string; re: RegExp };

export type TagQuery =
  | { kind: 'and'; items: TagQuery[] }
  | { kind: 'or'; items: TagQuery[] }
  | { kind: 'not'; item: TagQuery }
  /** `value` null: a bare category (the tag is present, whatever its value). */
  | { kind: 'tag'; category: Pattern; value: Pattern | null }
  /** `__activity:<start>-<end>`: the metric has data in the range (both ends inclusive). */
  | { kind: 'activity'; range: ActivityRange };

export class TagQueryError extends TsnodeError {
  declare readonly code: 'invalid_tag_query';
  /** 1-based column of the query where the error is. */
  readonly column: number;
  constructor(message: string, column: number) {
    super('invalid_tag_query', `${message} at column ${column}`);
    this.name = 'TagQueryError';
    this.column = column;
  }
}

/** Characters a bare category may hold (the docs' set, plus `*` for globs). */
const CATEGORY_CHARS = /[A-Za-z0-9`+!@#$%^&"'/?._*-]/;
/** A bare value may hold the category characters plus `:` and `=`. */
const VALUE_CHARS = /[A-Za-z0-9`+!@#$%^&"'/?._*:=-]/;
const IMPLS = ['default', 'exact', 're'] as const;
type Impl = (typeof IMPLS)[number];

/** Parses a tag query; throws TagQueryError with the column of the first problem. */
export function parseTagQuery(text: string): TagQuery {
  const p = new Parser(text);
  if (text.trim() === '') throw new TagQueryError('empty query: expected and(...), or(...) or not(...)', 1);
  const q = p.query();
  p.end();
  return q;
}

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  private fail(message: string, at = this.i): never {
    throw new TagQueryError(message, at + 1);
  }

  private peek(): string | undefined {
    return this.s[this.i];
  }

  private expect(ch: string): void {
    if (this.s[this.i] !== ch) this.fail(`expected '${ch}' but found ${this.describe()}`);
    this.i++;
  }

  private describe(): string {
    const c = this.s[this.i];
    return c === undefined ? 'the end of the query' : `'${c}'`;
  }

  end(): void {
    if (this.i < this.s.length) this.fail(`unexpected ${this.describe()} after the query`);
  }

  /** and(...), or(...) or not(...). */
  query(): TagQuery {
    for (const op of ['and', 'or', 'not'] as const) {
      if (this.s.startsWith(`${op}(`, this.i)) {
        this.i += op.length + 1;
        if (op === 'not') {
          const item = this.element();
          this.expect(')');
          return { kind: 'not', item };
        }
        const items = [this.element()];
        while (this.peek() === ',') {
          this.i++;
          items.push(this.element());
        }
        this.expect(')');
        return { kind: op, items };
      }
    }
    return this.fail(`expected and(, or( or not( but found ${this.describe()}`);
  }

  private element(): TagQuery {
    if (/^(and|or|not)\(/.test(this.s.slice(this.i, this.i + 4))) return this.query();
    const category = this.side('category');
    if (this.peek() !== ':') return { kind: 'tag', category, value: null };
    this.i++;
    if (category.kind === 'literal' && category.text === '__activity') {
      const valueStart = this.i;
      const raw = this.bareRun(VALUE_CHARS);
      try {
        return { kind: 'activity', range: parseActivity(raw) };
      } catch (err) {
        return this.fail((err as Error).message, valueStart);
      }
    }
    const value = this.side('value');
    return { kind: 'tag', category, value };
  }

  /** One side of a tag element, with its optional match impl. */
  private side(which: 'category' | 'value'): Pattern {
    const chars = which === 'category' ? CATEGORY_CHARS : VALUE_CHARS;
    const at = this.i;
    let impl: Impl = 'default';
    let encoded = false;
    if (this.peek() === 'b' && (this.s[this.i + 1] === '[' || this.s[this.i + 1] === '"' || this.s[this.i + 1] === '/')) {
      encoded = true;
      this.i++;
    }
    if (this.peek() === '[') impl = this.impl();
    const c = this.peek();
    if (c === '/') return this.regex(this.delimited('/'), encoded, at);
    if (c === '"') {
      const text = encoded ? this.decode(this.delimited('"'), at) : this.quoted();
      return this.pattern(text, impl, at);
    }
    if (encoded) this.fail(`expected "..." or /.../ after b`);
    const text = this.bareRun(chars);
    if (text === '' && which === 'category') this.fail(`expected a tag category but found ${this.describe()}`);
    return this.pattern(text, impl, at);
  }

  private impl(): Impl {
    const at = this.i;
    const close = this.s.indexOf(']', this.i);
    const name = close < 0 ? '' : this.s.slice(this.i + 1, close);
    if (name === 'graphite') this.fail('the [graphite] match impl is not supported by tsnode', at);
    if (!(IMPLS as readonly string[]).includes(name)) this.fail(`unknown match impl '[${name}]': expected [default], [exact] or [re]`, at);
    this.i = close + 1;
    return name as Impl;
  }

  private pattern(text: string, impl: Impl, at: number): Pattern {
    if (impl === 're') return this.regex(text, false, at);
    if (impl === 'exact' || !text.includes('*')) return { kind: 'literal', text };
    return { kind: 'glob', text, re: globRegex(text) };
  }

  private regex(source: string, encoded: boolean, at: number): Pattern {
    const src = encoded ? this.decode(source, at) : source;
    try {
      return { kind: 'regex', source: src, re: compileRegex(src) };
    } catch (err) {
      return this.fail((err as Error).message, at);
    }
  }

  /** The text up to the closing delimiter (a backslash keeps the next character), which is consumed. */
  private delimited(delim: string): string {
    const open = this.i;
    this.i++;
    let out = '';
    while (this.i < this.s.length && this.s[this.i] !== delim) {
      const step = this.s[this.i] === '\\' && this.i + 1 < this.s.length ? 2 : 1;
      out += this.s.slice(this.i, this.i + step);
      this.i += step;
    }
    if (this.i >= this.s.length) this.fail(`unterminated ${delim}...${delim}`, open);
    this.i++;
    return out;
  }

  /** A double-quoted string: printable ASCII, `\"` and `\\` escaped. */
  private quoted(): string {
    const open = this.i;
    this.i++;
    let out = '';
    for (;;) {
      const c = this.s[this.i];
      if (c === undefined) this.fail('unterminated "..."', open);
      if (c === '"') break;
      if (c === '\\') {
        const n = this.s[this.i + 1];
        if (n !== '"' && n !== '\\') this.fail(`in "...", only \\" and \\\\ are escapes`);
        out += n;
        this.i += 2;
        continue;
      }
      if (c < ' ' || c > '~') this.fail('in "...", only printable ASCII is allowed');
      out += c;
      this.i++;
    }
    this.i++;
    return out;
  }

  private decode(b64: string, at: number): string {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 !== 0) this.fail('not valid base64', at);
    return Buffer.from(b64, 'base64').toString('utf8');
  }

  private bareRun(chars: RegExp): string {
    const start = this.i;
    while (this.i < this.s.length && chars.test(this.s[this.i]!)) this.i++;
    return this.s.slice(start, this.i);
  }
}

/** A glob as an anchored regex: `*` is any run of characters, everything else literal. */
export function globRegex(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
    .join('[\\s\\S]*');
  return new RegExp(`^${body}$`, 's');
}

/**
 * Regular expressions of tag queries. The store reads them as PCRE2; tsnode runs JavaScript's
 * engine, compiled with the `u` flag (strict: an escape or bracket JavaScript would otherwise read
 * as a literal is a syntax error). Where the two read the same text differently, the pattern is
 * refused rather than matched differently from the store:
 *
 * | PCRE2 construct | why it is refused |
 * |---|---|
 * | possessive quantifiers `a*+ a++ a?+ a{n}+` | JavaScript has none (`a++` is a syntax error there, `a*+` too) |
 * | atomic groups `(?>...)`, branch reset `(?\|...)`, recursion `(?R)` `(?1)` `(?&name)`, conditionals `(?(...)...)`, callouts `(?C)`, comments `(?#...)`, `(?P<name>...)` | no JavaScript equivalent |
 * | inline options `(?i)` `(?x)` `(?i:...)` | older JavaScript engines reject them, newer ones accept only some: refused for one meaning everywhere |
 * | `\A \Z \z \G \K \Q...\E \R \X \C \N \h \H \e \o{} \g` | PCRE2 escapes JavaScript lacks or reads otherwise |
 * | `\v \V` | PCRE2: vertical whitespace class; JavaScript: the vertical-tab character |
 * | `\x{...}` | PCRE2's code point escape; JavaScript writes `\u{...}` |
 * | POSIX classes `[[:alpha:]]` | JavaScript reads `[[:alpha:]` as a set followed by `]` |
 * | `[]a]`, `[^]a]` | PCRE2: `]` first in a class is a literal; JavaScript: `[]` is the empty class, `[^]` any character |
 * | `$` | PCRE2's `$` also matches before a final newline; metric names hold no newlines, so it is kept |
 *
 * Both search (unanchored) unless the pattern anchors itself with `^`/`$`.
 */

const REFUSED_GROUPS: Array<[RegExp, string]> = [
  [/^\(\?>/, 'atomic groups (?>...)'],
  [/^\(\?\|/, 'branch reset groups (?|...)'],
  [/^\(\?(R|[+-]?\d|&)/, 'recursion and subroutine calls'],
  [/^\(\?\(/, 'conditional groups (?(...)...)'],
  [/^\(\?C/, 'callouts (?C...)'],
  [/^\(\?#/, 'comments (?#...)'],
  [/^\(\?P/, 'Python-style named groups (?P...)'],
  [/^\(\?\*/, 'alpha assertions (?*...)'],
  [/^\(\?\^?[a-zA-Z-]+[):]/, 'inline options such as (?i)'],
  [/^\(\*/, 'verbs such as (*UTF)'],
];

const REFUSED_ESCAPES = 'AZzGKQERXCNhHeovVgx';

/** Compiles a tag-query regex, or throws an Error saying what tsnode cannot honour. */
export function compileRegex(source: string): RegExp {
  const problem = pcreOnly(source);
  if (problem !== null) throw new Error(`regex /${source}/ uses ${problem}, which tsnode's JavaScript engine cannot match as the store's PCRE2 does`);
  try {
    return new RegExp(source, 'u');
  } catch (err) {
    throw new Error(`regex /${source}/ does not compile: ${(err as Error).message.replace(/^Invalid regular expression: /, '')}`, { cause: err });
  }
}

/** The first PCRE2-only construct in `src`, or null. */
function pcreOnly(src: string): string | null {
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\') {
      const n = src[i + 1] ?? '';
      if (n === 'x' && src[i + 2] === '{') return 'the escape \\x{...}';
      if (n !== 'x' && REFUSED_ESCAPES.includes(n)) return `the escape \\${n}`;
      i++;
      continue;
    }
    if (inClass) {
      if (c === '[' && src[i + 1] === ':') return 'POSIX classes [[:...:]]';
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      if (src[i + 1] === '^') i++;
      if (src[i + 1] === ']') return 'a ] first in a character class (a literal in PCRE2, the end of the class in JavaScript)';
      if (src[i + 1] === '[' && src[i + 2] === ':') return 'POSIX classes [[:...:]]';
      continue;
    }
    if (c === '(') {
      const rest = src.slice(i, i + 6);
      for (const [re, what] of REFUSED_GROUPS) if (re.test(rest)) return what;
      continue;
    }
    if ((c === '*' || c === '+' || c === '?' || c === '}') && src[i + 1] === '+' && i > 0) return 'possessive quantifiers';
  }
  return null;
}

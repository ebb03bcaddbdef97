import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchesQuery, parseActivity, parseMetricName, parseTagQuery, TagQueryError } from '../../src/tags/index.js';

const UUID = '6f6bdc73-2352-4bdc-ab0e-72f66d0dee12';
// The docs' example metrics (metric-names-tags-queries.md, "Query Examples").
const DOC_METRICS = ['foo|ST[region:us-east-1,app:myapp]', 'bar|ST[region:us-east-2,app:myapp]', 'baz|ST[region:us-west-1,app:myapp]', 'quux|ST[region:us-west-2,app:yourapp]'];

function names(query: string, metrics = DOC_METRICS, uuid = UUID): string[] {
  const q = parseTagQuery(query);
  return metrics.filter((metric) => matchesQuery(q, { uuid, metric })).map((m) => parseMetricName(m).name);
}

function columnOf(query: string): number {
  try {
    parseTagQuery(query);
  } catch (err) {
    expect(err).toBeInstanceOf(TagQueryError);
    return (err as TagQueryError).column;
  }
  throw new Error(`${query} parsed`);
}

describe('the docs examples', () => {
  it('and(app:myapp)', () => expect(names('and(app:myapp)')).toEqual(['foo', 'bar', 'baz']));
  it('globs and regexes select us-east', () => {
    expect(names('and(region:us-east-*)')).toEqual(['foo', 'bar']);
    expect(names('and(region:/us-east-.*/)')).toEqual(['foo', 'bar']);
  });
  it('or(__name:bar,__name:quux)', () => expect(names('or(__name:bar,__name:quux)')).toEqual(['bar', 'quux']));
  it("parses the docs' or(and(...),and(...)) example as written (its stray comma makes a bare category)", () => {
    // `app:,myapp` reads as `app:` (empty value) and the bare category `myapp`: nothing has those.
    expect(names('or(and(region:us-east-2,app:,myapp),and(region:us-west-2,app:yourapp))')).toEqual(['quux']);
    expect(names('or(and(region:us-east-2,app:myapp),and(region:us-west-2,app:yourapp))')).toEqual(['bar', 'quux']);
  });
  it('*:* matches every metric, tagged or not', () => expect(names('and(*:*)', [...DOC_METRICS, 'plain'])).toEqual(['foo', 'bar', 'baz', 'quux', 'plain']));
  it('glob categories and values', () => {
    expect(names('and(reg*:us-west*)')).toEqual(['baz', 'quux']);
    expect(names('and(categ*:value)', ['a|ST[category:value]', 'b|ST[category:other]'])).toEqual(['a']);
  });
  it('regexes on either side', () => {
    expect(names('and(/^reg/:/west-2$/)')).toEqual(['quux']);
    expect(names('and(/^app$/:yourapp)')).toEqual(['quux']);
  });
  it('__check_uuid and __name', () => {
    expect(names(`and(__check_uuid:${UUID},__name:multiple_example*)`, ['multiple_example_cpu', 'other'])).toEqual(['multiple_example_cpu']);
    expect(names(`and(__check_uuid:00000000-0000-4000-8000-000000000000)`)).toEqual([]);
  });
  it('not()', () => expect(names('not(app:myapp)')).toEqual(['quux']));
  it('quoted and base64 sides', () => {
    const metrics = ['x|ST[~(category):<value>]', 'y|ST[other:v]'];
    expect(names('and("~(category)":"<value>")', metrics)).toEqual(['x']);
    expect(names('and(b"fihjYXRlZ29yeSk=":b"PHZhbHVlPg==")', metrics)).toEqual(['x']);
    expect(names('and(b"fihjYXRlZ29yeSk=":b"PHZhbHVlPg==")', ['x|ST[b"fihjYXRlZ29yeSk=":b"PHZhbHVlPg=="]'])).toEqual(['x']);
  });
  it('[exact] turns a glob off; a quoted * stays a glob', () => {
    const metrics = ['a|ST[foo*:bar]', 'b|ST[fooz:bar]'];
    expect(names('and([exact]"foo*":"bar")', metrics)).toEqual(['a']);
    expect(names('and("foo*":"bar")', metrics)).toEqual(['a', 'b']);
    expect(names('and(b[exact]"Zm9vKg==":b"YmFy")', metrics)).toEqual(['a']);
  });
  it('[re] and a base64 regex', () => {
    expect(names('and(app:[re]your.*)')).toEqual(['quux']);
    expect(names('and(__name:b/KGZvb3xiYXIp/)')).toEqual(['foo', 'bar']); // (foo|bar)
  });
  it('__activity in the hyphen form', () => {
    const q = parseTagQuery('and(__name:query_count,__activity:1569869100-1569870000)');
    const seen: Array<[number, number]> = [];
    const hit = matchesQuery(q, { uuid: UUID, metric: 'query_count', hasActivity: (r) => (seen.push([r.start, r.end]), true) });
    expect(hit).toBe(true);
    expect(seen).toEqual([[1569869100, 1569870000]]);
    expect(parseActivity('-1641600000')).toEqual({ start: -Infinity, end: 1641600000 });
    expect(parseActivity('1-')).toEqual({ start: -Infinity, end: Infinity });
    expect(parseActivity('1640995200.5-')).toEqual({ start: 1640995200.5, end: Infinity });
  });
});

describe('refusals, with a 1-based column', () => {
  it.each([
    ['', 1],
    ['app:myapp', 1],
    ['and(app:myapp', 14],
    ['and(app:myapp))', 15],
    ['and(,x)', 5],
    ['and(a:b)x', 9],
    ['nor(a:b)', 1],
    ['and(a:"unterminated)', 7],
    ['and(a:[graphite]x.y)', 7],
    ['and(a:[fuzzy]x)', 7],
    ['and(a:/(unclosed/)', 7],
    ['and(__activity:-2w:-1w)', 16],
    ['and(__activity:5-4)', 16],
    ['and(a:b"!!!")', 7],
  ])('%s -> column %i', (query, column) => expect(columnOf(query)).toBe(column));

  it.each([
    ['a++', 'possessive'],
    ['(?>a)', 'atomic'],
    ['(?i)abc', 'inline options'],
    ['\\Aabc', '\\A'],
    ['a\\z', '\\z'],
    ['\\x{41}', '\\x{'],
    ['[[:alpha:]]', 'POSIX'],
    ['\\v', '\\v'],
    ['(?P<n>a)', 'Python'],
    ['\\Qa.b\\E', '\\Q'],
    ['[^]a]', 'first in a character class'],
  ])('refuses the PCRE2-only /%s/', (re, what) => {
    expect(() => parseTagQuery(`and(a:/${re}/)`)).toThrow(what);
  });

  it('accepts what both engines read alike', () => {
    for (const re of ['^a.*b$', '(?:x|y)+', 'a(?=b)', '(?<!x)y', '[^\\]a-z]', '\\d{2,3}?', '(?<name>a)\\k<name>']) expect(() => parseTagQuery(`and(a:/${re}/)`)).not.toThrow();
  });
});

describe('invariants', () => {
  const word = fc.stringMatching(/^[a-z][a-z0-9._-]{0,8}$/);
  const tag = fc.record({ category: word, value: word });

  it('a metric matches and(cat:val) of each of its tags, and not() is the opposite', () => {
    fc.assert(
      fc.property(word, fc.array(tag, { minLength: 1, maxLength: 5 }), (name, tags) => {
        const metric = `${name}|ST[${tags.map((t) => `${t.category}:${t.value}`).join(',')}]`;
        for (const t of tags) {
          expect(matchesQuery(parseTagQuery(`and(${t.category}:${t.value})`), { uuid: UUID, metric })).toBe(true);
          expect(matchesQuery(parseTagQuery(`not(${t.category}:${t.value})`), { uuid: UUID, metric })).toBe(false);
        }
        expect(matchesQuery(parseTagQuery(`and(__name:${name})`), { uuid: UUID, metric })).toBe(true);
      }),
    );
  });

  it('any text either parses or fails with a TagQueryError whose column lies within it', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (text) => {
        try {
          parseTagQuery(text);
        } catch (err) {
          expect(err).toBeInstanceOf(TagQueryError);
          expect((err as TagQueryError).column).toBeGreaterThanOrEqual(1);
          expect((err as TagQueryError).column).toBeLessThanOrEqual(text.length + 1);
        }
      }),
    );
  });
});

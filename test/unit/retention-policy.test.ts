import { describe, expect, it } from 'vitest';
import { parsePolicyFile, parseRules, PolicyError, policyFormatOf, policyToObject, type Policy } from '../../src/retention/index.js';

const EXAMPLE_YAML = `# numeric spans in seconds -> how long to keep them; "*" = every span not listed
nnt:
  60: 30d
  300: 1y
histogram:
  60: 30d
text: 90d          # text has no spans
`;

/** Rules without where they came from: what two spellings of one policy must agree on. */
const meaning = (p: Policy) => p.rules.map(({ origin: _origin, ...r }) => r);

function failure(fn: () => unknown): PolicyError {
  try {
    fn();
  } catch (err) {
    if (err instanceof PolicyError) return err;
    throw err;
  }
  throw new Error('expected a PolicyError');
}

describe('policy file: the issue example', () => {
  it('YAML gives one rule per span, in canonical order, each with its line and column', () => {
    const p = parsePolicyFile(EXAMPLE_YAML, 'policy.yaml');
    expect(p.source).toBe('policy.yaml');
    expect(p.rules).toEqual([
      { type: 'nnt', span: 60, ageSeconds: 2_592_000, age: '30d', origin: 'policy.yaml:3:3' },
      { type: 'nnt', span: 300, ageSeconds: 31_536_000, age: '1y', origin: 'policy.yaml:4:3' },
      { type: 'histogram', span: 60, ageSeconds: 2_592_000, age: '30d', origin: 'policy.yaml:6:3' },
      { type: 'text', span: null, ageSeconds: 7_776_000, age: '90d', origin: 'policy.yaml:7:1' },
    ]);
    expect(policyToObject(p)).toEqual({ nnt: { 60: '30d', 300: '1y' }, histogram: { 60: '30d' }, text: '90d' });
  });

  it('JSON and --rule spell the same policy', () => {
    const yaml = parsePolicyFile(EXAMPLE_YAML, 'p.yml');
    const json = parsePolicyFile('{"text": "90d", "nnt": {"300": "1y", "60": "30d"}, "histogram": {"60": "30d"}}', 'p.json');
    const rules = parseRules(['text=90d', 'nnt:300=1y', 'histogram:60=30d', 'nnt:60=30d']);
    expect(meaning(json)).toEqual(meaning(yaml));
    expect(meaning(rules)).toEqual(meaning(yaml));
    expect(json.rules[0]!.origin).toBe('p.json:1:38');
    expect(rules.rules[0]!.origin).toBe('--rule "nnt:60=30d"');
  });

  it('"*" (quoted in YAML), spans quoted or not, and a wildcard after the listed spans', () => {
    const p = parsePolicyFile('nnt:\n  "*": 1y\n  \'300\': 90d\n  60: 7d\nhistogram: {"*": 30d}\n', 'p.yaml');
    expect(p.rules.map((r) => `${r.type}:${r.span}=${r.age}`)).toEqual(['nnt:60=7d', 'nnt:300=90d', 'nnt:*=1y', 'histogram:*=30d']);
    expect(meaning(parseRules(['nnt:*=1y', 'nnt:300=90d', 'nnt:60=7d', 'histogram:*=30d']))).toEqual(meaning(p));
  });

  it.each([
    ['policy.yaml', 'yaml'],
    ['P.YML', 'yaml'],
    ['retention.json', 'json'],
    ['policy.txt', undefined],
    ['policy', undefined],
  ])('format of %s is %s', (file, format) => {
    expect(policyFormatOf(file)).toBe(format);
  });
});

describe('policy file errors name file, line, column, key, value and what was expected', () => {
  it.each([
    // [case, file, text, message]
    ['an unknown top-level key', 'p.yaml', 'nnt:\n  60: 30d\nraw: 1y\n', 'p.yaml:3:1: raw: is not a key of a policy (expected nnt, histogram or text)'],
    ['a key in the wrong case', 'p.yaml', 'NNT:\n  60: 30d\n', 'p.yaml:1:1: NNT: is not a key of a policy (expected nnt, histogram or text)'],
    [
      'a bad age',
      'p.yaml',
      'nnt:\n  60: 30x\n',
      'p.yaml:2:7: nnt.60: "30x" has an unknown unit "x" (expected a number and a unit: s, m, h, d, w or y (365 days), e.g. 30d, 12h, 1y)',
    ],
    ['an age without unit', 'p.yaml', 'nnt:\n  60: 30\n', 'p.yaml:2:7: nnt.60: "30" has no unit (expected a number and a unit: s, m, h, d, w or y (365 days), e.g. 30d, 12h, 1y)'],
    ['a zero age', 'p.yaml', 'text: 0d\n', 'p.yaml:1:7: text: "0d" is zero (expected a number and a unit: s, m, h, d, w or y (365 days), e.g. 30d, 12h, 1y)'],
    ['a negative age', 'p.yaml', 'text: -3d\n', 'p.yaml:1:7: text: "-3d" is negative (expected a number and a unit: s, m, h, d, w or y (365 days), e.g. 30d, 12h, 1y)'],
    [
      'an age in ms',
      'p.yaml',
      'nnt:\n  60: 500ms\n',
      'p.yaml:2:7: nnt.60: "500ms" is in milliseconds (expected a number and a unit: s, m, h, d, w or y (365 days), e.g. 30d, 12h, 1y)',
    ],
    ['a span with a unit', 'p.yaml', 'nnt:\n  60s: 30d\n', 'p.yaml:2:3: nnt.60s: span "60s" has a unit (expected a span in whole seconds (e.g. 60) or "*")'],
    ['a span of zero', 'p.yaml', 'nnt:\n  0: 30d\n', 'p.yaml:2:3: nnt.0: span 0 is not a span (expected a span in whole seconds (e.g. 60) or "*")'],
    ['a negative span', 'p.yaml', 'nnt:\n  -60: 30d\n', 'p.yaml:2:3: nnt.-60: span "-60" is negative (expected a span in whole seconds (e.g. 60) or "*")'],
    ['a fractional span', 'p.yaml', 'nnt:\n  0.5: 30d\n', 'p.yaml:2:3: nnt.0.5: span "0.5" is not whole seconds (expected a span in whole seconds (e.g. 60) or "*")'],
    ['a hex span', 'p.yaml', 'nnt:\n  0x3C: 30d\n', 'p.yaml:2:3: nnt.0x3C: "0x3C" is not a span (expected a span in whole seconds (e.g. 60) or "*")'],
    ['a span with a leading zero', 'p.yaml', 'nnt:\n  060: 30d\n', 'p.yaml:2:3: nnt.060: span "060" has a leading zero (expected a span in whole seconds (e.g. 60) or "*")'],
    ['a span key that is a word', 'p.yaml', 'nnt:\n  all: 30d\n', 'p.yaml:2:3: nnt.all: "all" is not a span (expected a span in whole seconds (e.g. 60) or "*")'],
    ['a duplicate span', 'p.yaml', 'nnt:\n  60: 30d\n  300: 1y\n  60: 7d\n', 'p.yaml:4:3: nnt.60: nnt span 60 is given twice (first at p.yaml:2:3) (expected one rule per span)'],
    ['one span quoted and plain', 'p.yaml', 'nnt:\n  60: 30d\n  "60": 7d\n', 'p.yaml:3:3: nnt.60: nnt span 60 is given twice (first at p.yaml:2:3) (expected one rule per span)'],
    ['a duplicate wildcard', 'p.yaml', 'nnt:\n  "*": 30d\n  \'*\': 7d\n', 'p.yaml:3:3: nnt.*: nnt "*" is given twice (first at p.yaml:2:3) (expected one rule per span)'],
    ['a duplicate type', 'p.yaml', 'nnt:\n  60: 30d\nnnt:\n  300: 1y\n', 'p.yaml:3:1: nnt: is given twice (first at line 1) (expected each type once)'],
    ['text with spans', 'p.yaml', 'text:\n  60: 30d\n', 'p.yaml:2:3: text: text has no spans (expected an age, e.g. text: 90d)'],
    ['text empty', 'p.yaml', 'text:\nnnt:\n  60: 1d\n', 'p.yaml:1:1: text: no age given (expected a number and a unit: s, m, h, d, w or y (365 days), e.g. 30d, 12h, 1y)'],
    ['nnt as a plain age', 'p.yaml', 'nnt: 30d\n', 'p.yaml:1:6: nnt: is the text "30d" (expected a map of span -> age, e.g. nnt: {60: 30d})'],
    ['nnt as a list', 'p.yaml', 'nnt: [60, 300]\n', 'p.yaml:1:6: nnt: is a list (expected a map of span -> age, e.g. nnt: {60: 30d})'],
    ['nnt empty', 'p.yaml', 'nnt:\ntext: 1d\n', 'p.yaml:1:1: nnt: is empty (expected a map of span -> age, e.g. nnt: {60: 30d})'],
    ['nnt with no spans', 'p.yaml', 'histogram: {}\n', 'p.yaml:1:12: histogram: has no spans (expected a map of span -> age, e.g. histogram: {60: 30d})'],
    [
      'an age that is a map',
      'p.yaml',
      'nnt:\n  60:\n    keep: 30d\n',
      'p.yaml:3:5: nnt.60: is a map (expected a number and a unit: s, m, h, d, w or y (365 days), e.g. 30d, 12h, 1y)',
    ],
    ['an empty age', 'p.yaml', 'nnt:\n  60:\n', 'p.yaml:2:3: nnt.60: no age given (expected a number and a unit: s, m, h, d, w or y (365 days), e.g. 30d, 12h, 1y)'],
    ['an empty file', 'p.yaml', '', 'p.yaml: the policy file has no rules (expected at least one rule, e.g. nnt: {60: 30d} or --rule nnt:60=30d)'],
    ['a file of comments', 'p.yaml', '# nothing yet\n', 'p.yaml: the policy file has no rules (expected at least one rule, e.g. nnt: {60: 30d} or --rule nnt:60=30d)'],
    ['an empty map', 'p.json', '{}', 'p.json: the policy file has no rules (expected at least one rule, e.g. nnt: {60: 30d} or --rule nnt:60=30d)'],
    ['a list document', 'p.yaml', '- nnt\n', 'p.yaml:1:1: the document is a list (expected a map with the keys nnt, histogram and text, e.g. nnt: {60: 30d})'],
    ['an unquoted wildcard', 'p.yaml', 'nnt:\n  60: 30d\n  *: 1y\n', 'p.yaml:3:3: an unquoted * is YAML alias syntax (expected a quoted "*" key)'],
    ['an alias', 'p.yaml', 'nnt:\n  60: &keep 30d\nhistogram:\n  60: *keep\n', 'p.yaml:4:7: histogram.60: the alias *keep is not supported in a policy (expected plain values)'],
    [
      'two documents',
      'p.yaml',
      'nnt:\n  60: 1d\n---\ntext: 1d\n',
      'p.yaml:3:1: not valid YAML: Source contains multiple documents; please use YAML.parseAllDocuments() (expected a map with the keys nnt, histogram and text, e.g. nnt: {60: 30d})',
    ],
    ['tabs as indentation', 'p.yaml', 'nnt:\n\t60: 1d\n', 'p.yaml:2:1: not valid YAML'],
    ['broken JSON, with its line and column', 'p.json', '{\n  "nnt": {"60": "30d",}\n}', 'p.json:2:23: not valid JSON: Expected double-quoted property name (expected a map'],
    [
      'JSON duplicate keys (JSON.parse would keep the last)',
      'p.json',
      '{"nnt": {"60": "30d", "60": "1d"}}',
      'p.json:1:23: nnt.60: nnt span 60 is given twice (first at p.json:1:10) (expected one rule per span)',
    ],
    ['a JSON number as age', 'p.json', '{"text": 90}', 'p.json:1:10: text: "90" has no unit'],
    ['YAML syntax in a .json file', 'p.json', 'text: 90d\n', "p.json: not valid JSON: Unexpected token 'e' (expected a map"],
    ['an unknown extension', 'policy.txt', 'text: 90d\n', 'policy.txt: is neither YAML nor JSON by its name (expected a file ending in .yaml, .yml or .json)'],
  ])('%s', (_case, file, text, message) => {
    const err = failure(() => parsePolicyFile(text, file));
    expect(err.message.startsWith(message)).toBe(true);
    expect(err.code).toBe('invalid_policy');
    expect(err.location.file).toBe(file);
  });

  it('carries the key, the value and hints where a fix is obvious', () => {
    const dup = failure(() => parsePolicyFile('nnt:\n  60: 30d\n  60: 7d\n', 'p.yaml'));
    expect(dup).toMatchObject({ key: 'nnt.60', value: '7d', location: { file: 'p.yaml', line: 3, column: 3 }, hint: 'keep one of them' });
    expect(failure(() => parsePolicyFile('nnt:\n  *: 1y\n', 'p.yaml')).hint).toBe('write "*": 1y (with the quotes)');
    expect(failure(() => parsePolicyFile('nnt: 30d\n', 'p.yaml')).hint).toBe('to keep every nnt span 30d, write nnt: {"*": 30d}');
    expect(failure(() => parsePolicyFile('nnt:\n  60s: 1d\n', 'p.yaml')).hint).toBe('spans are plain seconds: 60');
    expect(failure(() => parsePolicyFile('Text: 1d\n', 'p.yaml')).hint).toBe('keys are lower case: text');
  });
});

describe('--rule', () => {
  it('parses every form of the issue', () => {
    const p = parseRules(['nnt:60=30d', 'nnt:300=1y', 'text=90d', 'histogram:*=30d', ' NNT:1800 = 2y ']);
    expect(p.source).toBe('--rule');
    expect(p.rules.map((r) => [r.type, r.span, r.ageSeconds])).toEqual([
      ['nnt', 60, 2_592_000],
      ['nnt', 300, 31_536_000],
      ['nnt', 1800, 63_072_000],
      ['histogram', '*', 2_592_000],
      ['text', null, 7_776_000],
    ]);
  });

  it.each([
    ['nnt:60', '--rule "nnt:60": has no "=" between the rule and its age (expected <type>:<span>=<age> or text=<age>, e.g. nnt:60=30d, nnt:*=1y, histogram:60=30d, text=90d)'],
    ['raw:60=1d', '--rule "raw:60=1d": "raw" is not a data type (expected <type>:<span>=<age> or text=<age>'],
    ['text:60=90d', '--rule "text:60=90d": text has no spans (expected text=<age>, e.g. text=90d)'],
    ['nnt=30d', '--rule "nnt=30d": nnt needs a span (expected <type>:<span>=<age>'],
    ['nnt:60s=30d', '--rule "nnt:60s=30d": span "60s" has a unit (expected a span in whole seconds (e.g. 60) or "*")'],
    ['nnt:0=30d', '--rule "nnt:0=30d": span 0 is not a span'],
    ['nnt:60=', '--rule "nnt:60=": no age given (expected a number and a unit'],
    ['nnt:60=0d', '--rule "nnt:60=0d": "0d" is zero'],
    ['histogram:*=1.5s', '--rule "histogram:*=1.5s": "1.5s" is not a whole number of seconds'],
  ])('%j is refused', (rule, message) => {
    const err = failure(() => parseRules([rule]));
    expect(err.message.startsWith(message)).toBe(true);
  });

  it('refuses a span given twice, naming both rules, and hints at nnt:*', () => {
    expect(failure(() => parseRules(['nnt:60=30d', 'text=1d', 'nnt:60=30d'])).message).toBe(
      '--rule "nnt:60=30d": nnt span 60 is given twice (first at --rule "nnt:60=30d") (expected one rule per span)',
    );
    expect(failure(() => parseRules(['text=1d', 'text=2d'])).message).toBe('--rule "text=2d": text is given twice (first at --rule "text=1d") (expected one rule per span)');
    expect(failure(() => parseRules(['nnt=30d'])).hint).toBe('nnt:*=30d keeps every nnt span that long');
  });

  it('refuses no rules at all', () => {
    expect(failure(() => parseRules([])).message).toBe('--rule: the policy has no rules (expected at least one rule, e.g. nnt: {60: 30d} or --rule nnt:60=30d)');
  });
});

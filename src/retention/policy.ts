/**
 * A retention policy: which data to keep for how long. One rule per (type, span): numeric and
 * histogram rules name a span in whole seconds or `*` ("every span not listed"); text has no
 * spans. Parsed from a file (policy-file.ts) or from repeatable `--rule` flags (here); both build
 * the same Policy through one builder, so they accept and refuse exactly the same things.
 */
import type { DataType } from '../protocol/index.js';
import { AGE_EXPECTED, checkAge } from './age.js';
import { PolicyError, formatLocation, type PolicyLocation } from './errors.js';

/** Types whose rules name spans. */
export type SpanType = Exclude<DataType, 'text'>;
export const SPAN_TYPES: readonly SpanType[] = ['nnt', 'histogram'];

/** The wildcard span: every span of the type that no other rule lists. */
export const WILDCARD = '*';

export interface PolicyRule {
  type: DataType;
  /** A span in seconds, `*`, or null for text. */
  span: number | typeof WILDCARD | null;
  /** How long to keep the data, in whole seconds. */
  ageSeconds: number;
  /** The age as written (`30d`), for output. */
  age: string;
  /** Where the rule came from, for error messages (`policy.yaml:3:3`, `--rule nnt:60=30d`). */
  origin: string;
}

export interface Policy {
  /** Canonical order: nnt, histogram, text; spans ascending; `*` after the spans of its type. */
  rules: PolicyRule[];
  /** The policy file as named, or `--rule`. */
  source: string;
}

export const SPAN_EXPECTED = 'a span in whole seconds (e.g. 60) or "*"';
/** Largest span accepted, as in the sweep headers' codec. */
const MAX_SPAN = 999_999_999;

/** `nnt:60=30d`, `nnt:*=1y`, `text=90d`: one rule in the `--rule` syntax. */
export function formatRule(rule: Pick<PolicyRule, 'type' | 'span' | 'age'>): string {
  return rule.span === null ? `${rule.type}=${rule.age}` : `${rule.type}:${rule.span}=${rule.age}`;
}

/** The policy in the file's shape (`{nnt: {"60": "30d"}, text: "90d"}`), for output and journals. */
export function policyToObject(policy: Policy): Record<string, string | Record<string, string>> {
  const out: Record<string, string | Record<string, string>> = {};
  for (const r of policy.rules) {
    if (r.span === null) out[r.type] = r.age;
    else ((out[r.type] ??= {}) as Record<string, string>)[String(r.span)] = r.age;
  }
  return out;
}

/** Rules of one type. */
export function rulesOf(policy: Policy, type: DataType): PolicyRule[] {
  return policy.rules.filter((r) => r.type === type);
}

/** The canonical order of rules: nnt, histogram, text; spans ascending; `*` last in its type. */
export function sortRules(rules: PolicyRule[]): PolicyRule[] {
  const order: Record<DataType, number> = { nnt: 0, histogram: 1, text: 2 };
  const spanOrder = (s: PolicyRule['span']): number => (s === null ? 0 : s === WILDCARD ? Number.MAX_SAFE_INTEGER : s);
  return rules.sort((a, b) => order[a.type] - order[b.type] || spanOrder(a.span) - spanOrder(b.span));
}

// ---------------------------------------------------------------- the builder both parsers use

/** Text from a command line or a file, quoted; a long one by its start and length, never echoed whole. */
function clipped(text: string): string {
  return text.length > 80 ? `${JSON.stringify(text.slice(0, 60))}... (${text.length} characters)` : JSON.stringify(text);
}

/** Checks a span key: positive whole seconds, written plainly (no `60s`, `0x3c`, `60.0`). */
export function checkSpanKey(text: string): { ok: true; span: number | typeof WILDCARD } | { ok: false; problem: string; hint?: string } {
  const t = text.trim();
  const shown = clipped(t);
  if (t === WILDCARD) return { ok: true, span: WILDCARD };
  if (/^\d+$/.test(t)) {
    const n = Number(t);
    if (n === 0) return { ok: false, problem: 'span 0 is not a span', hint: 'spans are positive whole seconds' };
    if (n > MAX_SPAN) return { ok: false, problem: `span ${t.length > 20 ? shown : t} is too large` };
    if (t.startsWith('0')) return { ok: false, problem: `span ${shown} has a leading zero`, hint: `write ${n}` };
    return { ok: true, span: n };
  }
  if (/^\d+s$/.test(t)) return { ok: false, problem: `span ${shown} has a unit`, hint: `spans are plain seconds: ${t.slice(0, -1)}` };
  if (/^\d+(m|h|d|ms)$/.test(t)) return { ok: false, problem: `span ${shown} has a unit`, hint: 'spans are plain seconds, e.g. 60 or 300' };
  if (/^-\d/.test(t)) return { ok: false, problem: `span ${shown} is negative` };
  if (/^\d*\.\d+$/.test(t)) return { ok: false, problem: `span ${shown} is not whole seconds` };
  return { ok: false, problem: `${shown} is not a span` };
}

/** What a key means, for "given twice" messages. */
function ruleKey(type: DataType, span: PolicyRule['span']): string {
  return span === null ? type : `${type}.${span}`;
}

/**
 * Collects rules and refuses duplicates; `build()` refuses an empty policy and returns the
 * canonical Policy. Errors name the location of the value at fault.
 */
export class PolicyBuilder {
  private readonly rules = new Map<string, PolicyRule>();
  private readonly source: string;
  constructor(source: string) {
    this.source = source;
  }

  /**
   * Adds one rule at `at` (where its key is); `keyPath` names the key in a file (`nnt.60`), empty for
   * a `--rule` (its location says it all); a bad age is reported at `valueAt`.
   */
  add(type: DataType, span: PolicyRule['span'], ageText: string, at: PolicyLocation, keyPath: string, valueAt: PolicyLocation = at): void {
    const age = checkAge(ageText);
    if (!age.ok) throw new PolicyError(valueAt, keyPath, age.problem, AGE_EXPECTED, { value: ageText, ...(age.hint ? { hint: age.hint } : {}) });
    const key = ruleKey(type, span);
    const earlier = this.rules.get(key);
    if (earlier) {
      const what = span === null ? type : span === WILDCARD ? `${type} "*"` : `${type} span ${span}`;
      throw new PolicyError(at, keyPath, `${what} is given twice (first at ${earlier.origin})`, 'one rule per span', {
        value: ageText,
        hint: 'keep one of them',
      });
    }
    this.rules.set(key, { type, span, ageSeconds: age.seconds, age: ageText.trim(), origin: formatLocation(at) });
  }

  build(at: PolicyLocation, what: string): Policy {
    if (this.rules.size === 0) {
      throw new PolicyError(at, '', `${what} has no rules`, 'at least one rule, e.g. nnt: {60: 30d} or --rule nnt:60=30d');
    }
    return { rules: sortRules([...this.rules.values()]), source: this.source };
  }
}

// ---------------------------------------------------------------- --rule

const RULE_EXPECTED = '<type>:<span>=<age> or text=<age>, e.g. nnt:60=30d, nnt:*=1y, histogram:60=30d, text=90d';

/**
 * Parses repeatable `--rule` values into a Policy. Every error names the rule as typed.
 * (That a policy file and `--rule` are exclusive is the command's check.)
 */
export function parseRules(rules: readonly string[]): Policy {
  const b = new PolicyBuilder('--rule');
  for (const raw of rules) {
    // A rule is short: a long one is shown by its start and length, never echoed whole.
    const at: PolicyLocation = { file: `--rule ${clipped(raw)}` };
    const text = raw.trim();
    const eq = text.indexOf('=');
    if (eq < 0) throw new PolicyError(at, '', 'has no "=" between the rule and its age', RULE_EXPECTED);
    const left = text.slice(0, eq).trim();
    const age = text.slice(eq + 1);
    const colon = left.indexOf(':');
    const typeText = (colon < 0 ? left : left.slice(0, colon)).trim().toLowerCase();
    if (typeText !== 'nnt' && typeText !== 'histogram' && typeText !== 'text') {
      throw new PolicyError(at, '', `${clipped(typeText)} is not a data type`, RULE_EXPECTED, { value: typeText.slice(0, 60), hint: 'types: nnt, histogram, text' });
    }
    if (typeText === 'text') {
      if (colon >= 0) throw new PolicyError(at, '', 'text has no spans', 'text=<age>, e.g. text=90d', { hint: 'write text=90d' });
      b.add('text', null, age, at, '');
      continue;
    }
    if (colon < 0) {
      throw new PolicyError(at, '', `${typeText} needs a span`, RULE_EXPECTED, {
        hint: `${typeText}:*=${age.trim().length <= 20 && age.trim() ? age.trim() : '30d'} keeps every ${typeText} span that long`,
      });
    }
    const span = checkSpanKey(left.slice(colon + 1));
    if (!span.ok) throw new PolicyError(at, '', span.problem, SPAN_EXPECTED, { ...(span.hint ? { hint: span.hint } : {}) });
    b.add(typeText, span.span, age, at, '');
  }
  return b.build({ file: '--rule' }, 'the policy');
}

/**
 * Errors of the retention core. Every one means "nothing was sent": the policy, the plan or a
 * saved run is not usable as given. They carry a stable `code` and a `hint`; cli/ maps them to
 * exit 2 (this module never prints or exits).
 */
import { describeMissingSpan, groupMissingSpans } from '../client/spans.js';
import type { DataType } from '../protocol/index.js';
import { TsnodeError } from '../tsnode-error.js';

export type RetentionErrorCode = 'invalid_age' | 'invalid_policy' | 'unknown_span' | 'unsafe_wildcard' | 'invalid_run_state' | 'edited_run_state';

export class RetentionError extends TsnodeError {
  declare readonly code: RetentionErrorCode;
  constructor(code: RetentionErrorCode, message: string, hint?: string) {
    super(code, message, { hint });
    this.name = 'RetentionError';
  }
}

/** Where a policy value came from: a file position, or one `--rule`. */
export interface PolicyLocation {
  /** The policy file as the user named it, or `--rule`. */
  file: string;
  /** 1-based, when known. */
  line?: number;
  column?: number;
}

export function formatLocation(loc: PolicyLocation): string {
  if (loc.line === undefined) return loc.file;
  return `${loc.file}:${loc.line}${loc.column !== undefined ? `:${loc.column}` : ''}`;
}

/**
 * A policy that cannot be used. The message reads `policy.yaml:3:5: nnt.60: "30x" is not an age
 * (expected ...)`: file, line, column, key, the value and what would be valid.
 */
export class PolicyError extends RetentionError {
  readonly location: PolicyLocation;
  /** Dotted path of the key (`nnt.60`, `text`), empty for the document itself. */
  readonly key: string;
  readonly value: string | undefined;
  readonly expected: string;
  constructor(location: PolicyLocation, key: string, problem: string, expected: string, opts: { value?: string; hint?: string } = {}) {
    super('invalid_policy', `${formatLocation(location)}: ${key ? `${key}: ` : ''}${problem} (expected ${expected})`, opts.hint);
    this.name = 'PolicyError';
    this.location = location;
    this.key = key;
    this.value = opts.value;
    this.expected = expected;
  }
}

/** One span a rule names that a node does not have. */
export interface UnknownSpan {
  node: string;
  type: Exclude<DataType, 'text'>;
  span: number;
  /** The node's spans of that type, and where that list came from. */
  configured: readonly number[];
  source: 'node' | 'profile';
  /** The rule as the user can find it (`--rule "nnt:120=30d"` or `nnt:120=30d (policy.yaml:3:3)`). */
  rule: string;
}

/**
 * Rules name spans some nodes do not have: refused before anything is sent. The message names
 * each distinct problem (a span of a rule) once, with the nodes that lack it and their spans:
 * `nnt span 3600 of nnt:3600=30d (retention.yaml:5:3) is not configured on any of the 4 nodes
 * (their nnt spans: 60, 300)`. `nodeCount` is how many nodes were checked (for "any of the N").
 */
export class UnknownSpanError extends RetentionError {
  readonly problems: readonly UnknownSpan[];
  constructor(problems: readonly UnknownSpan[], nodeCount?: number) {
    const groups = groupMissingSpans(problems.map((p) => ({ ...p, what: `${p.type} span ${p.span} of ${p.rule}` })));
    const shown = groups.slice(0, 5).map((g) => describeMissingSpan(g, nodeCount));
    const more = groups.length > shown.length ? `; and ${groups.length - shown.length} more` : '';
    super('unknown_span', `${shown.join('; ')}${more}`, 'use spans every node has (tsnode nodes shows them), or fix the node list');
    this.name = 'UnknownSpanError';
    this.problems = problems;
  }
}

/**
 * A `*` rule cannot be sent safely: sending it as "every span" would delete data a listed span
 * keeps longer, and the node's spans are not known, so it cannot be expanded to the others.
 */
export class UnsafeWildcardError extends RetentionError {
  readonly type: Exclude<DataType, 'text'>;
  readonly nodes: readonly string[];
  constructor(type: Exclude<DataType, 'text'>, wildcard: string, longer: readonly string[], nodes: readonly string[]) {
    const who = nodes.length > 3 ? `${nodes.slice(0, 3).join(', ')} and ${nodes.length - 3} more` : nodes.join(', ');
    super(
      'unsafe_wildcard',
      `${wildcard} cannot be sent to ${who}: their ${type} spans are not known, so "*" could only be sent as every span, ` +
        `which would also delete what ${longer.join(', ')} keep${longer.length === 1 ? 's' : ''} longer`,
      `let tsnode learn the spans (nodes that answer GET /state, or ${type}_rollups in the profile), or list every ${type} span explicitly instead of "*"`,
    );
    this.name = 'UnsafeWildcardError';
    this.type = type;
    this.nodes = nodes;
  }
}

/**
 * Reading a node's answers: a 2xx body checked against the shape the call expects (anything
 * else is `bad_answer`, in words that say what was expected), and a write's acknowledgement.
 */
import type { z } from 'zod';
import { formatIssues, parseJsonAllowingTrailingCommas } from '../protocol/index.js';
import type * as Schemas from './answer-schemas.js';
import { NodeRequestError } from './errors.js';

export type AnswerSchemas = typeof Schemas;
let loading: Promise<AnswerSchemas> | undefined;

/** The answer schemas, loaded once, on the first answer that needs one (a hand check passed saves loading zod). */
export function answerSchemas(): Promise<AnswerSchemas> {
  return (loading ??= import('./answer-schemas.js'));
}

/**
 * Parses a node's 2xx answer against the schema `pick` chooses. Anything else is `bad_answer`,
 * never "unreachable": the node did answer. `expected` says in words what would have been understood.
 */
export async function parseAnswer<S extends z.ZodType>(
  node: string,
  text: string,
  pick: (schemas: AnswerSchemas) => S,
  what: string,
  expected: string,
  opts: { trailingCommas?: boolean; matches?: (json: unknown) => boolean } = {},
): Promise<z.infer<S>> {
  let json: unknown;
  try {
    json = opts.trailingCommas ? parseJsonAllowingTrailingCommas(text) : JSON.parse(text);
  } catch {
    const shown = text.trim() === '' ? 'an empty body' : JSON.stringify(text.slice(0, 80));
    throw new NodeRequestError(node, 'bad_answer', `${what}: the answer is not JSON (${shown}); expected ${expected}`, {
      retryable: false,
      hint: 'is this address a node of the store, and not a proxy or another service?',
    });
  }
  // A large, frequent answer may come with a hand check of the same shape: when it holds, the value
  // is what the schema (which transforms nothing) would give; otherwise the schema says what is wrong.
  if (opts.matches?.(json)) return json as z.infer<S>;
  const parsed = pick(await answerSchemas()).safeParse(json);
  if (!parsed.success) {
    // A node (or proxy) that answers 200 with its error object: show its own words.
    if (json && typeof json === 'object' && !Array.isArray(json) && typeof (json as { error?: unknown }).error === 'string') {
      const code = (json as { code?: unknown }).code;
      throw new NodeRequestError(
        node,
        'bad_answer',
        `${what}: the node answered with an error: ${(json as { error: string }).error}${typeof code === 'string' ? ` (${code})` : ''}; expected ${expected}`,
        { retryable: false },
      );
    }
    const issues = parsed.error.issues;
    const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : '';
    throw new NodeRequestError(node, 'bad_answer', `${what}: unexpected answer: ${formatIssues(issues.slice(0, 3))}${more}; expected ${expected}`, { retryable: false });
  }
  return parsed.data;
}

/**
 * A write's acknowledgement. Any 2xx means the node took the request. The store's spec answers
 * the `FourPointResponse` (developer.yaml): `records` taken, `updated`, `misdirected` (records
 * whose metric the node says it does not own) and `errors` (records it failed); each count is
 * present only when the answer carried it. The production Go client's test node answers 200 with
 * no body at all, so an answer without counts is an acknowledgement without counts, never a failure.
 */
export interface WriteAck {
  records?: number;
  updated?: number;
  misdirected?: number;
  errors?: number;
}

const ACK_COUNTS = ['records', 'updated', 'misdirected', 'errors'] as const;

/**
 * Reads the counts out of a 2xx write answer: a JSON object gives those of its `records`,
 * `updated`, `misdirected` and `errors` that it holds; an empty body or one with none of them gives
 * `{}`; a count that is not a whole number >= 0 is `bad_answer` (the node claims a count the
 * client cannot read), and so is a JSON object that carries only an `error` (a 2xx that says it failed).
 */
export function writeAck(node: string, text: string): WriteAck {
  if (text.trim() === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return {};
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return {};
  const o = json as Record<string, unknown>;
  if (!ACK_COUNTS.some((k) => k in o)) {
    if (typeof o.error === 'string') {
      throw new NodeRequestError(node, 'bad_answer', `write: the node answered 2xx with an error: ${o.error}; expected an acknowledgement`, { retryable: false });
    }
    return {};
  }
  const ack: WriteAck = {};
  for (const key of ACK_COUNTS) {
    if (!(key in o)) continue;
    const n = o[key];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
      const shown = JSON.stringify(n) ?? String(n);
      throw new NodeRequestError(node, 'bad_answer', `write: the answer's ${key} is ${shown.slice(0, 40)}; expected a whole number >= 0 (or no ${key} member)`, {
        retryable: false,
      });
    }
    ack[key] = n;
  }
  return ack;
}

/** What each answer should look like, for `bad_answer` messages. */
export const STATUS_SHAPE = 'a JSON object with nnt, text and histogram members, each holding string attributes with running "true" or "false"';
export const ROLLUP_SHAPE = 'a JSON array of [seconds, number or null] rows';
export const ROLLUP_ALL_SHAPE = 'a JSON array of [seconds, object of numbers or null] rows';
export const HISTOGRAM_ROWS_SHAPE = 'a JSON array of [seconds, period, {bin: count}] rows';

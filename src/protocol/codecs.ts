/**
 * Wire codecs for times and spans. Internally every time and span is an integer number of
 * milliseconds, so nothing is ever rounded through a float on its way to the wire.
 */
import { TsnodeError } from '../tsnode-error.js';

/** Thrown by the codecs; `value` is the offending input and `expected` says what would have been valid. */
export class CodecError extends TsnodeError {
  declare readonly code: 'invalid_value';
  readonly value: string;
  readonly expected: string;
  constructor(message: string, value: string, expected: string) {
    super('invalid_value', message, { hint: `expected ${expected}` });
    this.name = 'CodecError';
    this.value = value;
    this.expected = expected;
  }
}

const TIMESTAMP_RE = /^(\d{1,15})\.(\d{3})$/;
const BARE_SECONDS_RE = /^\d{1,15}$/;
export const TIMESTAMP_FORMAT = '<seconds>.<3 digits>, e.g. 1529509020.000';

/** Formats epoch milliseconds as the rollup read's `<seconds>.<mmm>` (C's `%lu.%03lu`). */
export function formatTimestamp(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new CodecError(`cannot format ${ms} as a timestamp`, String(ms), 'a non-negative whole number of milliseconds');
  }
  const seconds = Math.floor(ms / 1000);
  return `${seconds}.${String(ms % 1000).padStart(3, '0')}`;
}

export interface TimestampOptions {
  /**
   * Also read a bare integer (`1529509020`) as `.000`, as the production Go client sends it.
   * One, two or four-plus fraction digits stay illegal either way.
   */
  bareSeconds?: boolean;
}

/** Whether a text is a bare integer of seconds (what `bareSeconds` would accept). */
export function isBareSeconds(text: string): boolean {
  return BARE_SECONDS_RE.test(text);
}

/** Parses a strict `<seconds>.<mmm>` timestamp into epoch milliseconds. */
export function parseTimestamp(text: string, opts: TimestampOptions = {}): number {
  const m = TIMESTAMP_RE.exec(text);
  if (m) return Number(m[1]) * 1000 + Number(m[2]);
  if (opts.bareSeconds && BARE_SECONDS_RE.test(text)) return Number(text) * 1000;
  throw new CodecError(`illegal timestamp ${JSON.stringify(text)}`, text, TIMESTAMP_FORMAT);
}

const SPAN_RE = /^(\d{1,12})(s|ms)$/;
export const SPAN_FORMAT = 'a whole number followed by s or ms, e.g. 60s or 60000ms';

/** Parses a wire span (`60s`, `500ms`) into milliseconds; zero is rejected. */
export function parseSpan(text: string): number {
  const m = SPAN_RE.exec(text);
  if (!m) throw new CodecError(`illegal rollup span ${JSON.stringify(text)}`, text, SPAN_FORMAT);
  const ms = m[2] === 's' ? Number(m[1]) * 1000 : Number(m[1]);
  if (ms <= 0) throw new CodecError(`rollup span ${JSON.stringify(text)} must be greater than zero`, text, SPAN_FORMAT);
  return ms;
}

/** Formats a span in milliseconds for the wire: whole seconds as `<n>s`, anything else as `<n>ms`. */
export function formatSpan(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    throw new CodecError(`cannot format ${ms} as a span`, String(ms), 'a positive whole number of milliseconds');
  }
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** Epoch seconds as they appear in a rollup response: a number with a millisecond fraction only when needed. */
export function secondsFromMs(ms: number): number {
  return ms % 1000 === 0 ? ms / 1000 : Number((ms / 1000).toFixed(3));
}

/** Rollup response seconds (possibly fractional) back to integer milliseconds. */
export function msFromSeconds(seconds: number): number {
  return Math.round(seconds * 1000);
}

/** Parses a comma list of whole-second spans (`60,300`), as in sweep headers and `--rollups`. */
export function parseSecondsList(text: string, field: string): number[] {
  const items = text.split(',').map((s) => s.trim());
  return items.map((item) => {
    if (!/^\d{1,9}$/.test(item) || Number(item) === 0) {
      throw new CodecError(
        `${field}: ${JSON.stringify(item === '' ? text : item)} is not a span in seconds`,
        item,
        'a comma list of positive whole numbers of seconds, e.g. 60,300',
      );
    }
    return Number(item);
  });
}

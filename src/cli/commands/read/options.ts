/** `tsnode read`: its flags and their types, for the declaration (command.ts) and the action alike. */
import { DATA_TYPES, ENGINES, ROLLUP_TYPE_ALIASES, ROLLUP_TYPES, type RollupType } from '../../../protocol/constants.js';
import { InvalidValueError } from '../../errors.js';
import { flag, type FlagValues } from '../../flags.js';
import { networkFlags } from '../../network-options.js';
import { didYouMean } from '../../suggest.js';
import { quote } from '../../values.js';

export const READ_KINDS = DATA_TYPES;
export const READ_ENGINES = ENGINES;
export const READ_TYPES = ROLLUP_TYPES;
export type ReadType = RollupType;
export const READ_TYPE_ALIASES = ROLLUP_TYPE_ALIASES;
export const READ_OUTPUTS = ['table', 'json', 'csv', 'chart'] as const;

/** `--type`: a rollup type or one of its aliases (`derivative` = `derive`), any letter case. */
export function parseRollupType(text: string, field: string): ReadType {
  const t = text.trim().toLowerCase();
  const type = (READ_TYPES as readonly string[]).includes(t) ? (t as ReadType) : READ_TYPE_ALIASES[t];
  if (type) return type;
  throw new InvalidValueError(
    field,
    text,
    `${quote(text)} is not a rollup type`,
    didYouMean(text.trim(), READ_TYPES) ?? `use one of: ${READ_TYPES.join(', ')} (aliases: ${Object.keys(READ_TYPE_ALIASES).join(', ')})`,
  );
}

const SPAN_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
export const SPAN_FORMS = 'a number with a unit: 500ms, 60000ms, 60s, 300s, 5m, 1h, 1d';

/** Parses --span (`300s`, `60000ms`, `5m`, `1h`, `1d`, `1.5s`) into whole milliseconds. A unit is required. */
export function parseSpanFlag(text: string, field = '--span'): number {
  const t = text.trim();
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(t);
  if (!m) {
    const hint = /^0+(\.0+)?$/.test(t)
      ? 'a span must be greater than zero, e.g. 60s'
      : /^\d+(\.\d+)?$/.test(t)
        ? `add a unit: ${t}s for seconds or ${t}ms for milliseconds`
        : `use ${SPAN_FORMS}`;
    throw new InvalidValueError(field, text, `${JSON.stringify(text)} is not a span`, hint);
  }
  const exact = Number(m[1]) * SPAN_UNITS[m[2]!]!;
  const ms = Math.round(exact);
  if (ms <= 0) throw new InvalidValueError(field, text, `${JSON.stringify(text)} must be at least 1ms`, `use ${SPAN_FORMS}`);
  if (Math.abs(exact - ms) > 1e-6) throw new InvalidValueError(field, text, `${JSON.stringify(text)} is not a whole number of milliseconds`, `use ${SPAN_FORMS}`);
  return ms;
}

/** `--limit`: a row count >= 1, or `none`. */
export function parseRowLimit(text: string, field: string): number | 'none' {
  const l = text.trim().toLowerCase();
  if (l === 'none') return 'none';
  if (/^\d+$/.test(l) && Number(l) >= 1 && Number.isSafeInteger(Number(l))) return Number(l);
  throw new InvalidValueError(field, text, `${quote(text)} is not a row limit`, 'a whole number >= 1, or none');
}

/** `--tolerance`: a relative difference from 0 (exact) up to but below 1. */
export function parseTolerance(text: string, field: string): number {
  const t = text.trim();
  const n = /^(\d+(\.\d*)?|\.\d+)(e-?\d+)?$/i.test(t) ? Number(t) : NaN;
  if (!(n >= 0 && n < 1)) throw new InvalidValueError(field, text, `${quote(text)} is not a relative difference`, 'a number from 0 (exact) up to but below 1, e.g. 1e-9');
  return n;
}

export function readFlags() {
  return {
    kind: flag.choice('--kind <kind>', 'what to read: nnt (numeric rollups), text (GET /read) or histogram (GET /histogram, with --period)', READ_KINDS, { default: 'nnt' }),
    start: flag.string('--start <time>', 'first bucket: epoch, epoch.mmm, ISO-8601 or an age like 6h (default: 24h before --end)', { complete: { kind: 'none' } }),
    end: flag.string('--end <time>', 'end of the range, exclusive (default: now)', { complete: { kind: 'none' } }),
    span: flag.parsed('--span <span>', 'numeric: bucket width, 500ms, 60000ms, 60s, 300s, 5m, 1h, 1d (default: chosen for at most ~300 rows)', parseSpanFlag, {
      complete: { kind: 'none' },
    }),
    // No defaults in the table: they apply to numeric reads only, and a text read given one is refused.
    engine: flag.choice('--engine <engine>', 'numeric: data source: dispatch (default), nnt (rolled-up only), recalc (raw only)', READ_ENGINES, { ignoreCase: true }),
    type: flag.parsed('--type <type>', 'numeric: value to read: average (default), count, derive, counter, *_stddev, derive2, counter2, ..., or all', parseRollupType),
    period: flag.span('--period <span>', 'histogram: the histogram period to read, one the nodes keep (60, 5m)', { complete: { kind: 'none' } }),
    node: flag.string('--node <url>', 'read from exactly this node, owner or not (instead of --nodes)', { complete: { kind: 'none' } }),
    compare: flag.boolean('--compare', 'numeric: read from every node in the list (on a ring: every owner of the metric) and show a side-by-side table; exit 3 when they differ'),
    tolerance: flag.parsed('--tolerance <fraction>', 'with --compare: values within this relative difference count as equal, e.g. 1e-9 (default: 0, exact)', parseTolerance, {
      complete: { kind: 'none' },
    }),
    limit: flag.parsed('--limit <n|none>', "numeric: ask the node for at most n rows (x-snowth-advisory-limit); none lifts a production node's cap", parseRowLimit, {
      complete: { kind: 'values', values: ['none'] },
    }),
    output: flag.output(READ_OUTPUTS),
    ...networkFlags(),
  };
}
export type ReadOptions = FlagValues<ReturnType<typeof readFlags>>;

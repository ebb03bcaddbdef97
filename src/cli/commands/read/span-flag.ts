/**
 * `--span` of `tsnode read`: a rollup span with a unit, in whole milliseconds. Kept apart from
 * span.ts (which needs the protocol's limits) so the command's declaration loads nothing heavy.
 */
import { InvalidValueError } from '../../errors.js';

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


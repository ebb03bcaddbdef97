/**
 * The JSON vocabulary every command's `--output json` uses (docs/cli-conventions.md#json), in one
 * place so two commands cannot spell one concept two ways: snake_case keys, a time as epoch
 * seconds beside its ISO string, spans as a list of numbers (null for "all spans"), a failure as
 * `{ code, message }`.
 */
import { isoTime } from '../time.js';

/**
 * A time under `key` (epoch seconds, with a fraction when it has milliseconds) and `key_iso`;
 * nothing when the time is unknown.
 */
export function timeFields(key: string, epochMs: number | undefined): Record<string, number | string> {
  if (epochMs === undefined) return {};
  return { [key]: epochMs / 1000, [`${key}_iso`]: isoTime(epochMs) };
}

/**
 * Spans as a node's status writes them (`"all"`, `"60,300"`) as JSON: `null` for all spans, else
 * the numbers; `undefined` when the text is neither (the caller keeps the text as it came).
 */
export function spansFromText(text: string): number[] | null | undefined {
  const t = text.trim();
  if (t === 'all') return null;
  const items = t.split(',').map((x) => x.trim());
  if (items.length === 0 || items.some((x) => !/^\d{1,12}$/.test(x))) return undefined;
  return items.map(Number);
}

/** Spans under `key`: `null` for all, the numbers, or, for text that is neither, `<key>_text` with it as it came. */
export function spanFields(key: string, text: string | undefined): Record<string, number[] | null | string> {
  if (text === undefined) return {};
  const spans = spansFromText(text);
  return spans === undefined ? { [`${key}_text`]: text } : { [key]: spans };
}

/** A per-node failure: a stable code and the message. */
export function errorJson(code: string, message: string): { code: string; message: string } {
  return { code, message };
}

/**
 * The value of the special tag `__activity` in its hyphen form, `<start>-<end>`: epoch seconds
 * (decimals allowed), both ends inclusive; an end left out means the beginning or the end of time
 * (`1` as the start means the beginning too). The colon form (`now - 1w:-1d`) is refused: its
 * relative times would make a query mean different things on different nodes and at different
 * moments of one run.
 */
export interface ActivityRange {
  /** Epoch seconds, inclusive; -Infinity for the beginning of time. */
  start: number;
  /** Epoch seconds, inclusive; Infinity for the end of time. */
  end: number;
}

const SECONDS = /^\d+(\.\d+)?$/;

export function parseActivity(value: string): ActivityRange {
  if (value.includes(':')) {
    throw new Error(`__activity '${value}': only the hyphen form <start>-<end> (epoch seconds) is supported, not the colon form`);
  }
  const dash = value.indexOf('-');
  if (dash < 0 || value.indexOf('-', dash + 1) >= 0) throw new Error(`__activity '${value}': expected <start>-<end> in epoch seconds (either may be left out)`);
  const [a, b] = [value.slice(0, dash), value.slice(dash + 1)];
  for (const part of [a, b]) {
    if (part !== '' && !SECONDS.test(part)) throw new Error(`__activity '${value}': '${part}' is not epoch seconds`);
  }
  const start = a === '' || Number(a) === 1 ? -Infinity : Number(a);
  const end = b === '' ? Infinity : Number(b);
  if (start > end) throw new Error(`__activity '${value}': the start is after the end`);
  return { start, end };
}
